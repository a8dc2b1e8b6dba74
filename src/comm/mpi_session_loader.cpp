#include "comm/mpi_session_loader.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace commcert {
namespace {

bool exists(const std::string& path) {
  std::error_code error;
  return std::filesystem::exists(path, error);
}

}  // namespace

std::vector<std::string> mpi_plugin_candidates(const EnvironmentLookup& environment,
                                               const std::string& executable_dir) {
  if (auto path = environment(kMpiPluginVariable)) return {*path};
  if (executable_dir.empty()) return {};
  const std::filesystem::path here(executable_dir);
  return {(here / kMpiPluginFile).string(),
          (here.parent_path() / "lib" / kMpiPluginFile).lexically_normal().string()};
}

int launcher_process_count(const EnvironmentLookup& environment) {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS",
                               "SLURM_STEP_NUM_TASKS"}) {
    if (auto value = environment(variable)) {
      const int count = std::atoi(value->c_str());
      if (count > 0) return count;
    }
  }
  return 1;
}

namespace {

// SLURM_STEP_TASKS_PER_NODE ("2(x3),1": two tasks on each of the first three nodes, one on the
// fourth) at node `node`; 0 when the text does not say.
int slurm_tasks_on_node(const std::string& text, int node) {
  std::size_t start = 0;
  while (start <= text.size() && node >= 0) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string entry = text.substr(start, end - start);
    int tasks = 0;
    int repeat = 1;
    char tail = 0;
    const int read = std::sscanf(entry.c_str(), "%d(x%d%c", &tasks, &repeat, &tail);
    const bool plain = read == 1 && entry.find('(') == std::string::npos;
    if (!(plain || (read == 3 && tail == ')')) || tasks <= 0 || repeat <= 0) return 0;
    if (node < repeat) return tasks;
    node -= repeat;
    start = end + 1;
  }
  return 0;
}

}  // namespace

int launcher_local_process_count(const EnvironmentLookup& environment) {
  if (launcher_process_count(environment) == 1) return 1;
  for (const char* variable : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PALS_LOCAL_SIZE",
                               "MV2_COMM_WORLD_LOCAL_SIZE"}) {
    if (auto value = environment(variable)) {
      const int count = std::atoi(value->c_str());
      if (count > 0) return count;
    }
  }
  const auto per_node = environment("SLURM_STEP_TASKS_PER_NODE");
  const auto node = environment("SLURM_NODEID");
  if (per_node && node) return slurm_tasks_on_node(*per_node, std::atoi(node->c_str()));
  return 0;
}

const MpiPlugin& mpi_plugin() {
  static const MpiPlugin kPlugin = [] {
    MpiPlugin found;
    const auto environment = process_environment();
    for (const auto& candidate : mpi_plugin_candidates(environment, executable_directory())) {
      if (exists(candidate)) {
        found.path = candidate;
        break;
      }
    }
    if (found.path.empty()) {
      const auto named = environment(kMpiPluginVariable);
      found.error =
          named ? fmt::format("{} names {}, which does not exist", kMpiPluginVariable, *named)
                : fmt::format("{} is not installed beside the binary", kMpiPluginFile);
      return found;
    }
    std::string error;
    // Global: Open MPI's own components, loaded later by libmpi, look for its symbols there.
    found.library = SharedLibrary::open(found.path, /*global=*/true, error);
    if (!found.library) found.error = fmt::format("cannot load the MPI plugin: {}", error);
    return found;
  }();
  return kPlugin;
}

LoadedMpi load_mpi_session(int* argc, char*** argv) {
  LoadedMpi loaded;
  const MpiPlugin& plugin = mpi_plugin();
  loaded.plugin_path = plugin.path;
  if (!plugin.library) {
    loaded.unavailable_reason = plugin.error;
    return loaded;
  }
  auto make = reinterpret_cast<MakeMpiSession>(plugin.library->symbol(kMpiPluginEntryPoint));
  if (!make) {
    loaded.unavailable_reason = fmt::format("{} has no {} (a plugin of another commcert build?)",
                                            plugin.path, kMpiPluginEntryPoint);
    return loaded;
  }
  loaded.session.reset(make(argc, argv));
  return loaded;
}

}  // namespace commcert
