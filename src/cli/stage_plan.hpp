#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/run_setup.hpp"
#include "validate/baseline.hpp"
#include "validate/suite.hpp"

namespace commcert {

// One stage of a suite made ready to run: its command with the suite's arguments plus the run's
// shared ones (--out, --run-id, --node-name, -q), parsed by the stage's own parser.
struct PlannedStage {
  SuiteStage stage;
  std::vector<std::string> argv;  // "commcert", command, arguments...
  bool skipped = false;           // not run under this baseline
  std::string skip_reason;
};

// A stage command, configured and parsed, ready for Command::run.
struct ParsedStage {
  std::unique_ptr<Command> command;
  std::unique_ptr<CLI::App> app;
};

// The stage's command line with the run's shared options appended.
[[nodiscard]] std::vector<std::string> stage_argv(const SuiteStage& stage,
                                                  const StageOptions& shared,
                                                  const std::string& run_id);

// Parses a stage's command line with that command's parser. Throws UsageError naming the suite
// line of the stage's arguments and the parser's complaint.
[[nodiscard]] ParsedStage parse_stage(const SuiteStage& stage,
                                      const std::vector<std::string>& argv);

// Every stage of the suite, checked before anything runs: unknown flags, bad values and options
// the run sets itself are errors naming the suite line. Stages that need a GPU are skipped when
// the baseline says the nodes have none.
[[nodiscard]] std::vector<PlannedStage> plan_stages(const Suite& suite, const Baseline& baseline,
                                                    const StageOptions& shared);

// A job of one process checks its whole node: a burn, membw or sweep stage whose suite arguments
// do not say how many GPUs to drive gets every visible one (burn and membw `-g 0`; a sweep
// `-g N` on the nccl backend). Unchanged in a job of several processes (one per GPU), without a
// GPU, or for a sweep the suite puts on the mpi backend.
[[nodiscard]] SuiteStage with_every_local_gpu(SuiteStage stage, int processes, int visible_gpus);

// The same sweep in the pairs scope: the localization step after a cluster-scope shortfall.
[[nodiscard]] SuiteStage pairs_stage_of(const SuiteStage& sweep);

// Round `round` (from 0) of a bisection of a sweep stage: the same sweep on the node groups
// `groups` ("a,b;c,d", sweep --groups), stage NAME-bisectN.
[[nodiscard]] SuiteStage bisection_stage_of(const SuiteStage& sweep, const std::string& groups,
                                            int round);

// A sweep of every node pair (scope pairs, no --pair-list): its suspects are re-tested before
// any is blamed, whether the suite asked for it or localization did.
[[nodiscard]] bool measures_all_pairs(const SuiteStage& stage);

// The pairs stage on the listed pairs only ("a:b,c:d"): suspects against known-good nodes.
[[nodiscard]] SuiteStage retest_stage_of(const SuiteStage& pairs, const std::string& pair_list);

}  // namespace commcert
