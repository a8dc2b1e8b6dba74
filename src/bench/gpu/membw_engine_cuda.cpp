#include <algorithm>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "bench/gpu/cuda_support.hpp"
#include "bench/gpu/numa_binding.hpp"
#include "bench/membw_engine.hpp"
#include "bench/throughput.hpp"
#include "health/pci_address.hpp"
#include "kernels/membw_kernels.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kTwoMiB = 2ULL << 20;

// Times `iterations` samples of `operation` (one launch or copy each) after `warmup` untimed
// ones; returns each sample's seconds.
template <typename Operation>
std::vector<double> time_samples(cudaStream_t stream, int warmup, int iterations,
                                 const Deadline& deadline, const std::string& what,
                                 Operation operation) {
  for (int i = 0; i < warmup; ++i)
    operation();
  COMMCERT_CHECK_CUDA(cudaGetLastError(), what);
  std::vector<CudaEvent> events(static_cast<std::size_t>(iterations) + 1);
  events[0].record(stream);
  for (int i = 0; i < iterations; ++i) {
    operation();
    events[static_cast<std::size_t>(i) + 1].record(stream);
  }
  COMMCERT_CHECK_CUDA(cudaGetLastError(), what);
  wait_for(events.back(), deadline, what);
  std::vector<double> seconds;
  for (int i = 0; i < iterations; ++i) {
    seconds.push_back(elapsed_seconds(events[static_cast<std::size_t>(i)],
                                      events[static_cast<std::size_t>(i) + 1]));
  }
  return seconds;
}

// Steps of one GPU's work, for progress.
constexpr int kBandwidthSteps = 4;

class DeviceMemoryTest {
 public:
  DeviceMemoryTest(const MembwSettings& s, const GpuDescription& gpu, MembwOutcome& out,
                   std::atomic<std::size_t>& steps_done)
      : s_(s), gpu_(gpu), out_(out), steps_done_(steps_done) {}

  void run() {
    // The stream belongs to the current device: create it only once this thread has selected the
    // GPU (a new thread starts on device 0, and work on GPU N's buffers through a device-0 stream
    // fails with "invalid resource handle").
    COMMCERT_CHECK_CUDA(cudaSetDevice(gpu_.cuda_device));
    stream_.emplace();
    bandwidth();
    if (s_.memtest_fraction > 0) integrity();
  }

 private:
  [[nodiscard]] Deadline deadline() const { return Deadline::after_seconds(s_.timeout_s); }

  void bandwidth() {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    COMMCERT_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
    // Two buffers; leave room on a small GPU. A multiple of 2 MiB keeps vectors aligned.
    std::uint64_t bytes = std::min<std::uint64_t>(s_.buffer_bytes, free_bytes / 4);
    bytes -= bytes % kTwoMiB;
    if (bytes == 0) throw RuntimeFailure("not enough free device memory for the bandwidth buffers");
    out_.buffer_bytes = bytes;
    DeviceMemory src(bytes);
    DeviceMemory dst(bytes);
    DeviceMemory sink(sizeof(unsigned long long));
    const cudaStream_t st = stream_->get();
    const int sms = gpu_.sm_count;
    enqueue_write(src.get(), bytes, 0x5a5a5a5a5a5a5a5aULL, sms, st);
    enqueue_write(dst.get(), bytes, 0, sms, st);
    const double b = static_cast<double>(bytes);

    // The reference first. On an H200 our copy kernel moved 4.02 TB/s over buffers that no
    // cudaMemcpy had copied yet and 4.05 once one had, in every repetition, and a second of GPU
    // warm-up beforehand changed nothing (docs/gpu-results.md). In this order the kernel and the
    // reference see the buffers in the same state.
    const auto memcpy =
        time_samples(st, s_.warmup, s_.iterations, deadline(), "cudaMemcpyAsync D2D", [&] {
          COMMCERT_CHECK_CUDA(
              cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, st));
        });
    out_.memcpy_d2d_bytes_per_s = median_bandwidth(memcpy, 2 * b);
    ++steps_done_;

