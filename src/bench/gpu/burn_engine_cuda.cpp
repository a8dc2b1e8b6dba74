#include <array>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "bench/burn.hpp"
#include "bench/burn_engine.hpp"
#include "bench/gpu/cuda_support.hpp"
#include "bench/gpu/gemm_runner.hpp"
#include "bench/gpu/start_line.hpp"
#include "bench/throughput.hpp"
#include "kernels/burn_kernels.hpp"

namespace commcert {
namespace {

// What a burn repeats: one launch of deterministic work whose result can be compared.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual void enqueue() = 0;
  [[nodiscard]] virtual const void* result() const = 0;
  [[nodiscard]] virtual std::uint64_t result_elements() const = 0;
  [[nodiscard]] virtual unsigned result_element_bytes() const = 0;
  [[nodiscard]] virtual double flops_per_call() const = 0;
};

class GemmWorkload final : public Workload {
 public:
  GemmWorkload(const BurnSettings& s, int sm_count, cudaStream_t stream)
      : gemm_(s.kernel, s.size, s.seed, sm_count, stream) {}
  void enqueue() override { gemm_.enqueue(); }
  [[nodiscard]] const void* result() const override { return gemm_.result(); }
  [[nodiscard]] std::uint64_t result_elements() const override { return gemm_.result_elements(); }
  [[nodiscard]] unsigned result_element_bytes() const override {
    return gemm_.result_element_bytes();
  }
  [[nodiscard]] double flops_per_call() const override { return gemm_.flops_per_call(); }

 private:
  GemmRunner gemm_;
};

// FMA chains in registers on every thread the GPU can hold at once; no memory traffic but the
// final write. The step count is fixed (not tuned per GPU) so same-model GPUs compute identical
// results: ~6 ms per launch on an H100.
class PowerFmaWorkload final : public Workload {
 public:
  PowerFmaWorkload(const BurnSettings& s, int sm_count, cudaStream_t stream)
      : seed_(s.seed), stream_(stream), shears_(power_fma_shears()) {
    launch_.threads_per_block = 256;
    launch_.blocks = static_cast<unsigned>(sm_count) * 8;  // 2048 threads per SM
    launch_.steps = 1u << 16;
    out_ = DeviceMemory(result_elements() * sizeof(float));
  }
  void enqueue() override { enqueue_power_fma(out_.as<float>(), launch_, seed_, shears_, stream_); }
  [[nodiscard]] const void* result() const override { return out_.get(); }
  [[nodiscard]] std::uint64_t result_elements() const override {
    return static_cast<std::uint64_t>(launch_.blocks) * launch_.threads_per_block * 2 *
           kPowerFmaPairs;
  }
  [[nodiscard]] unsigned result_element_bytes() const override { return sizeof(float); }
  [[nodiscard]] double flops_per_call() const override {
    return power_fma_flops(static_cast<std::uint64_t>(launch_.blocks) * launch_.threads_per_block,
                           launch_.steps);
  }

 private:
  std::uint64_t seed_;
  cudaStream_t stream_;
  PowerFmaShears shears_;
  PowerFmaLaunch launch_;
  DeviceMemory out_;
};

std::unique_ptr<Workload> make_workload(const BurnSettings& s, int sm_count, cudaStream_t stream) {
  if (s.kernel == BurnKernel::kPowerFma)
    return std::make_unique<PowerFmaWorkload>(s, sm_count, stream);
  return std::make_unique<GemmWorkload>(s, sm_count, stream);
}

// One GPU's burn: set-up (inputs, first result, calibration), then timed windows.
class DeviceBurn {
 public:
  DeviceBurn(const BurnSettings& s, const GpuDescription& gpu, BurnOutcome& out)
      : s_(s), gpu_(gpu), out_(out) {
    workload_ = make_workload(s, gpu.sm_count, stream_.get());
    const std::uint64_t elements = workload_->result_elements();
    const unsigned bytes = workload_->result_element_bytes();
    reference_ = DeviceMemory(elements * bytes);
    for (int i = 0; i < 2; ++i)
      workload_->enqueue();  // warm-up: clocks up, algorithm loaded
    COMMCERT_CHECK_CUDA(cudaGetLastError());
    drain(stream_.get(), deadline(), "burn warm-up");

    // The first result is the reference every later result must match bit for bit, and what
    // this GPU's peers compare their own first result with.
    COMMCERT_CHECK_CUDA(cudaMemcpyAsync(reference_.get(), workload_->result(), elements * bytes,
                                        cudaMemcpyDeviceToDevice, stream_.get()));
    COMMCERT_CHECK_CUDA(cudaMemsetAsync(counters_.get(), 0, counters_.bytes(), stream_.get()));
    enqueue_fingerprint(reference_.get(), elements, bytes, counters_.as<unsigned long long>() + 1,
                        gpu.sm_count, stream_.get());
    COMMCERT_CHECK_CUDA(cudaMemcpyAsync(host_.get(), counters_.get(), counters_.bytes(),
                                        cudaMemcpyDeviceToHost, stream_.get()));
    drain(stream_.get(), deadline(), "burn reference fingerprint");
    out_.fingerprint = host_.as<unsigned long long>()[1];

    CudaEvent start;
    CudaEvent stop;
    constexpr int kCalibrationLaunches = 3;
    start.record(stream_.get());
    for (int i = 0; i < kCalibrationLaunches; ++i)
      workload_->enqueue();
    stop.record(stream_.get());
    wait_for(stop, deadline(), "burn calibration");
    const double per_launch = elapsed_seconds(start, stop) / kCalibrationLaunches;
    launches_per_window_ = static_cast<std::uint64_t>(
        std::max(1.0, std::round(s.window_s / std::max(per_launch, 1e-6))));
  }

