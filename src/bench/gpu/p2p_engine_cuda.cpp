#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "bench/gpu/cuda_support.hpp"
#include "bench/gpu/numa_binding.hpp"
#include "bench/gpu_worker_pool.hpp"
#include "bench/p2p_engine.hpp"
#include "kernels/membw_kernels.hpp"
#include "kernels/p2p_kernels.hpp"

namespace commcert {
namespace {

// What one GPU keeps for every test: its stream, copy buffers and the pointer chase's state.
struct GpuState {
  std::optional<CudaStream> stream;
  DeviceMemory src;
  DeviceMemory dst;
  DeviceMemory chase;         // the chain other GPUs (and this one) chase through
  DeviceMemory chase_cursor;  // where this GPU's chase stands (one 8-byte address)
};

std::string describe(const P2pEndpoint& end) {
  if (end.gpu) return fmt::format("GPU position {}", *end.gpu);
  return end.numa_node ? fmt::format("host (NUMA node {})", *end.numa_node) : "host";
}

class P2pBench {
 public:
  P2pBench(const P2pSettings& s, const std::vector<GpuDescription>& gpus,
           const std::vector<std::vector<bool>>& peer_access)
      : s_(s), gpus_(gpus), state_(gpus.size()), gate_(sizeof(SpinGate)) {
    for (std::size_t a = 0; a < gpus_.size(); ++a) {
      select(static_cast<int>(a));
      GpuState& g = state_[a];
      g.stream.emplace();
      g.src = DeviceMemory(s_.bytes);
      g.dst = DeviceMemory(s_.bytes);
      COMMCERT_CHECK_CUDA(cudaMemset(g.src.get(), 0x5a, s_.bytes));
      COMMCERT_CHECK_CUDA(cudaMemset(g.dst.get(), 0, s_.bytes));
      g.chase_cursor = DeviceMemory(sizeof(std::uint64_t));
      for (std::size_t b = 0; b < gpus_.size(); ++b) {
        if (a == b || !peer_access[a][b]) continue;
        const cudaError_t enabled = cudaDeviceEnablePeerAccess(gpus_[b].cuda_device, 0);
        if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();
          continue;
        }
        COMMCERT_CHECK_CUDA(enabled, fmt::format("enabling peer access from GPU {} to GPU {}",
                                                 gpus_[a].identity.index, gpus_[b].identity.index));
      }
      load_kernels(static_cast<int>(a));
    }
  }

