#include "cli/p2p_command.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "cli/gpu_slots.hpp"
#include "cli/gpu_stage_records.hpp"
#include "cli/stage_session.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/split.hpp"
#include "core/units.hpp"
#include "health/pci_address.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kMinCopyBytes = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxCopyBytes = std::uint64_t{16} << 30;

// This process's one record: why it has no figures.
Json lone_record(const StageSession& session, RecordStatus status, std::string reason) {
  P2pRecord record;
  record.origin = session.origin(0);
  record.status = status;
  record.reason = std::move(reason);
  return to_json(record);
}

// A process standing by while its host's first process measures (P2pRole::bystander): a
// pretend node sharing the host (--node-name 'n{rank}') still says why it has no figures.
std::vector<Json> bystander_records(const StageSession& session, const GpuRuntimeInfo& runtime) {
  if (!session.speaks_for_node()) return {};
  return {lone_record(session, RecordStatus::kSkipped,
                      runtime.device_count <= 0
                          ? runtime.unavailable_reason
                          : "this host's GPUs are measured by its first process, which speaks "
                            "for another node identity")};
}

struct P2pMeasured {
  std::vector<Json> records;
  bool abandoned = false;  // the engine's thread is stuck in the driver
};

// Plans the tests between this process's GPUs and runs them, with progress on stderr. A failure
// to plan or run them at all is one error record.
P2pMeasured measure_p2p(StageSession& session, const P2pSettings& s,
                        const std::vector<GpuDescription>& gpus) {
  std::vector<GpuIdentity> identities;
  HostNuma numa;
  numa.online_nodes = online_numa_nodes(s.sysfs_root);
  for (const GpuDescription& gpu : gpus) {
    identities.push_back(gpu.identity);
    numa.gpu_node.push_back(pci_numa_node(s.sysfs_root, gpu.identity.pci_bus_id));
  }
  std::vector<P2pTest> tests;
  P2pRun run;
  try {
    tests =
        plan_p2p_tests(static_cast<int>(gpus.size()), probe_peer_access(gpus), numa, s.selection);
    ProgressReporter progress(session.show_progress(), "p2p", static_cast<double>(tests.size()));
    std::size_t shown = 0;
    run = run_p2p_tests(s, gpus, tests, [&](std::size_t done) {
      if (done == shown) return;
      progress.advance(
          static_cast<double>(done - shown),
          fmt::format("{} of {} test(s) on {} local GPU(s)", done, tests.size(), gpus.size()));
      shown = done;
    });
    progress.finish(fmt::format("{} test(s) measured", tests.size()));
  } catch (const std::exception& error) {
    return {{lone_record(session, RecordStatus::kError, error.what())}, false};
  }
  return {p2p_records(s, tests, run, identities,
                      [&session](std::size_t slot) { return session.origin(slot); }),
          run.abandoned};
}

}  // namespace

P2pSelection parse_p2p_selection(std::string_view methods, std::string_view paths) {
  P2pSelection s{false, false, false, false, false, false};
  for (const std::string_view name : split_at(methods)) {
    if (name == "ce") {
      s.copy_engine = true;
    } else if (name == "sm") {
      s.sm_copy = true;
    } else if (name == "latency") {
      s.pointer_chase = true;
    } else {
      throw UsageError(fmt::format("--methods: unknown method '{}' (ce, sm, latency)", name));
    }
  }
  for (const std::string_view name : split_at(paths)) {
    if (name == "gpu_gpu") {
      s.gpu_gpu = true;
    } else if (name == "host_gpu") {
      s.host_gpu = true;
    } else if (name == "device_local") {
      s.device_local = true;
    } else {
      throw UsageError(
          fmt::format("--paths: unknown path '{}' (gpu_gpu, host_gpu, device_local)", name));
    }
  }
  return s;
}

void P2pCommand::configure(CLI::App& app) {
  app.add_option("--size", flags_.size, "Bytes per copy (K/M/G)")->capture_default_str();
  app.add_option("--copies", flags_.copies, "Copies queued behind one spin kernel per sample")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--methods", flags_.methods, "Comma list of ce, sm, latency")
      ->capture_default_str();
  app.add_option("--paths", flags_.paths, "Comma list of gpu_gpu, host_gpu, device_local")
      ->capture_default_str();
  app.add_option("--chase-size", flags_.chase_size, "Buffer the latency test chases through")
      ->capture_default_str();
  app.add_option("--chase-loads", flags_.chase_loads, "Dependent loads per latency sample")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  app.add_option("--sysfs-root", flags_.sysfs_root, "Where sysfs is (GPUs' NUMA nodes)")
      ->capture_default_str();
  stage_.add_to(app);
}

