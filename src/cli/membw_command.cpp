#include "cli/membw_command.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/membw_engine.hpp"
#include "cli/gpu_slots.hpp"
#include "cli/gpu_stage_records.hpp"
#include "cli/number_checks.hpp"
#include "cli/stage_session.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {

// Each GPU's host transfer, or why it has none.
struct HostTransfers {
  std::vector<std::optional<HostTransfer>> transfers;
  std::vector<std::string> errors;  // empty: no error
};

// Host<->GPU copies of this process's GPUs, one GPU at a time per host: the host's processes
// take turns (every process takes part in each turn's barrier). None with --host-size 0.
HostTransfers measure_host_transfers(StageSession& session, const MembwSettings& settings,
                                     const std::vector<GpuDescription>& gpus) {
  HostTransfers out{std::vector<std::optional<HostTransfer>>(gpus.size()),
                    std::vector<std::string>(gpus.size())};
  if (settings.host_bytes == 0) return out;
  const int turns = static_cast<int>(
      session.all_reduce_max("membw: host transfer turns", session.group().local_count()));
  for (int turn = 0; turn < turns; ++turn) {
    session.barrier(fmt::format("membw: host transfer turn {}", turn));
    if (turn != session.group().local_index()) continue;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      try {
        out.transfers[i] = measure_host_transfer(settings, gpus[i]);
      } catch (const std::exception& error) {
        out.errors[i] =
            fmt::format("GPU {}: host transfer: {}", gpus[i].identity.index, error.what());
      }
    }
  }
  return out;
}

}  // namespace

void MembwCommand::configure(CLI::App& app) {
  app.add_option("--buffer-size", flags_.buffer_size, "Size of each bandwidth buffer (K/M/G)")
      ->capture_default_str();
  app.add_option("--memtest-fraction", flags_.memtest_fraction,
                 "Fraction of free device memory the pattern test covers (0 = skip)")
      ->check(finite_range(0.0, 0.98))
      ->capture_default_str();
  app.add_option("--host-size", flags_.host_size, "Host<->device transfer size (0 = skip)")
      ->capture_default_str();
  app.add_option("--sysfs-root", flags_.sysfs_root, "Where sysfs is (to find each GPU's NUMA node)")
      ->capture_default_str();
  app.add_option("--seed", flags_.seed, "Seed of the random memory pattern");
  stage_.add_to(app);
}

MembwSettings MembwCommand::resolve_settings() const {
  MembwSettings s;
  s.buffer_bytes = parse_size(flags_.buffer_size, "--buffer-size");
  if (s.buffer_bytes < (2ULL << 20)) throw UsageError("--buffer-size: must be at least 2M");
  s.iterations = stage_.iterations();
  s.memtest_fraction = flags_.memtest_fraction;
  s.host_bytes = parse_size(flags_.host_size, "--host-size");
  if (s.host_bytes != 0 && s.host_bytes < 4096)
    throw UsageError("--host-size: must be 0 or at least 4K");
  s.timeout_s = stage_.timeout_s();
  std::error_code error;
  if (!std::filesystem::is_directory(flags_.sysfs_root, error)) {
    throw UsageError(fmt::format("--sysfs-root {}: not a directory", flags_.sysfs_root));
  }
  s.sysfs_root = flags_.sysfs_root;
  if (flags_.seed) s.seed = *flags_.seed;
  return s;
}

int MembwCommand::run(Invocation& invocation) {
  stage_.validate_output();
  const MembwSettings settings = resolve_settings();
  const GpuRuntimeInfo runtime = probe_gpu_runtime();
  StageSession session(invocation, name(), "membw", stage_.output(), settings.timeout_s);
  return session.run([&] {
    const GpuSlots plan =
        plan_gpu_slots(runtime, session.group(), stage_.gpus_per_process(),
                       NodeGpuIndex(nvml_library_from_environment(), settings.sysfs_root));
    session.start(plan.slots, runtime, parameters(settings), {});

    // Host transfers first, one GPU at a time per host (the processes of a host take turns), then
    // the device memory. On an H200, host-to-device copies measured after the pattern test over
    // 90 % of the GPU's memory ran at 26.5 GB/s, against 55.4 GB/s without it or after one over
    // 50 %; device-to-host stayed at 55.3 (docs/gpu-results.md).
    const HostTransfers host = measure_host_transfers(session, settings, plan.gpus);
    MembwRun run;
    if (!plan.gpus.empty()) {
      ProgressReporter progress(session.show_progress(), "membw", 1.0);
      double shown = 0;
      run = measure_device_memory(settings, plan.gpus, [&](double fraction) {
        progress.advance(fraction - shown, fmt::format("bandwidth and patterns on {} local GPU(s)",
                                                       plan.gpus.size()));
        shown = fraction;
      });
      progress.finish("device memory measured");
    }
    add_host_transfers(run.outcomes, host.transfers, host.errors);
    const std::vector<Json> records = membw_records(
        plan, run.outcomes, [&session](std::size_t slot) { return session.origin(slot); });
    return session.finish(records, false, run.abandoned);
  });
}

Json MembwCommand::parameters(const MembwSettings& settings) const {
  return {{"buffer_bytes", settings.buffer_bytes},
          {"iterations", settings.iterations},
          {"warmup_iterations", settings.warmup},
          {"memtest_fraction", settings.memtest_fraction},
          {"host_bytes", settings.host_bytes},
          {"host_iterations", settings.host_iterations},
          {"gpus_per_process", stage_.gpus_per_process()},
          {"timeout_s", settings.timeout_s},
          {"sysfs_root", settings.sysfs_root.string()},
          {"seed", settings.seed}};
}

}  // namespace commcert