  std::vector<std::vector<double>> run(const P2pTest& test) {
    const auto streams = static_cast<int>(test.streams.size());
    const bool chase = test.method == P2pMethod::kPointerChase;
    if (chase) prepare_chase(test.streams.front());
    // Nothing that may wait on the GPU happens once a spin kernel holds it: host buffers first.
    for (const P2pStream& stream : test.streams) {
      if (stream.src.is_host()) (void)host_buffer(stream.src.numa_node);
      if (stream.dst.is_host()) (void)host_buffer(stream.dst.numa_node);
    }
    const int per_sample = chase ? 1 : s_.copies_per_sample;
    std::vector<CudaEvent> starts;
    std::vector<CudaEvent> stops;
    for (const P2pStream& stream : test.streams) {
      select(stream.device);
      starts.emplace_back();
      stops.emplace_back();
    }
    const auto queue = plan_sample_queue(streams, per_sample);
    auto* gate = gate_.as<SpinGate>();
    const auto spin_timeout_ns = static_cast<std::uint64_t>(s_.timeout_s * 1e9);
    std::vector<std::vector<double>> samples(test.streams.size());
    for (int sample = 0; sample < s_.warmup + s_.iterations; ++sample) {
      std::atomic_ref<int>(gate->release).store(0);
      std::atomic_ref<int>(gate->gave_up).store(0);
      for (const QueueStep& step : queue) {
        if (step.kind == QueueStep::Kind::kRelease) {
          std::atomic_ref<int>(gate->release).store(1);
          continue;
        }
        const auto i = static_cast<std::size_t>(step.stream);
        const P2pStream& stream = test.streams[i];
        select(stream.device);
        const cudaStream_t st = stream_of(stream.device);
        switch (step.kind) {
          case QueueStep::Kind::kSpin:
            enqueue_spin(gate, spin_timeout_ns, st);
            break;
          case QueueStep::Kind::kStart:
            starts[i].record(st);
            break;
          case QueueStep::Kind::kCopy:
            enqueue_work(test, stream, st);
            break;
          case QueueStep::Kind::kStop:
            stops[i].record(st);
            break;
          case QueueStep::Kind::kRelease:
            break;
        }
      }
      COMMCERT_CHECK_CUDA(cudaGetLastError(), "queueing a sample");
      const Deadline deadline = Deadline::after_seconds(s_.timeout_s);
      for (std::size_t i = 0; i < stops.size(); ++i) {
        wait_for(stops[i], deadline,
                 fmt::format("{} {} -> {}", test.method ? name_of(*test.method) : "copy",
                             describe(test.streams[i].src), describe(test.streams[i].dst)));
      }
      if (std::atomic_ref<int>(gate->gave_up).load() != 0) {
        throw RuntimeFailure(
            "a spin kernel stopped waiting before every copy was queued (the timed interval "
            "would include launch gaps)");
      }
      if (sample < s_.warmup) continue;
      for (std::size_t i = 0; i < stops.size(); ++i)
        samples[i].push_back(elapsed_seconds(starts[i], stops[i]));
    }
    return samples;
  }

 private:
  void select(int position) const {
    COMMCERT_CHECK_CUDA(cudaSetDevice(gpus_[static_cast<std::size_t>(position)].cuda_device));
  }
  [[nodiscard]] cudaStream_t stream_of(int position) const {
    return state_[static_cast<std::size_t>(position)].stream->get();
  }
  [[nodiscard]] GpuState& gpu(int position) { return state_[static_cast<std::size_t>(position)]; }

