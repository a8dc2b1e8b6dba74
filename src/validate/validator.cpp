#include "validate/validator.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/units.hpp"
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
    // The figures the fleet rules judge: each node's own (MetricSeries::own).
    for (const auto& s : series.own) {
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

// A record of a fault that another reason of its node already cites (the gap it explains, the
// quarantine it caused) is not given a second reason by rule.fault_evidence.
void drop_repeated_faults(std::vector<Finding>& findings) {
  const auto of_faults = [](const Finding& f) { return f.rule == "rule.fault_evidence"; };
  if (std::none_of(findings.begin(), findings.end(), of_faults)) return;
  std::set<std::tuple<NodeId, std::uint32_t, std::uint32_t>> cited;  // (node, file, line)
  for (const auto& f : findings) {
    if (of_faults(f) || reason_spec(f.code).effect == Effect::kWarn) continue;
    for (const auto& ref : f.evidence)
      cited.emplace(f.node, ref.file, ref.line);
  }
  std::erase_if(findings, [&](const Finding& f) {
    if (!of_faults(f) || f.code == "input.meta_disagrees") return false;
    return std::all_of(f.evidence.begin(), f.evidence.end(), [&](const EvidenceRef& ref) {
      return cited.count({f.node, ref.file, ref.line}) > 0;
    });
  });
}

// A run that says it went well while records of a fault are inside: a note per run (the nodes
// those records weigh on carry input.meta_disagrees).
void meta_disagreements(const Evidence& evidence, std::vector<InputNote>& notes) {
  std::map<std::uint32_t, std::pair<const FaultRecord*, std::size_t>> by_file;
  for (const auto& f : evidence.faults) {
    if (!evidence.files[f.ref.file].says_it_went_well()) continue;
    auto& [first, count] = by_file[f.ref.file];
    if (!first) first = &f;
    ++count;
  }
  for (const auto& [file, value] : by_file) {
    const auto& [first, count] = value;
    const InputFileSummary& summary = evidence.files[file];
    notes.push_back(
        {"input.meta_disagrees", summary.meta_path, 0,
         fmt::format("run {} says status ok, but {} record(s) of a fault are in {} "
                     "(the first at line {}: a {} record with status {})",
                     evidence.text(evidence.runs[first->run].run_id), count, summary.path,
                     first->ref.line, evidence.text(first->kind), to_string(first->status))});
  }
}

// Measurements that stopped before the confidence interval `sweep --target-ci` asked for: a note
// per run and collective, so whoever asked sees they did not get it (the figures are judged as
// they are; an interval is about precision, not about the node).
void ci_misses(const Evidence& evidence, std::vector<InputNote>& notes) {
  std::map<std::pair<std::uint32_t, StringId>, std::vector<const CiMiss*>> grouped;
  for (const auto& miss : evidence.ci_misses)
    grouped[{miss.run, miss.collective}].push_back(&miss);
  for (const auto& [key, misses] : grouped) {
    // The widest interval reached (one with too few samples for an interval counts as widest).
    const CiMiss* worst = misses.front();
    for (const CiMiss* m : misses) {
      if (!m->achieved_pct || (worst->achieved_pct && *m->achieved_pct > *worst->achieved_pct))
        worst = m;
    }
    const std::string reached = worst->achieved_pct
                                    ? fmt::format("±{}%", format_figure(*worst->achieved_pct))
                                    : std::string("no interval (too few samples)");
    notes.push_back(
        {"measurement.target_ci_missed", evidence.files[worst->ref.file].path, worst->ref.line,
         fmt::format("run {}: {} did not reach its target CI of ±{}% in {} measurement(s); the "
                     "widest: {} at {} (stopped by {})",
                     evidence.text(evidence.runs[key.first].run_id), evidence.text(key.second),
                     format_figure(worst->target_pct), misses.size(), reached,
                     format_bytes(worst->bytes), evidence.text(worst->stopped_by))});
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
  drop_repeated_faults(findings);
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
  meta_disagreements(evidence, notes);
  ci_misses(evidence, notes);
  verdict.notes = std::move(notes);
  return verdict;
}

}  // namespace commcert
