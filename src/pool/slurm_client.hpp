#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "pool/slurm_actions.hpp"

namespace commcert {

// Every node Slurm knows, from one `scontrol -o show node`. Throws RuntimeFailure when scontrol
// cannot be run or fails (no controller, no configuration).
[[nodiscard]] std::map<std::string, SlurmNodeStatus> query_slurm_nodes(double timeout_seconds = 30);

struct AppliedAction {
  PoolAction action;
  bool ok = true;
  std::string error;  // scontrol's message when it failed
};

// Runs each action's scontrol command (argument vector, no shell), or only prints them with
// `dry_run`. One line per node on `out`: "drain node3: commcert: ...", "resume node1", or
// "leave node2: <why>". Failures are reported, not thrown, so one bad node does not stop the rest.
std::vector<AppliedAction> apply_slurm_actions(const std::vector<PoolAction>& actions, bool dry_run,
                                               std::FILE* out, double timeout_seconds = 30);

}  // namespace commcert
