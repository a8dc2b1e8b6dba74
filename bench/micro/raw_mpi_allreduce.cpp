// The baseline for bench/mpi-fidelity and bench/harness-overhead: the plainest
// timed MPI_Allreduce loop (float sum), timed the way nccl-tests times one (barrier, wall clock
// around -n back-to-back calls, per-rank mean combined by the mean across ranks). Prints one JSON
// object per size and placement. PLACEMENT: out (default, out of place), in (MPI_IN_PLACE) or
// both (out of place, then in place, at every size, as commcert sweeps them).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 5) {
    if (rank == 0)
      std::fprintf(stderr, "usage: %s MIN_BYTES MAX_BYTES ITERATIONS WARMUP [out|in|both]\n",
                   argv[0]);
    MPI_Finalize();
    return 2;
  }
  const long long min_bytes = std::atoll(argv[1]);
  const long long max_bytes = std::atoll(argv[2]);
  const int iterations = std::atoi(argv[3]);
  const int warmup = std::atoi(argv[4]);
  const char* placement = argc > 5 ? argv[5] : "out";
  const bool out_of_place = std::strcmp(placement, "in") != 0;
  const bool in_place = std::strcmp(placement, "in") == 0 || std::strcmp(placement, "both") == 0;
  // Buffers for the largest size, allocated once and reused for every size, as nccl-tests and
  // commcert allocate them: later allocations in a process can perform differently.
  std::vector<float> send(static_cast<std::size_t>(max_bytes / 4), 1.0F);
  std::vector<float> receive(static_cast<std::size_t>(max_bytes / 4), 0.0F);
  for (long long bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const auto count = static_cast<int>(bytes / 4);
    for (const bool place : {false, true}) {
      if ((place && !in_place) || (!place && !out_of_place)) continue;
      // In place the buffer is summed into itself: start from zeros so it stays finite.
      if (place) std::memset(receive.data(), 0, static_cast<std::size_t>(bytes));
      const void* input = place ? MPI_IN_PLACE : send.data();
      for (int i = 0; i < warmup; ++i) {
        MPI_Allreduce(input, receive.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      for (int i = 0; i < iterations; ++i) {
        MPI_Allreduce(input, receive.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      }
      double seconds = (MPI_Wtime() - start) / iterations;
      double total = 0;
      MPI_Reduce(&seconds, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0) {
        const double mean = total / size;
        const double busbw = static_cast<double>(bytes) / mean * 2.0 * (size - 1) / size;
        std::printf(
            "{\"bytes\": %lld, \"in_place\": %s, \"time_s\": %.9g, \"busbw_bytes_per_s\": %.9g}\n",
            bytes, place ? "true" : "false", mean, busbw);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
