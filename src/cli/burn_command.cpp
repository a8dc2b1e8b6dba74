#include "cli/burn_command.hpp"

#include <atomic>
#include <csignal>

#include <fmt/format.h>

#include "bench/burn_engine.hpp"
#include "bench/peer_compare.hpp"
#include "cli/gpu_slots.hpp"
#include "cli/gpu_stage_records.hpp"
#include "cli/stage_session.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/stats.hpp"
#include "core/stop_request.hpp"
#include "core/units.hpp"
#include "health/nvml_library.hpp"
#include "health/telemetry.hpp"
#include "health/telemetry_timeline.hpp"

namespace commcert {
namespace {

// NVML telemetry for the GPUs that NVML can find by PCI address; the others get null.
class BurnTelemetry {
 public:
  BurnTelemetry(const std::string& library, const std::vector<GpuDescription>& gpus,
                double interval_s)
      : slot_of_gpu_(gpus.size(), -1) {
    auto opened = NvmlLibrary::open(library);
    if (!opened.library) {
      unavailable_ = opened.unavailable_reason;
      return;
    }
    nvml_ = std::move(opened.library);
    std::vector<nvml::Device> devices;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const auto device = nvml_->device_by_pci_bus_id(gpus[i].identity.pci_bus_id);
      if (!device.ok()) continue;
      slot_of_gpu_[i] = static_cast<int>(devices.size());
      devices.push_back(*device.value);
    }
    sampler_ = std::make_unique<TelemetrySampler>(*nvml_, std::move(devices), interval_s);
  }

  [[nodiscard]] const std::string& unavailable_reason() const { return unavailable_; }
  void start() {
    if (sampler_) sampler_->start();
  }
  void stop() {
    if (sampler_) sampler_->stop();
  }
  [[nodiscard]] Json json(std::size_t gpu) const {
    if (!sampler_ || slot_of_gpu_[gpu] < 0) return nullptr;
    return telemetry_json(sampler_->series(static_cast<std::size_t>(slot_of_gpu_[gpu])));
  }
  // The GPU's samples over time; none without NVML (the timeline then has TFLOP/s alone).
  [[nodiscard]] std::vector<TelemetrySample> samples(std::size_t gpu) const {
    if (!sampler_ || slot_of_gpu_[gpu] < 0) return {};
    return sampler_->series(static_cast<std::size_t>(slot_of_gpu_[gpu])).samples;
  }

 private:
  std::unique_ptr<NvmlLibrary> nvml_;
  std::unique_ptr<TelemetrySampler> sampler_;
  std::vector<int> slot_of_gpu_;
  std::string unavailable_;
};

// "GPU 0: 712.3 TFLOP/s, GPU 1: no result": the progress line's last word on each GPU.
std::string burn_summary(const std::vector<BurnOutcome>& outcomes) {
  std::string summary;
  for (const auto& outcome : outcomes) {
    summary += fmt::format("{}GPU {}: {}", summary.empty() ? "" : ", ", outcome.gpu.index,
                           outcome.window_tflops.empty()
                               ? std::string("no result")
                               : fmt::format("{:.1f} TFLOP/s", median(outcome.window_tflops)));
  }
  return summary;
}

// Burns this process's GPUs at once, every process's GPUs starting together, with telemetry
// throughout (attached to each GPU's outcome) and progress on stderr.
BurnRun burn_gpus(StageSession& session, const BurnSettings& settings,
                  const std::vector<GpuDescription>& gpus, BurnTelemetry& telemetry) {
  ProgressReporter progress(session.show_progress(), "burn", settings.duration_s);
  double shown = 0;
  BurnHooks hooks;
  hooks.ready = [&] {
    session.barrier("burn: all GPUs ready to start");
    telemetry.start();
  };
  hooks.tick = [&](double elapsed) {
    progress.advance(elapsed - shown, fmt::format("{} on {} local GPU(s)",
                                                  burn_kernel_name(settings.kernel), gpus.size()));
    shown = elapsed;
  };
  hooks.stop = &stop_request();
  BurnRun run;
  {
    const InterruptsRequestStop interrupts;
    run = run_burn(settings, gpus, hooks);
  }
  telemetry.stop();
  for (std::size_t i = 0; i < run.outcomes.size(); ++i) {
    auto& outcome = run.outcomes[i];
    outcome.telemetry = telemetry.json(i);
    outcome.timeline =
        telemetry_timeline_json(telemetry.samples(i), outcome.window_end_s, outcome.window_tflops);
  }
  progress.finish(burn_summary(run.outcomes));
  return run;
}

}  // namespace

