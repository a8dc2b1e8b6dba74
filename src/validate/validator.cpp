#include "validate/validator.hpp"

#include <numeric>
#include <set>

#include <fmt/format.h>

#include "validate/bisect_localization.hpp"
#include "validate/fleet_stats.hpp"
#include "validate/fold.hpp"
#include "validate/metrics.hpp"
#include "validate/pair_localization.hpp"
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

// A cluster-wide figure that no single node could be blamed for (perf.unattributed) is
// explained once the pairwise rounds, or a conclusive bisection, of the same run and collective
// found the bad node or link: the culprit carries the reason, the other nodes are not held back
// by it.
void drop_explained_shortfalls(const Evidence& evidence,
                               const std::set<std::pair<std::uint32_t, std::string>>& by,
                               std::string_view method, std::vector<Finding>& findings,
                               std::vector<InputNote>& notes) {
  if (by.empty()) return;
  std::set<std::pair<std::string, std::string>> explained;  // (run id, check)
  for (const auto& [run, check] : by) {
    explained.emplace(evidence.text(evidence.runs[run].run_id), check);
  }
  const auto field = [](const Finding& f, std::string_view name) -> std::string {
    for (const auto& [key, value] : f.fields) {
      if (key == name) return value;
    }
    return {};
  };
  std::set<std::pair<std::string, std::string>> dropped;
  std::erase_if(findings, [&](const Finding& f) {
    if (f.code != "perf.unattributed") return false;
    std::pair<std::string, std::string> key{field(f, "run"), f.check};
    if (!explained.count(key)) return false;
    dropped.insert(std::move(key));
    return true;
  });
  for (const auto& [run, check] : dropped) {
    notes.push_back(
        {"localization.explained", "", 0,
         fmt::format("{} of run {} fell short in the cluster scope; {} of the same run name "
                     "the node or link responsible",
                     check, run, method)});
  }
}

}  // namespace

FleetVerdict judge(const Evidence& evidence, const Baseline& baseline, const Suite* suite,
                   std::vector<InputNote> notes, const Topology* topology) {
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
  const PairLocalization pairs = localize_pairs(evidence, baseline, topology);
  const JudgeContext context{evidence, baseline, metrics, verdict.required, nodes, pairs};
  std::vector<Finding> findings;
  for (const auto& rule : make_rules())
    rule->judge(context, findings);
  drop_explained_shortfalls(evidence, pairs.explained, "the pairwise rounds", findings, notes);
  const BisectLocalization bisection = localize_bisection(evidence, baseline);
  drop_explained_shortfalls(evidence, bisection.explained, "the bisection rounds", findings, notes);
  for (const auto& run : bisection.runs)
    notes.push_back({"localization.bisection", "", 0, run.summary(evidence)});
  for (const auto& noise : pairs.noise)
    notes.push_back({"localization.noise", "", 0, noise});
  for (const auto& mismatch : pairs.topology_notes)
    notes.push_back({"localization.topology_mismatch", "", 0, mismatch});
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
    if (c.scope == CollectiveScope::kCluster) cluster_records[c.run] = true;
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
