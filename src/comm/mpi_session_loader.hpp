#pragma once

#include <memory>
#include <optional>
#include <string>

#include "comm/mpi_session.hpp"
#include "runtime/library_search.hpp"
#include "runtime/shared_library.hpp"

namespace commcert {

// The MPI plugin, or why there is none. `plugin_path` is set when a plugin file was found.
struct LoadedMpi {
  std::unique_ptr<MpiSession> session;
  std::string plugin_path;
  std::string unavailable_reason;  // empty when `session` is set
};

// Where the plugin may be: $COMMCERT_MPI_PLUGIN alone when set; else beside the executable
// (build tree) and in ../lib (bundle and install layouts).
[[nodiscard]] std::vector<std::string> mpi_plugin_candidates(const EnvironmentLookup& environment,
                                                             const std::string& executable_dir);

// How many processes the launcher says this job has (OMPI_COMM_WORLD_SIZE, PMI_SIZE,
// SLURM_STEP_NUM_TASKS, ...); 1 when none says. Run without MPI, a process that is one of
// several would measure and certify alone, so such a process must refuse to run.
[[nodiscard]] int launcher_process_count(const EnvironmentLookup& environment);

// How many processes of the job the launcher placed on this node: 1 without a launcher or when
// the job has one process; else what the launcher says (OMPI_COMM_WORLD_LOCAL_SIZE,
// MPI_LOCALNRANKS, PALS_LOCAL_SIZE, MV2_COMM_WORLD_LOCAL_SIZE, or this node's entry of Slurm's
// SLURM_STEP_TASKS_PER_NODE, "2(x3),1"); 0 when several processes run and none says where.
[[nodiscard]] int launcher_local_process_count(const EnvironmentLookup& environment);

// The plugin file, opened once (which loads libmpi) but with MPI not begun: what `--version`
// reports. `error` says why there is none.
struct MpiPlugin {
  std::optional<SharedLibrary> library;
  std::string path;   // the plugin file found, even when it failed to load
  std::string error;  // empty when `library` is set
};
[[nodiscard]] const MpiPlugin& mpi_plugin();

// Loads the plugin and begins MPI. Without a plugin or its libmpi, returns the reason; the
// caller runs as one process, or fails when the launcher started several.
[[nodiscard]] LoadedMpi load_mpi_session(int* argc, char*** argv);

}  // namespace commcert
