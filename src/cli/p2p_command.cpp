#include "cli/p2p_command.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "cli/gpu_slots.hpp"
#include "cli/stage_session.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/units.hpp"
#include "health/pci_address.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kMinCopyBytes = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxCopyBytes = std::uint64_t{16} << 30;

std::vector<std::string_view> split_list(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

P2pSelection parse_p2p_selection(std::string_view methods, std::string_view paths) {
  P2pSelection s{false, false, false, false, false, false};
  for (const std::string_view name : split_list(methods)) {
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
  for (const std::string_view name : split_list(paths)) {
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
  app.add_option("-n,--iterations", flags_.iterations, "Timed samples per test (median kept)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("-w,--warmup", flags_.warmup, "Untimed samples before them")
      ->check(CLI::Range(0, 1000))
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
  app.add_option("-g,--ngpus", flags_.gpus_per_process, "GPUs per process (0 = every visible GPU)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_option("-T,--timeout", flags_.timeout, "Bound on any one wait for a GPU")
      ->envname("COMMCERT_TIMEOUT")
      ->capture_default_str();
  app.add_option("--sysfs-root", flags_.sysfs_root, "Where sysfs is (GPUs' NUMA nodes)")
      ->capture_default_str();
  add_stage_options(app, stage_);
}

P2pSettings P2pCommand::resolve_settings() const {
  P2pSettings s;
  s.bytes = parse_size(flags_.size, "--size");
  if (s.bytes < kMinCopyBytes || s.bytes > kMaxCopyBytes) {
    throw UsageError("--size: must be from 1M to 16G");
  }
  s.bytes -= s.bytes % 4096;  // whole pages; the SM copy moves 16-byte vectors
  s.copies_per_sample = flags_.copies;
  s.iterations = flags_.iterations;
  s.warmup = flags_.warmup;
  s.selection = parse_p2p_selection(flags_.methods, flags_.paths);
  s.chase_bytes = parse_size(flags_.chase_size, "--chase-size");
  if (s.chase_bytes < (std::uint64_t{1} << 20) || s.chase_bytes > kMaxCopyBytes) {
    throw UsageError("--chase-size: must be from 1M to 16G");
  }
  s.chase_loads = flags_.chase_loads;
  s.timeout_s = parse_duration_seconds(flags_.timeout, "-T/--timeout");
  if (!(s.timeout_s > 0)) throw UsageError("-T/--timeout: must be longer than 0 s");
  std::error_code error;
  if (!std::filesystem::is_directory(flags_.sysfs_root, error)) {
    throw UsageError(fmt::format("--sysfs-root {}: not a directory", flags_.sysfs_root));
  }
  s.sysfs_root = flags_.sysfs_root;
  return s;
}

int P2pCommand::run(Invocation& invocation) {
  validate_stage_options(stage_);
  const P2pSettings s = resolve_settings();
  const GpuRuntimeInfo runtime = probe_gpu_runtime();
  StageSession session(invocation, name(), P2pRecord::kKind, stage_, s.timeout_s);
  return session.run([&] {
    // Pairs need every GPU of the node in one process: with -g 0 and several processes on a host
    // (a suite launched one rank per GPU), the host's first process drives them all and the others
    // stand by, writing no records.
    const int local_count = session.group().local_count();
    const bool one_for_the_node = flags_.gpus_per_process == 0 && local_count > 1;
    const bool bystander = one_for_the_node && session.group().local_index() != 0;
    const NodeGpuIndex node_index(nvml_library_from_environment(), s.sysfs_root);
    GpuSlots plan;
    if (bystander) {
      plan.slots = {StageSlot{}};
    } else if (one_for_the_node) {
      plan = plan_gpu_slots(runtime, 0, 1, 0, node_index);
    } else {
      plan = plan_gpu_slots(runtime, session.group(), flags_.gpus_per_process, node_index);
    }
    Json parameters = {{"bytes", s.bytes},
                       {"copies_per_sample", s.copies_per_sample},
                       {"iterations", s.iterations},
                       {"warmup_iterations", s.warmup},
                       {"methods", flags_.methods},
                       {"paths", flags_.paths},
                       {"chase_bytes", s.chase_bytes},
                       {"chase_stride", s.chase_stride},
                       {"chase_loads", s.chase_loads},
                       {"gpus_per_process", flags_.gpus_per_process},
                       {"timeout_s", s.timeout_s},
                       {"sysfs_root", s.sysfs_root.string()}};
    std::vector<std::string> warnings;
    if (local_count > 1 && !one_for_the_node) {
      warnings.emplace_back(
          "p2p: more than one process on this node, each with its own GPUs: pairs are measured "
          "only between the GPUs of one process (use -g 0: the node's first process takes them "
          "all)");
    }
    session.start(plan.slots, runtime, std::move(parameters), std::move(warnings));

    std::vector<Json> records;
    if (bystander) {
      // A pretend node sharing the host (--node-name 'n{rank}') still says why it has no figures.
      if (session.speaks_for_node()) {
        P2pRecord record;
        record.origin = session.origin(0);
        record.status = RecordStatus::kSkipped;
        record.reason =
            runtime.device_count <= 0
                ? runtime.unavailable_reason
                : "this host's GPUs are measured by its first process, which speaks for "
                  "another node identity";
        records.push_back(to_json(record));
      }
      return session.finish(records, false);
    }
    if (plan.gpus.empty()) {
      P2pRecord record;
      record.origin = session.origin(0);
      record.status = plan.unavailable_status;
      record.reason = plan.unavailable_reason;
      records.push_back(to_json(record));
      if (session.show_progress()) {
        fmt::print(stderr, "commcert p2p: {}: {}\n", to_string(plan.unavailable_status),
                   plan.unavailable_reason);
      }
      return session.finish(records, false);
    }

    std::vector<GpuIdentity> gpus;
    HostNuma numa;
    numa.online_nodes = online_numa_nodes(s.sysfs_root);
    for (const GpuDescription& gpu : plan.gpus) {
      gpus.push_back(gpu.identity);
      numa.gpu_node.push_back(pci_numa_node(s.sysfs_root, gpu.identity.pci_bus_id));
    }
    std::vector<P2pTest> tests;
    P2pRun run;
    try {
      tests = plan_p2p_tests(static_cast<int>(gpus.size()), probe_peer_access(plan.gpus), numa,
                             s.selection);
      ProgressReporter progress(session.show_progress(), "p2p", static_cast<double>(tests.size()));
      std::size_t shown = 0;
      run = run_p2p_tests(s, plan.gpus, tests, [&](std::size_t done) {
        if (done == shown) return;
        progress.advance(
            static_cast<double>(done - shown),
            fmt::format("{} of {} test(s) on {} local GPU(s)", done, tests.size(), gpus.size()));
        shown = done;
      });
      progress.finish(fmt::format("{} test(s) measured", tests.size()));
    } catch (const std::exception& error) {
      P2pRecord record;
      record.origin = session.origin(0);
      record.status = RecordStatus::kError;
      record.reason = error.what();
      records.push_back(to_json(record));
      return session.finish(records, false);
    }

    for (std::size_t t = 0; t < tests.size(); ++t) {
      const P2pTest& test = tests[t];
      const P2pTestResult& result = run.results[t];
      const std::size_t streams = std::max<std::size_t>(test.streams.size(), 1);
      for (std::size_t i = 0; i < streams; ++i) {
        P2pStreamResult stream;
        stream.status = result.status;
        stream.reason = result.reason;
        if (result.status == RecordStatus::kOk && i < result.samples_s.size() && test.method) {
          const bool chase = *test.method == P2pMethod::kPointerChase;
          stream.measurement = p2p_measurement(*test.method, chase ? s.chase_bytes : s.bytes,
                                               chase ? s.chase_loads : s.copies_per_sample,
                                               s.warmup, result.samples_s[i]);
        }
        const int device = i < test.streams.size() ? test.streams[i].device : 0;
        records.push_back(to_json(p2p_record(session.origin(static_cast<std::size_t>(device)), test,
                                             i, gpus, std::move(stream))));
      }
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