  // Runs every kernel once, released at once. With lazy module loading (CUDA 12's default) the
  // first launch of a kernel loads it, which can wait for the running spin kernel, which waits for
  // the host: that first launch must not happen behind a spin kernel.
  void load_kernels(int position) {
    GpuState& g = gpu(position);
    auto* gate = gate_.as<SpinGate>();
    std::atomic_ref<int>(gate->release).store(1);
    const cudaStream_t st = g.stream->get();
    enqueue_spin(gate, 1'000'000'000ULL, st);
    enqueue_copy(g.dst.get(), g.src.get(), 4096, gpus_[static_cast<std::size_t>(position)].sm_count,
                 st);
    enqueue_pointer_chase(g.chase_cursor.as<std::uint64_t>(), 0, st);
    COMMCERT_CHECK_CUDA(cudaGetLastError(), "loading the p2p kernels");
    drain(st, Deadline::after_seconds(s_.timeout_s), "loading the p2p kernels");
  }

  // Pinned host memory whose pages are on `node` (allocated and first touched by this thread
  // bound to the node's CPUs); one buffer per node, kept for later tests.
  void* host_buffer(std::optional<int> node) {
    const int key = node.value_or(-1);
    auto found = host_.find(key);
    if (found == host_.end()) {
      NumaBinding binding(s_.sysfs_root, node);
      auto memory = std::make_unique<PinnedMemory>(s_.bytes);
      std::memset(memory->get(), 0x3c, s_.bytes);
      found = host_.emplace(key, std::move(memory)).first;
    }
    return found->second->get();
  }

  // Builds the chain in the source GPU's memory (once) and puts the chasing GPU's cursor at its
  // start.
  void prepare_chase(const P2pStream& stream) {
    const int owner = *stream.src.gpu;
    GpuState& g = gpu(owner);
    const std::uint64_t slots64 = s_.chase_bytes / s_.chase_stride;
    const auto slots = static_cast<std::uint32_t>(std::min<std::uint64_t>(slots64, 1U << 30));
    if (!g.chase.get()) {
      select(owner);
      g.chase = DeviceMemory(static_cast<std::size_t>(slots) * s_.chase_stride);
      const auto base = reinterpret_cast<std::uint64_t>(g.chase.get());
      const std::vector<std::uint32_t> next = pointer_chase_cycle(slots, s_.seed);
      const std::size_t words_per_slot = s_.chase_stride / sizeof(std::uint64_t);
      std::vector<std::uint64_t> image(static_cast<std::size_t>(slots) * words_per_slot, 0);
      for (std::uint32_t i = 0; i < slots; ++i)
        image[i * words_per_slot] = base + static_cast<std::uint64_t>(next[i]) * s_.chase_stride;
      COMMCERT_CHECK_CUDA(cudaMemcpy(g.chase.get(), image.data(),
                                     image.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
    }
    const auto start = reinterpret_cast<std::uint64_t>(g.chase.get());
    select(stream.device);
    COMMCERT_CHECK_CUDA(cudaMemcpy(gpu(stream.device).chase_cursor.get(), &start, sizeof(start),
                                   cudaMemcpyHostToDevice));
  }

  void enqueue_work(const P2pTest& test, const P2pStream& stream, cudaStream_t st) {
    switch (*test.method) {
      case P2pMethod::kPointerChase:
        enqueue_pointer_chase(gpu(stream.device).chase_cursor.as<std::uint64_t>(),
                              static_cast<std::uint64_t>(s_.chase_loads), st);
        return;
      case P2pMethod::kSmCopy:
        enqueue_copy(gpu(*stream.dst.gpu).dst.get(), gpu(*stream.src.gpu).src.get(), s_.bytes,
                     gpus_[static_cast<std::size_t>(stream.device)].sm_count, st);
        return;
      case P2pMethod::kCopyEngine:
        break;
    }
    if (stream.src.is_host()) {
      COMMCERT_CHECK_CUDA(cudaMemcpyAsync(gpu(*stream.dst.gpu).dst.get(),
                                          host_buffer(stream.src.numa_node), s_.bytes,
                                          cudaMemcpyHostToDevice, st));
    } else if (stream.dst.is_host()) {
      COMMCERT_CHECK_CUDA(cudaMemcpyAsync(host_buffer(stream.dst.numa_node),
                                          gpu(*stream.src.gpu).src.get(), s_.bytes,
                                          cudaMemcpyDeviceToHost, st));
    } else if (*stream.src.gpu == *stream.dst.gpu) {
      COMMCERT_CHECK_CUDA(cudaMemcpyAsync(gpu(*stream.dst.gpu).dst.get(),
                                          gpu(*stream.src.gpu).src.get(), s_.bytes,
                                          cudaMemcpyDeviceToDevice, st));
    } else {
      const auto& src = gpus_[static_cast<std::size_t>(*stream.src.gpu)];
      const auto& dst = gpus_[static_cast<std::size_t>(*stream.dst.gpu)];
      COMMCERT_CHECK_CUDA(cudaMemcpyPeerAsync(gpu(*stream.dst.gpu).dst.get(), dst.cuda_device,
                                              gpu(*stream.src.gpu).src.get(), src.cuda_device,
                                              s_.bytes, st));
    }
  }

  const P2pSettings& s_;
  const std::vector<GpuDescription>& gpus_;
  std::vector<GpuState> state_;
  PinnedMemory gate_;  // every GPU reads it through unified addressing
  std::map<int, std::unique_ptr<PinnedMemory>> host_;
};

// Fills `results` test by test; stops at the first timeout (later tests would wait on the same
// stuck engine) and at a failure to set up.
void measure_all(const P2pSettings& s, const std::vector<GpuDescription>& gpus,
                 const std::vector<P2pTest>& tests, P2pRun& run, std::atomic<std::size_t>& done) {
  auto& results = run.results;
  results.assign(tests.size(), {});
  std::optional<std::string> stop;
  std::optional<P2pBench> bench;
  try {
    bench.emplace(s, gpus, probe_peer_access(gpus));
  } catch (const std::exception& error) {
    stop = fmt::format("setting up: {}", error.what());
  }
  for (std::size_t t = 0; t < tests.size(); ++t) {
    P2pTestResult& r = results[t];
    if (tests[t].skip_reason) {
      r.status = RecordStatus::kSkipped;
      r.reason = *tests[t].skip_reason;
    } else if (stop) {
      r.status = RecordStatus::kError;
      r.reason = fmt::format("not run: {}", *stop);
    } else {
      try {
        r.samples_s = bench->run(tests[t]);
      } catch (const DeviceTimeout& error) {
        r.status = RecordStatus::kTimeout;
        r.reason = error.what();
        stop = fmt::format("an earlier test timed out ({})", error.what());
      } catch (const std::exception& error) {
        r.status = RecordStatus::kError;
        r.reason = error.what();
      }
    }
    ++done;
  }
}

}  // namespace

std::vector<std::vector<bool>> probe_peer_access(const std::vector<GpuDescription>& gpus) {
  std::vector<std::vector<bool>> can(gpus.size(), std::vector<bool>(gpus.size(), false));
  for (std::size_t a = 0; a < gpus.size(); ++a) {
    for (std::size_t b = 0; b < gpus.size(); ++b) {
      if (a == b) {
        can[a][b] = true;
        continue;
      }
      int access = 0;
      COMMCERT_CHECK_CUDA(
          cudaDeviceCanAccessPeer(&access, gpus[a].cuda_device, gpus[b].cuda_device));
      can[a][b] = access != 0;
    }
  }
  return can;
}

P2pRun run_p2p_tests(const P2pSettings& s, const std::vector<GpuDescription>& gpus,
                     const std::vector<P2pTest>& tests,
                     const std::function<void(std::size_t)>& progress) {
  // What the thread uses is its own: an abandoned thread outlives this call.
  auto settings = std::make_shared<P2pSettings>(s);
  auto described = std::make_shared<std::vector<GpuDescription>>(gpus);
  auto planned = std::make_shared<std::vector<P2pTest>>(tests);
  // One worker measures every test: the tests share the node's GPUs and run one at a time.
  GpuWorkerPool<P2pRun> pool(
      std::vector<P2pRun>(1),
      [settings, described, planned](std::size_t /*index*/, P2pRun& run,
                                     std::atomic<std::size_t>& done) {
        measure_all(*settings, *described, *planned, run, done);
      },
      [count = tests.size()](P2pRun& run, const std::exception& error) {
        run.results.resize(count);
        for (P2pTestResult& result : run.results) {
          if (result.status != RecordStatus::kOk || !result.samples_s.empty()) continue;
          result.status = RecordStatus::kError;
          result.reason = fmt::format("not run: {}", error.what());
        }
      });
  // Every wait inside a test is bounded by the timeout; a thread that makes no progress for
  // longer than two of them is stuck in the driver.
  WorkerPatience patience;
  patience.stall_s = 2 * s.timeout_s + 30;
  (void)pool.wait(patience, [&](std::size_t done) {
    if (progress) progress(done);
  });
  WorkerRun<P2pRun> pooled =
      pool.collect([count = tests.size()](const P2pRun& /*seed*/, std::size_t seen) {
        P2pRun stuck;
        stuck.results.assign(count, {});
        for (std::size_t t = 0; t < count; ++t) {
          P2pTestResult& r = stuck.results[t];
          r.status = t < seen ? RecordStatus::kError : RecordStatus::kTimeout;
          r.reason = t < seen ? "finished, but the measuring thread then stopped answering"
                              : "the measuring thread did not return within the timeout";
        }
        return stuck;
      });
  P2pRun run = std::move(pooled.outcomes.front());
  run.abandoned = pooled.abandoned;
  return run;
}

}  // namespace commcert
