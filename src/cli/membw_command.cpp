#include "cli/membw_command.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/gpu_datasheet.hpp"
#include "bench/membw_engine.hpp"
#include "cli/gpu_slots.hpp"
#include "cli/number_checks.hpp"
#include "cli/stage_session.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/units.hpp"

namespace commcert {

void MembwCommand::configure(CLI::App& app) {
  app.add_option("--buffer-size", flags_.buffer_size, "Size of each bandwidth buffer (K/M/G)")
      ->capture_default_str();
  app.add_option("-n,--iterations", flags_.iterations,
                 "Timed samples per measurement (median kept)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--memtest-fraction", flags_.memtest_fraction,
                 "Fraction of free device memory the pattern test covers (0 = skip)")
      ->check(finite_range(0.0, 0.98))
      ->capture_default_str();
  app.add_option("--host-size", flags_.host_size, "Host<->device transfer size (0 = skip)")
      ->capture_default_str();
  app.add_option("-g,--ngpus", flags_.gpus_per_process, "GPUs per process (0 = every visible GPU)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_option("-T,--timeout", flags_.timeout,
                 "Bound on any one wait for a GPU or a peer process")
      ->envname("COMMCERT_TIMEOUT")
      ->capture_default_str();
  app.add_option("--sysfs-root", flags_.sysfs_root, "Where sysfs is (to find each GPU's NUMA node)")
      ->capture_default_str();
  app.add_option("--seed", flags_.seed, "Seed of the random memory pattern");
  add_stage_options(app, stage_);
}

MembwSettings MembwCommand::resolve_settings() const {
  MembwSettings s;
  s.buffer_bytes = parse_size(flags_.buffer_size, "--buffer-size");
  if (s.buffer_bytes < (2ULL << 20)) throw UsageError("--buffer-size: must be at least 2M");
  s.iterations = flags_.iterations;
  s.memtest_fraction = flags_.memtest_fraction;
  s.host_bytes = parse_size(flags_.host_size, "--host-size");
  if (s.host_bytes != 0 && s.host_bytes < 4096)
    throw UsageError("--host-size: must be 0 or at least 4K");
  s.timeout_s = parse_duration_seconds(flags_.timeout, "-T/--timeout");
  if (!(s.timeout_s > 0)) throw UsageError("-T/--timeout: must be longer than 0 s");
  std::error_code error;
  if (!std::filesystem::is_directory(flags_.sysfs_root, error)) {
    throw UsageError(fmt::format("--sysfs-root {}: not a directory", flags_.sysfs_root));
  }
  s.sysfs_root = flags_.sysfs_root;
  if (flags_.seed) s.seed = *flags_.seed;
  return s;
}

int MembwCommand::run(Invocation& invocation) {
  validate_stage_options(stage_);
  const MembwSettings settings = resolve_settings();
  const GpuRuntimeInfo runtime = probe_gpu_runtime();
  StageSession session(invocation, name(), "membw", stage_, settings.timeout_s);
  return session.run([&] {
    const GpuSlots plan =
        plan_gpu_slots(runtime, session.group(), flags_.gpus_per_process,
                       NodeGpuIndex(nvml_library_from_environment(), settings.sysfs_root));
    Json parameters = {{"buffer_bytes", settings.buffer_bytes},
                       {"iterations", settings.iterations},
                       {"warmup_iterations", settings.warmup},
                       {"memtest_fraction", settings.memtest_fraction},
                       {"host_bytes", settings.host_bytes},
                       {"host_iterations", settings.host_iterations},
                       {"gpus_per_process", flags_.gpus_per_process},
                       {"timeout_s", settings.timeout_s},
                       {"sysfs_root", settings.sysfs_root.string()},
                       {"seed", settings.seed}};
    session.start(plan.slots, runtime, std::move(parameters), {});

    // Host transfers first, one GPU at a time per host (the processes of a host take turns), then
    // the device memory. On an H200, host-to-device copies measured after the pattern test over
    // 90 % of the GPU's memory ran at 26.5 GB/s, against 55.4 GB/s without it or after one over
    // 50 %; device-to-host stayed at 55.3 (docs/gpu-results.md).
    std::vector<std::optional<HostTransfer>> host_transfers(plan.gpus.size());
    std::vector<std::string> host_errors(plan.gpus.size());
    if (settings.host_bytes > 0) {
      const int turns = static_cast<int>(
          session.all_reduce_max("membw: host transfer turns", session.group().local_count()));
      for (int turn = 0; turn < turns; ++turn) {
        session.barrier(fmt::format("membw: host transfer turn {}", turn));
        if (turn != session.group().local_index()) continue;
        for (std::size_t i = 0; i < plan.gpus.size(); ++i) {
          try {
            host_transfers[i] = measure_host_transfer(settings, plan.gpus[i]);
          } catch (const std::exception& error) {
            host_errors[i] =
                fmt::format("GPU {}: host transfer: {}", plan.gpus[i].identity.index, error.what());
          }
        }
      }
    }

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
    for (std::size_t i = 0; i < run.outcomes.size() && i < plan.gpus.size(); ++i) {
      MembwOutcome& outcome = run.outcomes[i];
      if (outcome.status != RecordStatus::kOk) continue;
      if (!host_errors[i].empty()) {
        outcome.status = RecordStatus::kError;
        outcome.reason = host_errors[i];
        continue;
      }
      outcome.host_transfer = host_transfers[i];
    }

    std::vector<Json> records;
    if (plan.gpus.empty()) {
      MembwRecord record;
      record.origin = session.origin(0);
      record.status = plan.unavailable_status;
      record.reason = plan.unavailable_reason;
      records.push_back(to_json(record));
    }
    for (std::size_t slot = 0; slot < run.outcomes.size(); ++slot) {
      const MembwOutcome& outcome = run.outcomes[slot];
      MembwRecord record;
      record.origin = session.origin(slot);
      record.origin.gpu = outcome.gpu;
      record.status = membw_status(outcome);
      if (record.status != RecordStatus::kOk) record.reason = membw_reason(outcome);
      const GpuDatasheet* sheet = find_gpu_datasheet(outcome.gpu.name);
      record.measurement = membw_measurement(
          outcome, sheet ? std::optional<double>(sheet->hbm_bytes_per_s) : std::nullopt);
      records.push_back(to_json(record));
    }
    const int exit_code = session.finish(records, false);
    if (run.abandoned) {
      std::fflush(nullptr);
      std::_Exit(exit_code);
    }
    return exit_code;
  });
}

}  // namespace commcert