  void burn(const std::atomic<bool>* stop_requested) {
    const auto started = SteadyClock::now();
    // Checks run between timed spans (burn_window_spans): a window's time is its GEMMs' alone.
    const std::vector<std::uint64_t> spans =
        burn_window_spans(launches_per_window_, s_.check_every);
    // Two windows' events: the host enqueues one window while the GPU runs the one before.
    std::array<std::vector<CudaEvent>, 2> span_starts{std::vector<CudaEvent>(spans.size()),
                                                      std::vector<CudaEvent>(spans.size())};
    std::array<std::vector<CudaEvent>, 2> span_stops{std::vector<CudaEvent>(spans.size()),
                                                     std::vector<CudaEvent>(spans.size())};
    std::uint64_t window = 0;
    const double flops_per_window =
        workload_->flops_per_call() * static_cast<double>(launches_per_window_);
    const auto collect = [&](std::uint64_t w) {
      const std::size_t slot = w % 2;
      wait_for(span_stops[slot].back(), deadline(), fmt::format("burn window {}", w));
      double gemm_seconds = 0;
      for (std::size_t k = 0; k < spans.size(); ++k)
        gemm_seconds += elapsed_seconds(span_starts[slot][k], span_stops[slot][k]);
      if (auto rate = tflops(flops_per_window, gemm_seconds)) {
        out_.window_tflops.push_back(*rate);
        out_.window_end_s.push_back(seconds_between(started, SteadyClock::now()));
      }
      out_.iterations += launches_per_window_;
      out_.duration_s = seconds_between(started, SteadyClock::now());
    };
    out_.measured = true;
    for (;;) {
      const double elapsed = seconds_between(started, SteadyClock::now());
      // The host runs one window ahead of the GPU, so stop enqueueing half a window early.
      const bool time_up = elapsed + 0.5 * s_.window_s >= s_.duration_s;
      const bool stopping = stop_requested && stop_requested->load();
      if (window > 0 && (time_up || stopping)) break;
      const std::size_t slot = window % 2;
      for (std::size_t k = 0; k < spans.size(); ++k) {
        span_starts[slot][k].record(stream_.get());
        for (std::uint64_t i = 0; i < spans[k]; ++i)
          workload_->enqueue();
        span_stops[slot][k].record(stream_.get());
        compare();  // after every span, the last one included
      }
      COMMCERT_CHECK_CUDA(cudaGetLastError());
      if (window > 0) collect(window - 1);
      ++window;
    }
    collect(window - 1);
    COMMCERT_CHECK_CUDA(cudaMemcpyAsync(host_.get(), counters_.get(), sizeof(unsigned long long),
                                        cudaMemcpyDeviceToHost, stream_.get()));
    drain(stream_.get(), deadline(), "burn result checks");
    out_.miscompares = host_.as<unsigned long long>()[0];
    out_.duration_s = seconds_between(started, SteadyClock::now());
  }

 private:
  [[nodiscard]] Deadline deadline() const { return Deadline::after_seconds(s_.timeout_s); }

  void compare() {
    enqueue_count_differences(workload_->result(), reference_.get(), workload_->result_elements(),
                              workload_->result_element_bytes(), counters_.as<unsigned long long>(),
                              gpu_.sm_count, stream_.get());
    ++out_.checked_results;
  }

