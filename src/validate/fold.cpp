#include "validate/fold.hpp"

#include <algorithm>
#include <unordered_map>

#include "validate/checks.hpp"

namespace commcert {
namespace {

// Enough evidence lines to find the record; the rest is in the records file.
constexpr std::size_t kMaxEvidencePerReason = 3;

std::string_view check_status(Effect worst) {
  switch (worst) {
    case Effect::kQuarantine:
      return "fail";
    case Effect::kInconclusive:
      return "inconclusive";
    case Effect::kWarn:
      return "warn";
  }
  return "inconclusive";
}

}  // namespace

Reason to_reason(const Evidence& evidence, const Finding& f) {
  const ReasonSpec& spec = reason_spec(f.code);
  Reason r;
  r.code = f.code.str();
  r.effect = spec.effect;
  r.severity = spec.severity;
  r.check = f.check;
  r.rule = f.rule;
  r.message = render_template(spec.message, f.fields);
  r.action = render_template(spec.action, f.fields);
  r.gpu_index = f.gpu.index;
  if (f.gpu.uuid != kNoString) r.gpu_uuid = std::string(evidence.text(f.gpu.uuid));
  r.link = f.link;
  r.measured = f.measured;
  r.limit = f.limit;
  r.unit = f.unit;
  for (const auto& ref : f.evidence) {
    if (r.evidence.size() == kMaxEvidencePerReason) break;
    r.evidence.push_back({evidence.files.at(ref.file).path, ref.line});
  }
  return r;
}

std::vector<NodeVerdict> fold(const Evidence& evidence, std::vector<Finding> findings,
                              std::span<const NodeId> nodes,
                              std::span<const std::string> required) {
  std::unordered_map<NodeId, std::vector<Reason>> by_node;
  for (const auto& finding : findings) {
    by_node[finding.node].push_back(to_reason(evidence, finding));
  }
  findings.clear();

  std::vector<NodeVerdict> verdicts;
  verdicts.reserve(nodes.size());
  for (const NodeId node : nodes) {
    NodeVerdict v;
    v.node = evidence.node_name(node);
    auto it = by_node.find(node);
    if (it != by_node.end()) v.reasons = std::move(it->second);
    // The reason to act on first: strongest effect, then severity, then check order; stable so
    // rule order breaks remaining ties.
    // Lost input comes before the gaps it causes: it is the cause to fix.
    const auto order = [](const std::string& check) {
      return check == "input" ? 0 : check_order(check) + 1;
    };
    std::stable_sort(v.reasons.begin(), v.reasons.end(), [&](const Reason& a, const Reason& b) {
      if (a.effect != b.effect) return a.effect > b.effect;
      if (a.severity != b.severity) return a.severity > b.severity;
      if (order(a.check) != order(b.check)) return order(a.check) < order(b.check);
      return a.gpu_index < b.gpu_index;
    });
    const bool quarantine = !v.reasons.empty() && v.reasons.front().effect == Effect::kQuarantine;
    const bool inconclusive =
        !v.reasons.empty() && v.reasons.front().effect == Effect::kInconclusive;
    if (quarantine) {
      v.state = NodeState::kQuarantined;
      v.severity = v.reasons.front().severity;
    } else if (inconclusive) {
      v.state = NodeState::kInconclusive;
      v.severity = Severity::kUnknown;
    } else {
      v.state = NodeState::kCertified;
      v.severity = v.reasons.empty() ? Severity::kNone : Severity::kMonitor;
    }

    // Per check: required ones always, others when something was found about them.
    std::vector<std::pair<std::string, Effect>> worst;
    for (const auto& check : required)
      worst.emplace_back(check, Effect::kWarn);
    std::vector<bool> touched(worst.size(), false);
    for (const auto& reason : v.reasons) {
      auto w = std::find_if(worst.begin(), worst.end(),
                            [&](const auto& entry) { return entry.first == reason.check; });
      if (w == worst.end()) {
        worst.emplace_back(reason.check, reason.effect);
        touched.push_back(true);
        continue;
      }
      const auto index = static_cast<std::size_t>(w - worst.begin());
      if (!touched[index] || reason.effect > w->second) w->second = reason.effect;
      touched[index] = true;
    }
    for (std::size_t i = 0; i < worst.size(); ++i) {
      v.checks.emplace_back(worst[i].first, touched[i] ? check_status(worst[i].second) : "pass");
    }
    verdicts.push_back(std::move(v));
  }
  std::sort(verdicts.begin(), verdicts.end(), [](const NodeVerdict& a, const NodeVerdict& b) {
    return natural_less(a.node, b.node);
  });
  return verdicts;
}

}  // namespace commcert
