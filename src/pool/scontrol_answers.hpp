#pragma once

// What commcert asks scontrol, what scontrol's answers mean, and the lines an operator reads
// about them. Pure (no process is run here), so all of it is unit tested; slurm_client.cpp only
// runs the commands, and the `slurm` integration tests prove the two together against a real
// Slurm.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "pool/slurm_actions.hpp"

namespace commcert {

// The argument vector that lists every node Slurm knows, one line each.
[[nodiscard]] std::vector<std::string> show_nodes_command();

// Why Slurm cannot be asked at all, decided before asking: SLURM_CONF (its value, or null when
// unset) names a file that does not exist, which scontrol would retry for a minute. nullopt when
// scontrol may be run.
[[nodiscard]] std::optional<std::string> missing_slurm_conf(const char* slurm_conf);

// The line of scontrol's stderr that names the problem: its last "fatal:" line (the ones before
// are the attempts that led there), else its first non-empty line, else "no message".
[[nodiscard]] std::string scontrol_failure_line(std::string_view error);

// Why `show_nodes_command()` gave no answer (it timed out or failed); nullopt when it answered.
[[nodiscard]] std::optional<std::string> show_nodes_failure(const ProcessResult& result,
                                                            double timeout_seconds);

// Every node in the output of `scontrol -o show node`, by its exact NodeName; lines without a
// NodeName are skipped. A NodeName that is no valid node name (validate_node_name, the check of
// --node-name) throws RuntimeFailure naming its line: no verdict can name such a node, and a
// name is never changed into another (which could be a different node's).
[[nodiscard]] std::map<std::string, SlurmNodeStatus> parse_scontrol_nodes(std::string_view output);

// What became of one drain or resume.
enum class ActionOutcome { kDryRun, kDone, kFailed };

// The error to report for a drain or resume whose scontrol failed: "timed out", or the first
// line of its stderr.
[[nodiscard]] std::string action_failure(const ProcessResult& result);

// The operator's line for one action, newline included: "drain  node3: commcert: ...",
// "resume node1", "... (dry run)", "FAILED drain  node3: <error>", or for kLeave
// "leave  node2: <why>" (whatever the outcome). Text that can come from an edited record is
// escaped, so each action stays one line.
[[nodiscard]] std::string action_line(const PoolAction& action, ActionOutcome outcome,
                                      std::string_view error = {});

}  // namespace commcert