P2pSettings P2pCommand::resolve_settings() const {
  P2pSettings s;
  s.bytes = parse_size(flags_.size, "--size");
  if (s.bytes < kMinCopyBytes || s.bytes > kMaxCopyBytes) {
    throw UsageError("--size: must be from 1M to 16G");
  }
  s.bytes -= s.bytes % 4096;  // whole pages; the SM copy moves 16-byte vectors
  s.copies_per_sample = flags_.copies;
  s.iterations = stage_.iterations();
  s.warmup = stage_.warmup();
  s.selection = parse_p2p_selection(flags_.methods, flags_.paths);
  s.chase_bytes = parse_size(flags_.chase_size, "--chase-size");
  if (s.chase_bytes < (std::uint64_t{1} << 20) || s.chase_bytes > kMaxCopyBytes) {
    throw UsageError("--chase-size: must be from 1M to 16G");
  }
  s.chase_loads = flags_.chase_loads;
  s.timeout_s = stage_.timeout_s();
  std::error_code error;
  if (!std::filesystem::is_directory(flags_.sysfs_root, error)) {
    throw UsageError(fmt::format("--sysfs-root {}: not a directory", flags_.sysfs_root));
  }
  s.sysfs_root = flags_.sysfs_root;
  return s;
}

P2pRole p2p_role(int gpus_per_process, int local_count, int local_index) {
  P2pRole role;
  role.one_for_the_node = gpus_per_process == 0 && local_count > 1;
  role.bystander = role.one_for_the_node && local_index != 0;
  return role;
}

int P2pCommand::run(Invocation& invocation) {
  stage_.validate_output();
  const P2pSettings s = resolve_settings();
  const GpuRuntimeInfo runtime = probe_gpu_runtime();
  StageSession session(invocation, name(), P2pRecord::kKind, stage_.output(), s.timeout_s);
  return session.run([&] {
    const ProcessGroup& group = session.group();
    const P2pRole role =
        p2p_role(stage_.gpus_per_process(), group.local_count(), group.local_index());
    const NodeGpuIndex node_index(nvml_library_from_environment(), s.sysfs_root);
    GpuSlots plan;
    if (role.bystander) {
      plan.slots = {StageSlot{}};
    } else if (role.one_for_the_node) {
      plan = plan_gpu_slots(runtime, 0, 1, 0, node_index);
    } else {
      plan = plan_gpu_slots(runtime, session.group(), stage_.gpus_per_process(), node_index);
    }
    std::vector<std::string> warnings;
    if (group.local_count() > 1 && !role.one_for_the_node) {
      warnings.emplace_back(
          "p2p: more than one process on this node, each with its own GPUs: pairs are measured "
          "only between the GPUs of one process (use -g 0: the node's first process takes them "
          "all)");
    }
    session.start(plan.slots, runtime, parameters(s), std::move(warnings));

    if (role.bystander) return session.finish(bystander_records(session, runtime), false);
    if (plan.gpus.empty()) {
      if (session.show_progress()) {
        fmt::print(stderr, "commcert p2p: {}: {}\n", to_string(plan.unavailable_status),
                   plan.unavailable_reason);
      }
      return session.finish(
          {lone_record(session, plan.unavailable_status, plan.unavailable_reason)}, false);
    }
    const P2pMeasured measured = measure_p2p(session, s, plan.gpus);
    return session.finish(measured.records, false, measured.abandoned);
  });
}

Json P2pCommand::parameters(const P2pSettings& s) const {
  return {{"bytes", s.bytes},
          {"copies_per_sample", s.copies_per_sample},
          {"iterations", s.iterations},
          {"warmup_iterations", s.warmup},
          {"methods", flags_.methods},
          {"paths", flags_.paths},
          {"chase_bytes", s.chase_bytes},
          {"chase_stride", s.chase_stride},
          {"chase_loads", s.chase_loads},
          {"gpus_per_process", stage_.gpus_per_process()},
          {"timeout_s", s.timeout_s},
          {"sysfs_root", s.sysfs_root.string()}};
}

}  // namespace commcert