void BurnCommand::configure(CLI::App& app) {
  app.add_option("-D,--duration", flags_.duration, "Burn time: 90, 90s, 10m")
      ->envname("COMMCERT_BURN_DURATION")
      ->capture_default_str();
  app.add_option("--kernel", flags_.kernel,
                 "gemm_bf16, gemm_fp16, gemm_tf32, gemm_fp8, gemm_fp64 or power_fma")
      ->capture_default_str();
  app.add_option("--size", flags_.size, "GEMM dimension m = n = k (multiple of 64)")
      ->check(CLI::Range(std::uint64_t{256}, std::uint64_t{65536}))
      ->capture_default_str();
  app.add_option("--window", flags_.window, "TFLOP/s sampling window")->capture_default_str();
  app.add_option("--check-every", flags_.check_every,
                 "Check the result every N launches (0 = once per window)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--telemetry-interval", flags_.telemetry_interval, "NVML sampling interval")
      ->capture_default_str();
  app.add_option("--nvml-library", flags_.nvml_library, "NVML to load (soname or path)")
      ->envname("COMMCERT_NVML_LIBRARY")
      ->capture_default_str();
  app.add_option("--seed", flags_.seed, "Seed of the input matrices");
  stage_.add_to(app);
}

BurnSettings BurnCommand::resolve_settings() const {
  BurnSettings s;
  s.kernel = parse_burn_kernel(flags_.kernel, "--kernel");
  if (flags_.size % 64 != 0) {
    throw UsageError(fmt::format("--size {}: must be a multiple of 64", flags_.size));
  }
  s.size = flags_.size;
  s.duration_s = parse_duration_seconds(flags_.duration, "-D/--duration");
  if (!(s.duration_s > 0)) throw UsageError("-D/--duration: must be longer than 0 s");
  s.window_s = parse_duration_seconds(flags_.window, "--window");
  if (!(s.window_s >= 0.01)) throw UsageError("--window: must be at least 10ms");
  s.check_every = flags_.check_every;
  s.timeout_s = stage_.timeout_s();
  if (flags_.seed) s.seed = *flags_.seed;
  return s;
}

double BurnCommand::telemetry_interval_s() const {
  const double interval = parse_duration_seconds(flags_.telemetry_interval, "--telemetry-interval");
  if (!(interval >= 0.01)) throw UsageError("--telemetry-interval: must be at least 10ms");
  return interval;
}

void BurnCommand::check() const {
  (void)resolve_settings();
  (void)telemetry_interval_s();
}

int BurnCommand::run(Invocation& invocation) {
  stage_.validate_output();
  const BurnSettings settings = resolve_settings();
  const double telemetry_interval = telemetry_interval_s();

  const GpuRuntimeInfo runtime = probe_gpu_runtime();
  StageSession session(invocation, name(), "burn", stage_.output(), settings.timeout_s);
  return session.run([&] {
    const GpuSlots plan = plan_gpu_slots(runtime, session.group(), stage_.gpus_per_process(),
                                         NodeGpuIndex(flags_.nvml_library, "/sys"));
    std::unique_ptr<BurnTelemetry> telemetry;
    std::vector<std::string> warnings;
    if (!plan.gpus.empty()) {
      telemetry =
          std::make_unique<BurnTelemetry>(flags_.nvml_library, plan.gpus, telemetry_interval);
      if (!telemetry->unavailable_reason().empty()) {
        warnings.push_back("no telemetry (clocks, power, throttling, Xids): " +
                           telemetry->unavailable_reason());
      }
    }
    session.start(plan.slots, runtime, parameters(settings, telemetry_interval), warnings);
    if (session.show_progress()) {
      fmt::print(stderr, "commcert burn: {} for {} on {} rank(s)\n",
                 burn_kernel_name(settings.kernel), format_duration(settings.duration_s),
                 session.ranks().size());
    }

    BurnRun run;
    if (!plan.gpus.empty()) {
      run = burn_gpus(session, settings, plan.gpus, *telemetry);
    } else {
      // Every process takes part in the same exchanges: GPU processes meet at the start line.
      session.barrier("burn: all GPUs ready to start");
    }
    // Same-model GPUs of a node must agree bit for bit: every GPU's first-result fingerprint,
    // one entry per rank.
    const Json mine = burn_fingerprint_entries(session.node(), plan.slots.size(), run.outcomes);
    const auto verdicts = compare_with_peers(
        burn_peer_results(session.all_gather("burn: comparing results between GPUs", mine.dump())));
    const std::vector<Json> records =
        burn_records(settings, plan, run.outcomes, verdicts, session.first_rank(), session.node(),
                     [&session](std::size_t slot) { return session.origin(slot); });
    return session.finish(records, stop_request().load(), run.abandoned);
  });
}

Json BurnCommand::parameters(const BurnSettings& settings, double telemetry_interval_s) const {
  return {{"kernel", burn_kernel_name(settings.kernel)},
          {"size", settings.size},
          {"duration_s", settings.duration_s},
          {"window_s", settings.window_s},
          {"check_every", settings.check_every},
          {"gpus_per_process", stage_.gpus_per_process()},
          {"telemetry_interval_s", telemetry_interval_s},
          {"nvml_library", flags_.nvml_library},
          {"timeout_s", settings.timeout_s},
          {"seed", settings.seed}};
}

}  // namespace commcert
