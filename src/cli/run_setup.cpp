#include "cli/run_setup.hpp"

#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cli/library_report.hpp"
#include "core/build_info.hpp"
#include "core/environment.hpp"
#include "core/errors.hpp"
#include "core/record.hpp"
#include "core/run_directory.hpp"
#include "health/node_gpu_index.hpp"
#include "health/pci_address.hpp"

namespace commcert {

void add_stage_options(CLI::App& app, StageOptions& options) {
  app.add_option("--out", options.results_root, "Results root; each run writes <out>/<run-id>/")
      ->envname("COMMCERT_OUT")
      ->capture_default_str();
  app.add_option("--run-id", options.run_id,
                 "Run id (default: <UTC time>-<command>-<random>); an existing run is appended to")
      ->envname("COMMCERT_RUN_ID");
  app.add_option("--node-name", options.node_name,
                 "Node name in records; '{rank}' expands to the rank (default: COMMCERT_NODE_NAME, "
                 "SLURMD_NODENAME, hostname)");
  app.add_flag("-q,--quiet", options.quiet, "No progress on stderr");
}

void validate_stage_options(const StageOptions& options) {
  if (options.run_id) validate_run_id(*options.run_id);
  // Resolving for rank 0 checks the name (or template) from the flag or the environment.
  (void)resolve_node_identity(options.node_name, 0);
}

std::vector<StageSlot> communicator_slots(const Communicator& communicator) {
  const auto devices = communicator.device_descriptions();
  const auto gpus = communicator.gpu_identities();
  std::optional<NodeGpuIndex> node_index;
  if (!gpus.empty()) node_index.emplace(nvml_library_from_environment(), "/sys");
  std::vector<StageSlot> slots(communicator.local_ranks().size());
  for (std::size_t slot = 0; slot < slots.size(); ++slot) {
    if (slot < devices.size()) slots[slot].device = devices[slot];
    if (slot < gpus.size()) {
      GpuIdentity gpu = gpus[slot];
      slots[slot].cuda_device = gpu.index;  // the backend's CUDA ordinal, before it is remapped
      // One spelling of a GPU's PCI address in every stage's records (the sysfs form health,
      // burn and membw write), whatever the backend reported, so records join on it.
      gpu.pci_bus_id = normalize_pci_bus_id(gpu.pci_bus_id).value_or(gpu.pci_bus_id);
      // The backend reports its CUDA ordinal; records carry the node-wide index health uses.
      gpu.index = node_index->index_of(gpu.pci_bus_id, gpu.index);
      slots[slot].gpu = std::move(gpu);
    }
  }
  return slots;
}

std::unique_ptr<RunOutput> open_run_output(ControlPlane& control, const StageOptions& options,
                                           std::string_view command) {
  std::string run_id;
  std::string failure;
  if (control.process_index() == 0) {
    try {
      run_id = options.run_id.value_or(make_run_id(command));
      (void)create_run_directory(options.results_root, run_id);
    } catch (const std::exception& error) {
      failure = error.what();
    }
  }
  // One exchange carries either the run id or the reason every process must stop.
  const std::string agreed =
      control.broadcast_from_root(failure.empty() ? "ok:" + run_id : "error:" + failure);
  if (agreed.starts_with("error:")) throw UsageError(agreed.substr(6));
  run_id = agreed.substr(3);
  return std::make_unique<RunOutput>(std::filesystem::path(options.results_root) / run_id, run_id,
                                     control.process_index() == 0);
}

std::vector<std::string> measurement_warnings(const ProcessGroup& group,
                                              const BackendChoice& backend) {
  std::vector<std::string> warnings;
  const unsigned cpus = std::thread::hardware_concurrency();
  if (cpus > 0 && static_cast<unsigned>(group.local_count()) > cpus) {
    warnings.push_back(fmt::format("oversubscribed: {} processes share {} CPUs on this host",
                                   group.local_count(), cpus));
  }
  if (std::string_view(build_info::kBuildType) == "Debug") warnings.push_back("debug build");
  if (backend.name == "mpi" && backend.selection == "auto") {
    warnings.push_back(fmt::format("measuring host memory over MPI ({})", backend.reason));
  }
  if (group.process_count() > 1 && !group.watchdog_can_reach_peers()) {
    warnings.push_back("MPI without MPI_THREAD_MULTIPLE: a timeout cannot name the rank that hung");
  }
  return warnings;
}

RunMeta start_meta(std::string_view command, const Invocation& invocation, const RunOutput& output,
                   const BackendChoice& backend, const ProcessGroup& group,
                   const GpuRuntimeInfo& gpu, const std::vector<RankIdentity>& ranks,
                   const std::vector<std::string>& warnings) {
  RunMeta meta;
  meta.schema = kRecordSchemaVersion;
  meta.run_id = output.run_id();
  meta.command = std::string(command);
  meta.argv = invocation.arguments;
  meta.status = "running";
  meta.exit_code = OrNull<int>();
  meta.start_time = utc_timestamp_now();
  meta.end_time = OrNull<std::string>();
  meta.commcert = MetaBuild{
      build_info::kVersion, build_info::kGitDescribe, build_info::kBuildType, build_info::kCompiler,
      MetaBuildFeatures{build_info::kWithCuda, build_info::kWithMpi, build_info::kWithVerbs}};
  meta.backend = MetaBackend{backend.name, backend.selection, backend.reason};
  const auto version_or_null = [](const std::optional<int>& v, std::string (*format)(int)) {
    return v ? OrNull<std::string>(format(*v)) : OrNull<std::string>();
  };
  const auto mpi = group.mpi_library();
  meta.versions = MetaVersions{mpi, version_or_null(gpu.nccl_version, format_nccl_version),
                               version_or_null(gpu.runtime_version, format_cuda_version),
                               version_or_null(gpu.driver_version, format_cuda_version)};
  meta.libraries = meta_libraries(runtime_libraries(mpi));
  meta.nodes = distinct_nodes(ranks);
  meta.processes = group.process_count();
  meta.ranks = ranks;
  const Json recorded = recorded_environment();  // items() refers to it: keep it alive
  std::vector<std::pair<std::string, std::string>> environment;
  environment.reserve(recorded.size());
  for (const auto& [name, value] : recorded.items())
    environment.emplace_back(name, value.get<std::string>());
  meta.environment = std::move(environment);
  meta.warnings = warnings;
  return meta;
}

}  // namespace commcert
