// The baseline for scripts/bench/harness-overhead: the plainest timed MPI_Allreduce loop, timed
// the way nccl-tests times one (barrier, wall clock around -n back-to-back calls, per-rank mean
// combined by the mean across ranks). Prints one JSON object per size.

#include <cstdio>
#include <cstdlib>
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
      std::fprintf(stderr, "usage: %s MIN_BYTES MAX_BYTES ITERATIONS WARMUP\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const long long min_bytes = std::atoll(argv[1]);
  const long long max_bytes = std::atoll(argv[2]);
  const int iterations = std::atoi(argv[3]);
  const int warmup = std::atoi(argv[4]);
  // Buffers for the largest size, allocated once and reused for every size, as nccl-tests and
  // commcert allocate them: later allocations in a process can perform differently.
  std::vector<float> send(static_cast<std::size_t>(max_bytes / 4), 1.0F);
  std::vector<float> receive(static_cast<std::size_t>(max_bytes / 4), 0.0F);
  for (long long bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const auto count = static_cast<int>(bytes / 4);
    for (int i = 0; i < warmup; ++i) {
      MPI_Allreduce(send.data(), receive.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) {
      MPI_Allreduce(send.data(), receive.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double seconds = (MPI_Wtime() - start) / iterations;
    double total = 0;
    MPI_Reduce(&seconds, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double mean = total / size;
      const double busbw = static_cast<double>(bytes) / mean * 2.0 * (size - 1) / size;
      std::printf("{\"bytes\": %lld, \"time_s\": %.9g, \"busbw_bytes_per_s\": %.9g}\n", bytes, mean,
                  busbw);
    }
  }
  MPI_Finalize();
  return 0;
}
