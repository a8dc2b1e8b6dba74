#include "validate/validator.hpp"

#include <numeric>
#include <set>

#include <fmt/format.h>

#include "validate/fleet_stats.hpp"
#include "validate/fold.hpp"
#include "validate/metrics.hpp"
#include "validate/rules/rule.hpp"

namespace commcert {
namespace {

std::vector<FleetMetricSummary> fleet_summary(const MetricTable& metrics) {
  std::vector<FleetMetricSummary> out;
  for (const auto& series : metrics.series()) {
    std::vector<double> values;
    std::set<NodeId> nodes;
    for (const auto& s : series.samples) {
      if (!s.attributable) continue;
      values.push_back(s.value);
      nodes.insert(s.node);
    }
    if (values.empty()) continue;
    const RobustStats stats = robust_stats(values);
    out.push_back({series.info.id, series.info.unit, values.size(), nodes.size(), stats.median,
                   stats.mad, stats.min, stats.max});
  }
  return out;
}

}  // namespace

FleetVerdict judge(const Evidence& evidence, const Baseline& baseline, const Suite* suite,
                   std::vector<InputNote> notes) {
  FleetVerdict verdict;
  verdict.baseline_path = baseline.path;
  verdict.sku = baseline.sku;
  if (suite) {
    verdict.suite_path = suite->path;
    verdict.suite_name = suite->name;
  }
  verdict.required = suite ? required_checks(*suite, baseline) : baseline.required;
  verdict.inputs = evidence.files;

  std::vector<NodeId> nodes(evidence.nodes.size());
  std::iota(nodes.begin(), nodes.end(), NodeId{0});
  const MetricTable metrics(evidence, baseline);
  const JudgeContext context{evidence, baseline, metrics, verdict.required, nodes};
  std::vector<Finding> findings;
  for (const auto& rule : make_rules())
    rule->judge(context, findings);
  verdict.nodes = fold(evidence, std::move(findings), nodes, verdict.required);
  verdict.fleet = fleet_summary(metrics);

  // Every input problem in one place; the state-changing ones are node reasons as well.
  for (const auto& issue : evidence.issues) {
    notes.push_back(
        {issue.code, evidence.files[issue.ref.file].path, issue.ref.line, issue.detail});
  }
  std::vector<bool> cluster_records(evidence.runs.size(), false);
  std::vector<std::size_t> other_scope(evidence.runs.size(), 0);
  for (const auto& c : evidence.collectives) {
    if (c.scope != CollectiveScope::kNode) cluster_records[c.run] = true;
    if (c.scope == CollectiveScope::kOther) ++other_scope[c.run];
  }
  for (std::size_t i = 0; i < evidence.runs.size(); ++i) {
    if (other_scope[i] == 0) continue;
    notes.push_back({"input.unknown_scope", "", 0,
                     fmt::format("{} collective record(s) of run {} have a scope other than node "
                                 "or cluster: their wrong data and timeouts are judged, their "
                                 "bandwidth is not and they are no evidence for a check",
                                 other_scope[i], evidence.text(evidence.runs[i].run_id))});
  }
  for (std::size_t i = 0; i < evidence.runs.size(); ++i) {
    if (evidence.runs[i].has_rank_map || !cluster_records[i]) continue;
    notes.push_back({"input.no_rank_map", "", 0,
                     fmt::format("run {} has no run record (rank map): its collective records "
                                 "speak only for the nodes they name",
                                 evidence.text(evidence.runs[i].run_id))});
  }
  verdict.notes = std::move(notes);
  return verdict;
}

}  // namespace commcert
