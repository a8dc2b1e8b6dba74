#include "history/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace commcert {

const char* change_kind_name(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kRegression:
      return "regression";
    case ChangeKind::kUntestedDrop:
      return "drop-untested";
    case ChangeKind::kLost:
      return "lost";
    case ChangeKind::kImprovement:
      return "improvement";
    case ChangeKind::kNoise:
      return "noise";
    case ChangeKind::kUnchanged:
      return "unchanged";
    case ChangeKind::kNew:
      return "new";
  }
  return "?";
}

bool fails_gate(ChangeKind kind) {
  return kind == ChangeKind::kRegression || kind == ChangeKind::kUntestedDrop;
}

MetricChange judge_change(const RunFigure& a, const RunFigure& b, const CompareOptions& options) {
  MetricChange change;
  change.a = a;
  change.b = b;
  // A zero baseline cannot be divided by: any rise from it is new capability, not a change.
  change.change_pct = a.value > 0 ? (b.value - a.value) * 100.0 / a.value : 0.0;
  if (a.moments && b.moments) change.test = welch_t_test(*a.moments, *b.moments);
  if (std::abs(change.change_pct) < options.threshold_pct) {
    change.kind = ChangeKind::kUnchanged;
    return change;
  }
  const bool dropped = change.change_pct < 0;
  if (!change.test) {
    change.kind = dropped ? ChangeKind::kUntestedDrop : ChangeKind::kImprovement;
    return change;
  }
  if (!change.test->significant()) {
    change.kind = ChangeKind::kNoise;
    return change;
  }
  change.kind = dropped ? ChangeKind::kRegression : ChangeKind::kImprovement;
  return change;
}

std::vector<MetricChange> compare_metrics(const std::vector<RunFigure>& a,
                                          const std::vector<RunFigure>& b,
                                          const CompareOptions& options) {
  std::map<std::string, const RunFigure*> candidates;
  for (const auto& sample : b)
    candidates.emplace(sample.key(), &sample);
  std::vector<MetricChange> changes;
  for (const auto& sample : a) {
    const auto it = candidates.find(sample.key());
    if (it == candidates.end()) {
      MetricChange lost;
      lost.a = sample;
      lost.kind = ChangeKind::kLost;
      changes.push_back(std::move(lost));
      continue;
    }
    changes.push_back(judge_change(sample, *it->second, options));
    candidates.erase(it);
  }
  for (const auto& sample : b) {
    if (!candidates.count(sample.key())) continue;
    MetricChange added;
    added.b = sample;
    added.kind = ChangeKind::kNew;
    changes.push_back(std::move(added));
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const MetricChange& x, const MetricChange& y) {
                     if (x.kind != y.kind) return x.kind < y.kind;
                     return x.change_pct < y.change_pct;
                   });
  return changes;
}

}  // namespace commcert