  const BurnSettings& s_;
  const GpuDescription& gpu_;
  BurnOutcome& out_;
  CudaStream stream_;
  std::unique_ptr<Workload> workload_;
  DeviceMemory reference_;
  DeviceMemory counters_{2 * sizeof(unsigned long long)};  // [0] miscompares, [1] fingerprint
  PinnedMemory host_{2 * sizeof(unsigned long long)};
  std::uint64_t launches_per_window_ = 1;
};

void burn_one(const BurnSettings& s, const GpuDescription& gpu, StartLine& line,
              const std::atomic<bool>* stop, BurnOutcome& out) {
  bool arrived = false;
  try {
    COMMCERT_CHECK_CUDA(cudaSetDevice(gpu.cuda_device));
    const int needed = burn_min_compute_capability(s.kernel);
    if (gpu.compute_capability < needed) {
      out.status = RecordStatus::kSkipped;
      out.reason = fmt::format(
          "{} needs compute capability {}.{}; {} is {}.{}", burn_kernel_name(s.kernel), needed / 10,
          needed % 10, gpu.identity.name, gpu.compute_capability / 10, gpu.compute_capability % 10);
    } else {
      DeviceBurn burn(s, gpu, out);
      const bool late = line.released();
      line.arrive();
      arrived = true;
      if (line.wait_release(late)) {
        burn.burn(stop);
      } else if (late) {
        out.status = RecordStatus::kTimeout;
        out.reason = fmt::format("GPU {}: burn set-up took longer than the {} s timeout",
                                 gpu.identity.index, s.timeout_s);
      }
    }
  } catch (const DeviceTimeout& error) {
    out.status = RecordStatus::kTimeout;
    out.reason = fmt::format("GPU {}: {}", gpu.identity.index, error.what());
  } catch (const std::exception& error) {
    out.status = RecordStatus::kError;
    out.reason = fmt::format("GPU {}: {}", gpu.identity.index, error.what());
  }
  if (!arrived) line.arrive();
}

}  // namespace

BurnRun run_burn(const BurnSettings& s, const std::vector<GpuDescription>& gpus,
                 const BurnHooks& hooks) {
  // What the threads use is theirs: an abandoned thread outlives this call.
  auto line = std::make_shared<StartLine>(static_cast<int>(gpus.size()));
  auto settings = std::make_shared<BurnSettings>(s);
  auto described = std::make_shared<std::vector<GpuDescription>>(gpus);
  std::vector<BurnOutcome> seeds(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    seeds[i].gpu = gpus[i].identity;
    seeds[i].model = gpus[i].model;
    seeds[i].compute_capability = gpus[i].compute_capability;
  }
  GpuWorkerPool<BurnOutcome> pool(
      std::move(seeds),
      [line, settings, described, stop = hooks.stop](std::size_t i, BurnOutcome& out,
                                                     std::atomic<std::size_t>& /*steps*/) {
        burn_one(*settings, (*described)[i], *line, stop, out);
      },
      [](BurnOutcome& out, const std::exception& error) {  // burn_one catches its own
        out.status = RecordStatus::kError;
        out.reason = fmt::format("GPU {}: {}", out.gpu.index, error.what());
      });

  (void)line->wait_all(Deadline::after_seconds(s.timeout_s));
  if (hooks.ready) {
    try {
      hooks.ready();
    } catch (...) {
      line->release(false);
      pool.join_all();
      throw;
    }
  }
  line->release(true);

  const auto started = SteadyClock::now();
  // Every GPU stops on its own within a window of the duration; beyond that plus a timeout for
  // set-up and for the last window, a thread is stuck.
  WorkerPatience patience;
  patience.give_up = Deadline::after_seconds(s.duration_s + 2 * s.window_s + 2 * s.timeout_s);
  (void)pool.wait(patience, [&](std::size_t /*steps*/) {
    if (hooks.tick) hooks.tick(seconds_between(started, SteadyClock::now()));
  });
  return pool.collect([](const BurnOutcome& seed, std::size_t /*steps*/) {
    BurnOutcome stuck;
    stuck.gpu = seed.gpu;
    stuck.model = seed.model;
    stuck.status = RecordStatus::kTimeout;
    stuck.reason = fmt::format(
        "GPU {}: the burn thread did not return within the timeout (stuck in the driver)",
        stuck.gpu.index);
    return stuck;
  });
}

}  // namespace commcert
