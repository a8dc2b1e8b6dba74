#include "comm/mpi_session_loader.hpp"

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
