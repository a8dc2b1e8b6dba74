#include "pool/slurm_actions.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/node_identity.hpp"

namespace commcert {

bool SlurmNodeStatus::drained() const {
  return state.find("DRAIN") != std::string::npos || state.find("FAIL") != std::string::npos;
}

bool SlurmNodeStatus::drained_by_commcert() const {
  return drained() && reason.starts_with(kReasonPrefix);
}

std::string slurm_reason(std::string_view reason) {
  std::string text(kReasonPrefix);
  bool space = false;
  for (const char c : reason) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      space = true;  // control characters, newlines and non-ASCII become one space
      continue;
    }
    if (space && text.size() > kReasonPrefix.size()) text.push_back(' ');
    space = false;
    text.push_back(c);
  }
  if (text.size() > kMaxReasonLength) text = text.substr(0, kMaxReasonLength - 3) + "...";
  return text;
}

std::vector<PoolAction> plan_slurm_actions(const std::vector<NodeDecision>& decisions,
                                           const std::map<std::string, SlurmNodeStatus>& current) {
  std::vector<PoolAction> actions;
  for (const auto& decision : decisions) {
    PoolAction action;
    action.node = decision.node;
    try {
      validate_node_name(decision.node, "the verdict");
    } catch (const UsageError& error) {
      action.why = error.what();
      actions.push_back(std::move(action));
      continue;
    }
    const auto found = current.find(decision.node);
    if (found == current.end()) {
      action.why = "not a Slurm node here";
      actions.push_back(std::move(action));
      continue;
    }
    const SlurmNodeStatus& status = found->second;
    switch (decision.state) {
      case NodeDecisionState::kQuarantined: {
        const std::string reason = slurm_reason(decision.reason);
        if (status.drained() && !status.drained_by_commcert()) {
          action.why = fmt::format("already drained by someone else ({}); their reason is kept",
                                   status.reason.empty() ? "no reason" : status.reason);
        } else if (status.drained_by_commcert() && status.reason == reason) {
          action.why = "already drained for this reason";
        } else {
          action.kind = PoolActionKind::kDrain;
          action.reason = reason;
          action.why = "quarantined";
          action.command = {"scontrol", "update", "NodeName=" + decision.node, "State=DRAIN",
                            "Reason=" + reason};
        }
        break;
      }
      case NodeDecisionState::kCertified:
        if (status.drained_by_commcert()) {
          action.kind = PoolActionKind::kResume;
          action.why = "certified; it was drained by commcert";
          action.command = {"scontrol", "update", "NodeName=" + decision.node, "State=RESUME"};
        } else if (status.drained()) {
          action.why = fmt::format("certified, but drained by someone else ({}); left drained",
                                   status.reason.empty() ? "no reason" : status.reason);
        } else {
          action.why = "certified; in service";
        }
        break;
      case NodeDecisionState::kInconclusive:
        action.why = "inconclusive: neither drained nor resumed";
        break;
    }
    actions.push_back(std::move(action));
  }
  return actions;
}

std::optional<std::pair<std::string, SlurmNodeStatus>> parse_scontrol_node(std::string_view line) {
  const auto value_of = [&](std::string_view key) -> std::optional<std::string> {
    const std::string marker = std::string(key) + "=";
    std::size_t at = 0;
    // Match the key at a field boundary only (start of line or after a space).
    while ((at = line.find(marker, at)) != std::string_view::npos) {
      if (at == 0 || line[at - 1] == ' ') break;
      at += marker.size();
    }
    if (at == std::string_view::npos) return std::nullopt;
    const auto start = at + marker.size();
    return std::string(line.substr(start, line.find(' ', start) - start));
  };
  const auto name = value_of("NodeName");
  if (!name || name->empty()) return std::nullopt;
  SlurmNodeStatus status;
  status.state = value_of("State").value_or("");
  // Reason is free text up to " [user@time]" (or the end of the line).
  if (const auto at = line.find(" Reason="); at != std::string_view::npos) {
    std::string_view rest = line.substr(at + 8);
    const auto stamp = rest.rfind(" [");
    status.reason = std::string(stamp == std::string_view::npos ? rest : rest.substr(0, stamp));
    while (!status.reason.empty() && status.reason.back() == ' ')
      status.reason.pop_back();
    if (status.reason == "(null)") status.reason.clear();
  }
  return std::make_pair(*name, status);
}

}  // namespace commcert
