#include "validate/pair_localization.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "validate/localization.hpp"

namespace commcert {
namespace {

constexpr double kGb = 1e9;

using NodePair = std::pair<NodeId, NodeId>;

NodePair ordered(NodeId a, NodeId b) {
  return a < b ? NodePair{a, b} : NodePair{b, a};
}

// Per pair, the best placement's figure among `records` (all of one size).
std::vector<PairFigure> best_per_pair(const Evidence& evidence,
                                      const std::vector<const CollectiveEvidence*>& records) {
  std::map<NodePair, PairFigure> best;
  for (const CollectiveEvidence* c : records) {
    const auto members = evidence.participants(*c);
    const NodePair key = ordered(members[0], members[1]);
    const double figure = c->busbw_bytes_per_s / kGb;
    auto [it, fresh] = best.try_emplace(key, PairFigure{key.first, key.second, figure, c->ref});
    if (!fresh && figure > it->second.busbw_gb_per_s) {
      it->second.busbw_gb_per_s = figure;
      it->second.ref = c->ref;
    }
  }
  std::vector<PairFigure> out;
  out.reserve(best.size());
  for (auto& [key, figure] : best)
    out.push_back(figure);
  return out;
}

// The series of pairwise measurements: per (run, collective), the largest size measured in
// pairs (bus bandwidth is reached at the top of a sweep; smaller sizes measure latency).
std::vector<PairSeries> collect_series(const Evidence& evidence, const Baseline& baseline) {
  struct Key {
    std::uint32_t run;
    StringId collective;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, std::vector<const CollectiveEvidence*>> by_key;
  for (const auto& c : evidence.collectives) {
    if (c.scope != CollectiveScope::kPairs || !c.measured()) continue;
    if (evidence.participants(c).size() != 2) continue;
    by_key[{c.run, c.collective}].push_back(&c);
  }
  std::vector<PairSeries> out;
  for (const auto& [key, records] : by_key) {
    std::uint64_t largest = 0;
    for (const auto* c : records) {
      if (!c->pair_list) largest = std::max(largest, c->bytes);
    }
    if (largest == 0) continue;  // re-tests without the round-robin pairs: nothing to compare
    std::vector<const CollectiveEvidence*> round_robin;
    std::vector<const CollectiveEvidence*> listed;
    for (const auto* c : records) {
      if (c->bytes == largest) (c->pair_list ? listed : round_robin).push_back(c);
    }
    PairSeries series;
    series.run = key.run;
    series.collective = key.collective;
    series.bytes = largest;
    series.pairs = best_per_pair(evidence, round_robin);
    series.retests = best_per_pair(evidence, listed);

    const auto* spec =
        baseline.collective(fmt::format("collective.{}", evidence.text(key.collective)));
    const PairSpec rule = spec ? spec->pairs : PairSpec{};
    double limit = rule.floor_gb_per_s.value_or(0);
    if (static_cast<int>(series.pairs.size()) >= rule.min_pairs) {
      std::vector<double> figures;
      for (const auto& pair : series.pairs)
        figures.push_back(pair.busbw_gb_per_s);
      std::sort(figures.begin(), figures.end());
      series.reference_gb_per_s = percentile_sorted(figures, 75);
      limit = std::max(limit, series.reference_gb_per_s * (1 - rule.max_deficit_pct / 100));
    }
    if (limit <= 0) continue;  // too few pairs and no floor: nothing to judge against
    series.limit_gb_per_s = limit;
    for (auto* list : {&series.pairs, &series.retests}) {
      for (auto& pair : *list)
        pair.passed = pair.busbw_gb_per_s >= limit;
    }
    out.push_back(std::move(series));
  }
  return out;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return percentile_sorted(values, 50);
}

// Judges one series in three steps: the round-robin pairs name bad nodes and suspects; the
// re-tests against known-good nodes turn suspects that are slow again into bad nodes; what
// stays slow between nodes that are neither bad is a link, and a suspect without a re-test is
// unresolved (and planned for one).
class SeriesJudge {
 public:
  SeriesJudge(const Evidence& evidence, const PairSeries& series, std::size_t index,
              PairLocalization& out)
      : evidence_(evidence), series_(series), index_(index), out_(out) {
    for (const auto& pair : series.pairs) {
      outcomes_.push_back({name(pair.a), name(pair.b), pair.passed});
      for (const NodeId node : {pair.a, pair.b}) {
        if (!pair.passed) failing_[node].push_back(&pair);
        ++partners_[node];
      }
    }
  }

  void judge() {
    const auto findings = attribute_pair_failures(outcomes_);
    std::vector<NodeId> suspects;
    for (const auto& finding : findings) {
      if (finding.kind == LocalizationKind::kBadNode) {
        add_bad(id(finding.node), {});
      } else {
        suspects.push_back(id(finding.node));
        if (finding.kind == LocalizationKind::kSuspectLink) suspects.push_back(id(finding.other));
      }
    }
    std::map<NodeId, Retest> retests;
    for (const NodeId node : suspects) {
      if (retests.count(node)) continue;
      Retest retest = retest_of(node);
      if (retest.failed) add_bad(node, retest);
      retests.emplace(node, std::move(retest));
    }
    std::vector<LocalizationFinding> unretested;
    const Retest none;
    for (const auto& [node, retest] : retests) {
      if (bad_.count(node)) continue;
      const auto unexplained = unexplained_of(node);
      if (unexplained.empty()) continue;  // slow only with nodes found bad
      if (unexplained.size() == 1) {
        const NodeId partner = partner_of(*unexplained.front(), node);
        // Slow with one partner that is slow with several: the partner's entry decides.
        if (unexplained_of(partner).size() != 1) continue;
        // A lone slow pair: the path between the two, confirmed when both passed a re-test.
        const auto theirs = retests.find(partner);
        const Retest& their = theirs == retests.end() ? none : theirs->second;
        // Unless one of the two passed with nobody (a run of two nodes): nothing then shows it
        // is good, and blaming the path would certify it on no evidence. Fail closed.
        if (!passed_with_anyone(node, retest) || !passed_with_anyone(partner, their)) {
          out_.verdicts.push_back(base(PairVerdictKind::kUnresolved, node));
          unretested.push_back({LocalizationKind::kSuspectNode, name(node), "", 1, 0});
          continue;
        }
        if (retest.any && their.any) {
          link(node, partner, *unexplained.front(),
               fmt::format("{} passed with {}, {} passed with {}", name(node),
                           fmt::join(retest.passed_with, ", "), name(partner),
                           fmt::join(their.passed_with, ", ")));
        } else {
          link(node, partner, *unexplained.front(), {});  // reported, blamed on neither node
          if (!retest.any)
            unretested.push_back({LocalizationKind::kSuspectNode, name(node), "", 1, 0});
        }
        continue;
      }
      if (!retest.any) {
        out_.verdicts.push_back(base(PairVerdictKind::kUnresolved, node));
        unretested.push_back({LocalizationKind::kSuspectNode, name(node), "", 0, 0});
        continue;
      }
      // Fine with a known-good node: what failed is the path to each partner it was slow with.
      for (const PairFigure* pair : unexplained) {
        link(node, partner_of(*pair, node), *pair,
             fmt::format("{} passed with known-good {}", name(node),
                         fmt::join(retest.passed_with, ", ")));
      }
    }
    for (auto& planned : second_pass_pairs(outcomes_, unretested)) {
      if (std::find(out_.retest_plan.begin(), out_.retest_plan.end(), planned) ==
          out_.retest_plan.end()) {
        out_.retest_plan.push_back(std::move(planned));
      }
    }
    if (found_cause_) {
      out_.explained.emplace(series_.run,
                             fmt::format("collective.{}", evidence_.text(series_.collective)));
    }
  }

 private:
  struct Retest {
    bool any = false;
    bool failed = false;
    std::vector<std::string> passed_with;
    std::vector<std::string> failed_with;
    std::vector<EvidenceRef> evidence;
  };

  const std::string& name(NodeId node) const { return evidence_.node_name(node); }
  NodeId id(const std::string& node) const { return *evidence_.nodes.find(node); }
  static NodeId partner_of(const PairFigure& pair, NodeId node) {
    return pair.a == node ? pair.b : pair.a;
  }

  // The node's slow pairs that no bad partner explains.
  std::vector<const PairFigure*> unexplained_of(NodeId node) const {
    std::vector<const PairFigure*> out;
    if (const auto found = failing_.find(node); found != failing_.end()) {
      for (const PairFigure* pair : found->second) {
        if (!bad_.count(partner_of(*pair, node))) out.push_back(pair);
      }
    }
    return out;
  }

  // Whether `node` was measured fast with some partner: in a round-robin pair or a re-test.
  bool passed_with_anyone(NodeId node, const Retest& retest) const {
    const auto failing = failing_.find(node);
    const int failed = failing == failing_.end() ? 0 : static_cast<int>(failing->second.size());
    return partners_.at(node) > failed || !retest.passed_with.empty();
  }

  // The re-tests of `node` against partners that passed every round-robin pair.
  Retest retest_of(NodeId node) const {
    Retest r;
    for (const auto& pair : series_.retests) {
      if (pair.a != node && pair.b != node) continue;
      const NodeId partner = partner_of(pair, node);
      if (failing_.count(partner) || !partners_.count(partner)) continue;  // not known good
      r.any = true;
      r.evidence.push_back(pair.ref);
      (pair.passed ? r.passed_with : r.failed_with).push_back(name(partner));
      r.failed = r.failed || !pair.passed;
    }
    return r;
  }

  void add_bad(NodeId node, const Retest& retest) {
    if (!bad_.insert(node).second) return;
    PairVerdict v = base(PairVerdictKind::kBadNode, node);
    if (retest.failed) {
      v.retest = fmt::format("slow again with known-good {}", fmt::join(retest.failed_with, ", "));
      v.evidence.insert(v.evidence.end(), retest.evidence.begin(), retest.evidence.end());
    }
    out_.verdicts.push_back(std::move(v));
    found_cause_ = true;
  }

  void link(NodeId a, NodeId b, const PairFigure& pair, std::string retest) {
    const NodePair key = ordered(a, b);
    if (!links_.insert(key).second) return;
    PairVerdict v;
    v.kind = PairVerdictKind::kSuspectLink;
    v.series = index_;
    v.node = key.first;
    v.other = key.second;
    v.failed_partners = 1;
    v.partners = partners_.at(a);
    v.measured_gb_per_s = pair.busbw_gb_per_s;
    v.retest = std::move(retest);
    v.evidence.push_back(pair.ref);
    out_.verdicts.push_back(std::move(v));
    found_cause_ = true;
  }

  PairVerdict base(PairVerdictKind kind, NodeId node) const {
    PairVerdict v;
    v.kind = kind;
    v.series = index_;
    v.node = node;
    v.partners = partners_.at(node);
    std::vector<double> figures;
    if (const auto found = failing_.find(node); found != failing_.end()) {
      v.failed_partners = static_cast<int>(found->second.size());
      for (const PairFigure* pair : found->second) {
        figures.push_back(pair->busbw_gb_per_s);
        v.evidence.push_back(pair->ref);
      }
    }
    v.measured_gb_per_s = median_of(std::move(figures));
    return v;
  }

  const Evidence& evidence_;
  const PairSeries& series_;
  std::size_t index_;
  PairLocalization& out_;
  std::vector<PairOutcome> outcomes_;
  std::map<NodeId, std::vector<const PairFigure*>> failing_;
  std::map<NodeId, int> partners_;
  std::set<NodePair> links_;
  std::set<NodeId> bad_;
  bool found_cause_ = false;
};

}  // namespace

PairLocalization localize_pairs(const Evidence& evidence, const Baseline& baseline) {
  PairLocalization out;
  out.series = collect_series(evidence, baseline);
  for (std::size_t i = 0; i < out.series.size(); ++i) {
    SeriesJudge(evidence, out.series[i], i, out).judge();
  }
  return out;
}

}  // namespace commcert
