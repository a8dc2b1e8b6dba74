// `commcert run` as the only process on its node checks the whole node: the stages that drive
// GPUs get every visible one unless the suite says how many (with_every_local_gpu).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/stage_plan.hpp"

namespace commcert {
namespace {

SuiteStage stage_of(std::string command, std::vector<std::string> args) {
  SuiteStage stage;
  stage.name = command;
  stage.command = std::move(command);
  stage.args = std::move(args);
  return stage;
}

std::vector<std::string> args_after(const SuiteStage& stage, int processes, int gpus) {
  return with_every_local_gpu(stage, processes, gpus).args;
}

TEST(EveryLocalGpu, AOneProcessJobDrivesEveryGpuOfTheNode) {
  using Args = std::vector<std::string>;
  EXPECT_EQ(args_after(stage_of("burn", {"--duration", "60s"}), 1, 8),
            (Args{"--duration", "60s", "-g", "0"}));
  EXPECT_EQ(args_after(stage_of("membw", {}), 1, 8), (Args{"-g", "0"}));
  EXPECT_EQ(args_after(stage_of("sweep", {"allreduce", "--scope", "node"}), 1, 8),
            (Args{"allreduce", "--scope", "node", "-g", "8"}));
  // One GPU is still every GPU: the sweep says so rather than relying on the default.
  EXPECT_EQ(args_after(stage_of("sweep", {}), 1, 1), (Args{"-g", "1"}));
}

TEST(EveryLocalGpu, SeveralProcessesOrNoGpuLeaveTheStageAsTheSuiteWroteIt) {
  const SuiteStage sweep = stage_of("sweep", {"allreduce"});
  EXPECT_EQ(args_after(sweep, 2, 8), sweep.args);  // one process per GPU: the launcher decides
  EXPECT_EQ(args_after(sweep, 8, 8), sweep.args);
  EXPECT_EQ(args_after(sweep, 1, 0), sweep.args);  // a CPU run
  const SuiteStage burn = stage_of("burn", {});
  EXPECT_EQ(args_after(burn, 2, 8), burn.args);
  EXPECT_EQ(args_after(burn, 1, 0), burn.args);
}

TEST(EveryLocalGpu, TheSuitesOwnGpuCountWins) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-g", "2"}, {"--ngpus", "2"}, {"--ngpus=2"}, {"-g2"}}) {
    EXPECT_EQ(args_after(stage_of("sweep", args), 1, 8), args);
    EXPECT_EQ(args_after(stage_of("burn", args), 1, 8), args);
  }
}

TEST(EveryLocalGpu, ASweepOnTheMpiBackendAndStagesWithoutGpusAreLeftAlone) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--backend", "mpi"}, {"--backend=mpi"}}) {
    EXPECT_EQ(args_after(stage_of("sweep", args), 1, 8), args);
  }
  EXPECT_EQ(args_after(stage_of("sweep", {"--backend", "nccl"}), 1, 4),
            (std::vector<std::string>{"--backend", "nccl", "-g", "4"}));
  // -G (CUDA graphs) and --gid-index are not -g.
  EXPECT_EQ(args_after(stage_of("sweep", {"-G", "2"}), 1, 4),
            (std::vector<std::string>{"-G", "2", "-g", "4"}));
  for (const char* command : {"health", "links", "p2p"}) {
    EXPECT_TRUE(args_after(stage_of(command, {}), 1, 8).empty()) << command;
  }
}

}  // namespace
}  // namespace commcert