    const auto read = time_samples(st, s_.warmup, s_.iterations, deadline(), "read kernel", [&] {
      enqueue_read(src.get(), bytes, sink.as<unsigned long long>(), sms, st);
    });
    out_.read_bytes_per_s = median_bandwidth(read, b);
    ++steps_done_;
    const auto write = time_samples(st, s_.warmup, s_.iterations, deadline(), "write kernel", [&] {
      enqueue_write(dst.get(), bytes, 0xa5a5a5a5a5a5a5a5ULL, sms, st);
    });
    out_.write_bytes_per_s = median_bandwidth(write, b);
    ++steps_done_;
    // The best of the copy kernel's launch shapes: none leads on every GPU.
    for (const CopyShape& shape : kCopyShapes) {
      const auto copy = time_samples(st, s_.warmup, s_.iterations, deadline(), "copy kernel", [&] {
        enqueue_copy(dst.get(), src.get(), bytes, sms, st, shape);
      });
      const auto bandwidth = median_bandwidth(copy, 2 * b);
      if (bandwidth && (!out_.copy_bytes_per_s || *bandwidth > *out_.copy_bytes_per_s)) {
        out_.copy_bytes_per_s = bandwidth;
      }
    }
    ++steps_done_;
  }

  void integrity() {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    COMMCERT_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
    std::uint64_t bytes =
        static_cast<std::uint64_t>(static_cast<double>(free_bytes) * s_.memtest_fraction);
    DeviceMemory region;
    // The driver may not hand out the last few percent in one piece: shrink until it does.
    for (int attempt = 0; attempt < 20 && bytes >= kTwoMiB; ++attempt) {
      bytes -= bytes % kTwoMiB;
      void* data = nullptr;
      if (cudaMalloc(&data, bytes) == cudaSuccess) {
        cudaFree(data);
        region = DeviceMemory(bytes);
        break;
      }
      cudaGetLastError();
      bytes = bytes / 20 * 19;
    }
    if (!region.get())
      throw RuntimeFailure("could not allocate device memory for the pattern test");
    DeviceMemory log_memory(sizeof(MemoryErrorLog));
    const cudaStream_t st = stream_->get();
    COMMCERT_CHECK_CUDA(cudaMemsetAsync(log_memory.get(), 0, sizeof(MemoryErrorLog), st));
    const std::uint64_t words = bytes / 8;
    MemoryIntegrity integrity;
    integrity.bytes_tested = words * 8;
    for (int p = 0; p < kMemoryPatternCount; ++p) {
      const auto pattern = static_cast<MemoryPattern>(p);
      enqueue_pattern_fill(region.get(), words, pattern, s_.seed, gpu_.sm_count, st);
      enqueue_pattern_verify(region.get(), words, pattern, s_.seed, log_memory.as<MemoryErrorLog>(),
                             gpu_.sm_count, st);
      COMMCERT_CHECK_CUDA(cudaGetLastError());
      drain(st, deadline(), fmt::format("pattern test ({})", memory_pattern_name(pattern)));
      integrity.patterns.emplace_back(memory_pattern_name(pattern));
      ++steps_done_;
    }
    MemoryErrorLog log{};
    COMMCERT_CHECK_CUDA(cudaMemcpy(&log, log_memory.get(), sizeof(log), cudaMemcpyDeviceToHost));
    integrity.errors = log.count;
    const auto kept = std::min<unsigned long long>(log.count, kMemoryErrorSlots);
    for (unsigned long long i = 0; i < kept; ++i) {
      const MemoryErrorEntry& e = log.first[i];
      integrity.first_errors.push_back(
          {e.offset, e.expected, e.actual,
           memory_pattern_name(static_cast<MemoryPattern>(e.pattern))});
    }
    // Atomics fill the slots in arrival order; list them by address.
    std::sort(integrity.first_errors.begin(), integrity.first_errors.end(),
              [](const MemoryError& a, const MemoryError& b) { return a.offset < b.offset; });
    out_.integrity = std::move(integrity);
  }

  const MembwSettings& s_;
  const GpuDescription& gpu_;
  MembwOutcome& out_;
  std::atomic<std::size_t>& steps_done_;
  std::optional<CudaStream> stream_;  // created in run(), on the GPU under test
};

}  // namespace

