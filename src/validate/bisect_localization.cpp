#include "validate/bisect_localization.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "validate/metric_catalog.hpp"

namespace commcert {
namespace {

constexpr double kGb = 1e9;

std::string names_of(const std::vector<std::string>& nodes, const std::vector<int>& indices) {
  std::vector<std::string> names;
  names.reserve(indices.size());
  for (const int i : indices)
    names.push_back(nodes.at(static_cast<std::size_t>(i)));
  return fmt::format("{}", fmt::join(names, ","));
}

}  // namespace

bool GroupJudgement::passed() const {
  return std::all_of(figures.begin(), figures.end(), [](const auto& f) { return f.passed(); });
}

std::optional<double> group_limit_gb_per_s(const Baseline& baseline, std::string_view collective) {
  std::optional<double> limit;
  const auto raise = [&](double value) { limit = std::max(limit.value_or(value), value); };
  if (const Bound* bound = baseline.bound(busbw_metric(collective, "cluster").id)) {
    if (bound->floor) raise(*bound->floor);
    if (bound->expected && bound->max_regression_pct) {
      raise(*bound->expected * (1 - *bound->max_regression_pct / 100));
    }
  }
  if (const CollectiveSpec* spec = baseline.collective(fmt::format("collective.{}", collective))) {
    if (spec->pairs.floor_gb_per_s) raise(*spec->pairs.floor_gb_per_s);
  }
  return limit;
}

std::string RunBisection::pending_spec() const {
  std::vector<std::string> spec;
  spec.reserve(result.pending.size());
  for (const auto& group : result.pending)
    spec.push_back(names_of(nodes, group));
  return fmt::format("{}", fmt::join(spec, ";"));
}

std::vector<std::pair<std::vector<int>, const GroupJudgement*>> RunBisection::blame(
    int node) const {
  std::vector<std::pair<std::vector<int>, const GroupJudgement*>> out;
  for (const auto& [bad, partners] : result.failed_with) {
    if (bad != node) continue;
    for (std::size_t round = 0; round < result.history.size(); ++round) {
      for (const auto& outcome : result.history[round]) {
        if (outcome.passed || outcome.nodes.size() != 2 || outcome.nodes[0] != node) continue;
        if (std::find(partners.begin(), partners.end(), outcome.nodes[1]) == partners.end()) {
          continue;
        }
        std::vector<int> key = outcome.nodes;
        std::sort(key.begin(), key.end());
        const auto found = groups.find({static_cast<int>(round), key});
        if (found != groups.end()) out.emplace_back(outcome.nodes, &found->second);
      }
    }
  }
  return out;
}

std::string RunBisection::summary(const Evidence& evidence) const {
  std::string text = fmt::format("bisection of run {} over {} nodes: {} round{}",
                                 evidence.text(evidence.runs[run].run_id), nodes.size(),
                                 result.rounds, result.rounds == 1 ? "" : "s");
  if (!problem.empty()) return text + "; " + problem;
  std::vector<std::string> rounds;
  for (const auto& round : result.history) {
    std::vector<std::string> outcomes;
    outcomes.reserve(round.size());
    for (const auto& outcome : round) {
      outcomes.push_back(
          fmt::format("{} {}", names_of(nodes, outcome.nodes), outcome.passed ? "pass" : "slow"));
    }
    rounds.push_back(fmt::format("{}", fmt::join(outcomes, ", ")));
  }
  if (!rounds.empty()) text += fmt::format(" ({})", fmt::join(rounds, " | "));
  for (const auto& [bad, partners] : result.failed_with) {
    text += fmt::format("; {} slow again with known-good {}", names_of(nodes, {bad}),
                        names_of(nodes, partners));
  }
  for (const int node : result.cleared) {
    text += fmt::format("; {} passed with another known-good node: noise, not blamed",
                        names_of(nodes, {node}));
  }
  for (const auto& [left, right] : result.spans) {
    text += fmt::format(
        "; {} and {} each pass alone: the fault lies between them (a link, or noise), which "
        "bisection does not blame; the pairs scope decides",
        names_of(nodes, left), names_of(nodes, right));
  }
  if (!result.unresolved.empty()) {
    text += fmt::format("; no known-good node to tell {} apart: unresolved",
                        names_of(nodes, result.unresolved));
  }
  if (result.unexplained) text += "; the rest still fell short after every search: unexplained";
  if (!result.finished()) {
    text += fmt::format("; not finished: round {} ({}) not measured", result.rounds + 1,
                        pending_spec());
  } else if (result.bad_nodes.empty() && result.failed_with.empty() && result.cleared.empty() &&
             result.spans.empty() && result.unresolved.empty()) {
    text += "; nothing found";
  }
  return text;
}

RunBisection replay_bisection(const Evidence& evidence, const Baseline& baseline,
                              std::uint32_t run) {
  RunBisection out;
  out.run = run;
  for (const NodeId node : evidence.runs.at(run).nodes)
    out.nodes.push_back(evidence.node_name(node));
  std::sort(out.nodes.begin(), out.nodes.end());
  const auto index_of = [&](const std::string& name) {
    return static_cast<int>(std::lower_bound(out.nodes.begin(), out.nodes.end(), name) -
                            out.nodes.begin());
  };

  // Per collective, the largest size measured in groups (bandwidth, not latency) and its limit.
  std::map<std::string, std::uint64_t> largest;
  for (const auto& c : evidence.collectives) {
    if (c.run != run || c.scope != CollectiveScope::kGroups || !c.measured()) continue;
    auto& bytes = largest[std::string(evidence.text(c.collective))];
    bytes = std::max(bytes, c.bytes);
  }
  std::map<std::string, double> limits;
  for (const auto& [collective, bytes] : largest) {
    out.collectives.push_back(collective);
    if (const auto limit = group_limit_gb_per_s(baseline, collective)) limits[collective] = *limit;
  }
  if (!largest.empty() && limits.empty()) {
    out.problem =
        fmt::format("the baseline has no cluster-scope floor for {} to judge the groups by",
                    fmt::join(out.collectives, ", "));
    return out;
  }
  for (const auto& c : evidence.collectives) {
    if (c.run != run || c.scope != CollectiveScope::kGroups || !c.measured()) continue;
    const std::string collective(evidence.text(c.collective));
    const auto limit = limits.find(collective);
    if (limit == limits.end() || c.bytes != largest[collective] || c.round < 0) continue;
    std::vector<int> members;
    for (const NodeId node : evidence.participants(c)) {
      const int index = index_of(evidence.node_name(node));
      if (index < static_cast<int>(out.nodes.size())) members.push_back(index);
    }
    std::sort(members.begin(), members.end());
    auto& figures = out.groups[{c.round, members}].figures;
    const double figure = c.busbw_bytes_per_s / kGb;
    const auto same = std::find_if(figures.begin(), figures.end(),
                                   [&](const auto& f) { return f.collective == collective; });
    if (same == figures.end()) {
      figures.push_back({collective, c.bytes, figure, limit->second, c.ref});
    } else if (figure > same->gb_per_s) {  // the best placement
      same->gb_per_s = figure;
      same->ref = c.ref;
    }
  }

  if (out.nodes.size() < 2) return out;
  int round = 0;
  out.result = bisect_faults(static_cast<int>(out.nodes.size()),
                             [&](const std::vector<std::vector<int>>& groups) {
                               std::vector<bool> passed;
                               for (auto group : groups) {
                                 std::sort(group.begin(), group.end());
                                 const auto found = out.groups.find({round, group});
                                 if (found == out.groups.end())
                                   return std::vector<bool>{};  // not measured yet
                                 passed.push_back(found->second.passed());
                               }
                               ++round;
                               return passed;
                             },
                             {.chase_links = false});
  return out;
}

BisectLocalization localize_bisection(const Evidence& evidence, const Baseline& baseline) {
  BisectLocalization out;
  std::set<std::uint32_t> runs;
  for (const auto& c : evidence.collectives) {
    if (c.scope == CollectiveScope::kGroups) runs.insert(c.run);
  }
  for (const std::uint32_t run : runs) {
    RunBisection bisection = replay_bisection(evidence, baseline, run);
    if (bisection.problem.empty() && bisection.result.conclusive()) {
      for (const auto& collective : bisection.collectives)
        out.explained.emplace(run, fmt::format("collective.{}", collective));
    }
    out.runs.push_back(std::move(bisection));
  }
  return out;
}

}  // namespace commcert
