// Where the MPI plugin is looked for, and when a process without MPI must refuse to run.
#include <map>

#include <gtest/gtest.h>

#include "comm/mpi_session_loader.hpp"

namespace commcert {
namespace {

EnvironmentLookup environment_of(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    auto found = variables.find(name);
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

TEST(MpiPluginCandidates, BesideTheBinaryThenInTheBundlesLib) {
  EXPECT_EQ(mpi_plugin_candidates(environment_of({}), "/opt/commcert/bin"),
            (std::vector<std::string>{"/opt/commcert/bin/libcommcert-mpi.so",
                                      "/opt/commcert/lib/libcommcert-mpi.so"}));
}

TEST(MpiPluginCandidates, TheVariableAloneWhenSet) {
  EXPECT_EQ(mpi_plugin_candidates(environment_of({{"COMMCERT_MPI_PLUGIN", "/x/p.so"}}), "/bin"),
            (std::vector<std::string>{"/x/p.so"}));
}

TEST(LauncherProcessCount, OneWithoutALauncher) {
  EXPECT_EQ(launcher_process_count(environment_of({})), 1);
  EXPECT_EQ(launcher_process_count(environment_of({{"SLURM_PROCID", "0"}})), 1)
      << "an srun task alone says nothing about how many there are";
}

TEST(LauncherProcessCount, ReadsEachLaunchersVariable) {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS",
                               "SLURM_STEP_NUM_TASKS"}) {
    EXPECT_EQ(launcher_process_count(environment_of({{variable, "4"}})), 4) << variable;
    EXPECT_EQ(launcher_process_count(environment_of({{variable, "1"}})), 1) << variable;
  }
}

TEST(LauncherProcessCount, IgnoresValuesThatAreNotCounts) {
  EXPECT_EQ(launcher_process_count(environment_of({{"OMPI_COMM_WORLD_SIZE", "x"}})), 1);
  EXPECT_EQ(
      launcher_process_count(environment_of({{"PMI_SIZE", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}})),
      2);
}

}  // namespace
}  // namespace commcert
