#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// What the validator decided about a node, as the pool needs it.
enum class NodeDecisionState { kCertified, kQuarantined, kInconclusive };

struct NodeDecision {
  std::string node;
  NodeDecisionState state = NodeDecisionState::kInconclusive;
  std::string reason;  // first reason, for a quarantined node
};

// A node as Slurm reports it (`scontrol -o show node`).
struct SlurmNodeStatus {
  std::string state;   // e.g. IDLE, IDLE+DRAIN, ALLOCATED+DRAIN, DOWN+DRAIN
  std::string reason;  // empty when none
  [[nodiscard]] bool drained() const;
  [[nodiscard]] bool drained_by_commcert() const;
};

enum class PoolActionKind { kDrain, kResume, kLeave };

struct PoolAction {
  std::string node;
  PoolActionKind kind = PoolActionKind::kLeave;
  std::string reason;                // the drain reason set (kDrain)
  std::string why;                   // one line for the operator: why this action (or none)
  std::vector<std::string> command;  // the scontrol argument vector; empty for kLeave
};

// Every drain reason commcert sets starts with this, and only such drains are ever resumed.
inline constexpr std::string_view kReasonPrefix = "commcert: ";
// Slurm keeps reasons as free text; long ones are unreadable in `sinfo -R`, so cut them here.
inline constexpr std::size_t kMaxReasonLength = 200;

// "commcert: <reason>", printable ASCII only, whitespace collapsed, cut to kMaxReasonLength.
[[nodiscard]] std::string slurm_reason(std::string_view reason);

// Decides, without touching Slurm (pure, so it is tested without a cluster):
//   quarantined  -> drain with "commcert: <first reason>", unless a person or another tool
//                   drained it already (their reason is kept; NHC's convention);
//   certified    -> resume only when drained and the reason is commcert's;
//   inconclusive -> nothing: never resumed, never drained on missing evidence.
// A node Slurm does not know is left alone with a note. Node names must be valid node names
// (validate_node_name); invalid ones are left alone too.
[[nodiscard]] std::vector<PoolAction> plan_slurm_actions(
    const std::vector<NodeDecision>& decisions,
    const std::map<std::string, SlurmNodeStatus>& current);

// Parses one line of `scontrol -o show node NAME`; nullopt when it holds no NodeName.
[[nodiscard]] std::optional<std::pair<std::string, SlurmNodeStatus>> parse_scontrol_node(
    std::string_view line);

}  // namespace commcert