MembwRun measure_device_memory(const MembwSettings& s, const std::vector<GpuDescription>& gpus,
                               const std::function<void(double)>& progress) {
  // What the threads use is theirs: an abandoned thread outlives this call.
  auto settings = std::make_shared<MembwSettings>(s);
  auto described = std::make_shared<std::vector<GpuDescription>>(gpus);
  std::vector<MembwOutcome> seeds(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i)
    seeds[i].gpu = gpus[i].identity;
  GpuWorkerPool<MembwOutcome> pool(
      std::move(seeds),
      [settings, described](std::size_t i, MembwOutcome& out, std::atomic<std::size_t>& steps) {
        DeviceMemoryTest(*settings, (*described)[i], out, steps).run();
      },
      [](MembwOutcome& out, const std::exception& error) {
        out.status = dynamic_cast<const DeviceTimeout*>(&error) != nullptr ? RecordStatus::kTimeout
                                                                           : RecordStatus::kError;
        out.reason = fmt::format("GPU {}: {}", out.gpu.index, error.what());
      });
  const int steps_per_gpu = kBandwidthSteps + (s.memtest_fraction > 0 ? kMemoryPatternCount : 0);
  const double total = static_cast<double>(steps_per_gpu) * static_cast<double>(gpus.size());
  // Each step is bounded by the timeout; a thread past all of them is stuck in the driver.
  WorkerPatience patience;
  patience.give_up = Deadline::after_seconds((steps_per_gpu + 2) * s.timeout_s);
  (void)pool.wait(patience, [&](std::size_t steps) {
    if (progress) progress(total > 0 ? static_cast<double>(steps) / total : 1.0);
  });
  return pool.collect([](const MembwOutcome& seed, std::size_t /*steps*/) {
    MembwOutcome stuck;
    stuck.gpu = seed.gpu;
    stuck.status = RecordStatus::kTimeout;
    stuck.reason = fmt::format("GPU {}: the memory test thread did not return within the timeout",
                               stuck.gpu.index);
    return stuck;
  });
}

HostTransfer measure_host_transfer(const MembwSettings& s, const GpuDescription& gpu) {
  HostTransfer result;
  result.numa_node = pci_numa_node(s.sysfs_root, gpu.identity.pci_bus_id);
  COMMCERT_CHECK_CUDA(cudaSetDevice(gpu.cuda_device));
  // Pages of a pinned buffer are placed by the allocating thread's NUMA policy: allocate (and
  // copy) from the GPU's own node, as nvbandwidth does.
  NumaBinding binding(s.sysfs_root, result.numa_node);
  const std::uint64_t bytes = s.host_bytes - s.host_bytes % 16;
  PinnedMemory host(bytes);
  DeviceMemory device(bytes);
  CudaStream stream;
  const Deadline deadline = Deadline::after_seconds(s.timeout_s);
  const double b = static_cast<double>(bytes);
  const auto h2d =
      time_samples(stream.get(), 2, s.host_iterations, deadline, "host-to-device copy", [&] {
        COMMCERT_CHECK_CUDA(
            cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream.get()));
      });
  result.h2d_bytes_per_s = median_bandwidth(h2d, b);
  const auto d2h =
      time_samples(stream.get(), 2, s.host_iterations, deadline, "device-to-host copy", [&] {
        COMMCERT_CHECK_CUDA(
            cudaMemcpyAsync(host.get(), device.get(), bytes, cudaMemcpyDeviceToHost, stream.get()));
      });
  result.d2h_bytes_per_s = median_bandwidth(d2h, b);
  result.pinned = true;
  return result;
}

}  // namespace commcert
