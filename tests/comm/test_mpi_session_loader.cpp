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

TEST(LauncherLocalProcessCount, OneAloneOrWhereTheLauncherSaysOnePerNode) {
  EXPECT_EQ(launcher_local_process_count(environment_of({})), 1);
  EXPECT_EQ(launcher_local_process_count(environment_of({{"OMPI_COMM_WORLD_SIZE", "1"}})), 1);
  // One process per node on four nodes: each is alone on its node.
  EXPECT_EQ(launcher_local_process_count(environment_of(
                {{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}})),
            1);
  for (const char* variable : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PALS_LOCAL_SIZE",
                               "MV2_COMM_WORLD_LOCAL_SIZE"}) {
    EXPECT_EQ(launcher_local_process_count(environment_of({{"PMI_SIZE", "16"}, {variable, "8"}})),
              8)
        << variable;
  }
}

TEST(LauncherLocalProcessCount, SlurmsTasksPerNodeAtThisNode) {
  const auto on_node = [](const char* per_node, const char* node) {
    return launcher_local_process_count(environment_of({{"SLURM_STEP_NUM_TASKS", "7"},
                                                        {"SLURM_STEP_TASKS_PER_NODE", per_node},
                                                        {"SLURM_NODEID", node}}));
  };
  // Two tasks on each of the first three nodes, one on the fourth.
  EXPECT_EQ(on_node("2(x3),1", "0"), 2);
  EXPECT_EQ(on_node("2(x3),1", "2"), 2);
  EXPECT_EQ(on_node("2(x3),1", "3"), 1);
  EXPECT_EQ(on_node("1(x7)", "6"), 1);
  // Past the last node, or text that is not Slurm's: unknown.
  EXPECT_EQ(on_node("2(x3),1", "4"), 0);
  for (const char* text : {"", "x", "2(x3", "2(3)", "0", "-1(x2)", "2(x0)", "2,,1"})
    EXPECT_EQ(on_node(text, "1"), 0) << text;
}

TEST(LauncherLocalProcessCount, SeveralProcessesAndNoLocalCountIsUnknownNotAlone) {
  // Unknown is never taken for alone: each process would then drive every GPU of the node.
  EXPECT_EQ(launcher_local_process_count(environment_of({{"OMPI_COMM_WORLD_SIZE", "4"}})), 0);
  EXPECT_EQ(launcher_local_process_count(
                environment_of({{"PMI_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "x"}})),
            0);
}

}  // namespace
}  // namespace commcert
