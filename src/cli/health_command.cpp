#include "cli/health_command.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "cli/library_report.hpp"
#include "cli/stage_session.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/units.hpp"
#include "health/node_health.hpp"

namespace commcert {

void HealthCommand::configure(CLI::App& app) {
  app.add_option("--sysfs-root", flags_.sysfs_root,
                 "Where sysfs is (InfiniBand ports under <root>/class/infiniband)")
      ->envname("COMMCERT_SYSFS_ROOT")
      ->capture_default_str();
  app.add_option("--nvml-library", flags_.nvml_library, "NVML to load (soname or path)")
      ->envname("COMMCERT_NVML_LIBRARY")
      ->capture_default_str();
  app.add_option("--watch", flags_.watch, "Listen for Xid events this long before reporting")
      ->capture_default_str();
  stage_.add_to(app);
}

HealthCommand::Resolved HealthCommand::resolve_options() const {
  Resolved out;
  std::error_code error;
  if (!std::filesystem::is_directory(flags_.sysfs_root, error)) {
    throw UsageError(fmt::format("--sysfs-root {}: not a directory", flags_.sysfs_root));
  }
  out.options.sysfs_root = flags_.sysfs_root;
  out.options.nvml_library = flags_.nvml_library;
  out.options.watch_seconds = parse_duration_seconds(flags_.watch, "--watch");
  out.timeout_s = stage_.timeout_s();
  return out;
}

int HealthCommand::run(Invocation& invocation) {
  stage_.validate_output();
  // Named references, not a structured binding: lambdas below capture them, which clang 14
  // (what clang-tidy runs) refuses for bindings.
  const Resolved resolved = resolve_options();
  const HealthOptions& options = resolved.options;
  const double timeout_s = resolved.timeout_s;

  const GpuRuntimeInfo runtime = probe_gpu_runtime();
  // Waiting for Xids is part of the stage: peers wait at most the watch time plus the timeout.
  StageSession session(invocation, name(), "health", stage_.output(),
                       timeout_s + options.watch_seconds);
  // A health stage that fails or times out as a whole says so for the node's component.
  session.set_failure_component(HealthRecord::kComponentNode);
  return session.run([&] {
    Json parameters = {{"sysfs_root", options.sysfs_root.string()},
                       {"nvml_library", options.nvml_library},
                       {"watch_s", options.watch_seconds},
                       {"timeout_s", timeout_s}};
    session.start({StageSlot{}}, runtime, std::move(parameters), {});
    // One process speaks for each node: NVML and sysfs show the whole node to every process.
    std::vector<Json> records;
    if (session.speaks_for_node()) records = node_records(session, options);
    return session.finish(records, false);
  });
}

std::vector<Json> HealthCommand::node_records(StageSession& session,
                                              const HealthOptions& options) const {
  ProgressReporter progress(session.show_progress() && options.watch_seconds > 0, "health",
                            options.watch_seconds);
  double shown = 0;
  const NodeHealth health = collect_node_health(options, [&](double elapsed, double /*total*/) {
    progress.advance(elapsed - shown, "listening for Xid events");
    shown = elapsed;
  });
  if (session.show_progress()) {
    fmt::print(
        stderr, "commcert health: {} GPU(s), {} IB port(s) on {}{}\n",
        health.gpu_count ? fmt::format("{}", *health.gpu_count) : std::string("no"),
        health.ib.ports.size(), session.node(),
        health.nvml_unavailable_reason.empty() ? "" : " (" + health.nvml_unavailable_reason + ")");
    fmt::print(stderr, "commcert health: libraries (also in meta.json):\n{}",
               format_library_lines(runtime_libraries(session.group().mpi_library())));
  }
  return node_health_records(health, session.origin(0));
}

}  // namespace commcert
