#include "pool/slurm_client.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/process.hpp"
#include "pool/scontrol_answers.hpp"

namespace commcert {

// Only the running of scontrol is here; what is asked and what the answers mean are the pure
// functions of scontrol_answers.hpp.

std::map<std::string, SlurmNodeStatus> query_slurm_nodes(double timeout_seconds) {
  if (auto missing = missing_slurm_conf(std::getenv("SLURM_CONF"))) {
    throw RuntimeFailure(*missing);
  }
  const auto result = run_process(show_nodes_command(), timeout_seconds);
  if (auto failure = show_nodes_failure(result, timeout_seconds)) {
    throw RuntimeFailure(*failure);
  }
  auto nodes = parse_scontrol_nodes(result.output);
  // No node at all is no cluster to act on: read as an empty pool, every quarantined node would
  // be left in service as "not a Slurm node here" and the command would report success.
  if (nodes.empty()) {
    throw RuntimeFailure(
        "scontrol show node listed no node: nothing can be drained or resumed from here "
        "(is SLURM_CONF this cluster's?)");
  }
  return nodes;
}

std::vector<AppliedAction> apply_slurm_actions(const std::vector<PoolAction>& actions, bool dry_run,
                                               std::FILE* out, double timeout_seconds) {
  std::vector<AppliedAction> applied;
  for (const auto& action : actions) {
    AppliedAction done{action, true, {}};
    ActionOutcome outcome = ActionOutcome::kDryRun;
    if (action.kind != PoolActionKind::kLeave && !dry_run) {
      const auto result = run_process(action.command, timeout_seconds);
      done.ok = result.exit_code == 0;
      if (!done.ok) done.error = action_failure(result);
      outcome = done.ok ? ActionOutcome::kDone : ActionOutcome::kFailed;
    }
    fmt::print(out, "{}", action_line(action, outcome, done.error));
    applied.push_back(std::move(done));
  }
  std::fflush(out);
  return applied;
}

}  // namespace commcert
