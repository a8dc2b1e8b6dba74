#include "validate/pair_localization.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/stats.hpp"
#include "core/units.hpp"
#include "validate/finding.hpp"
#include "validate/localization.hpp"
#include "validate/pair_cut.hpp"

namespace commcert {
namespace {

constexpr double kGb = 1e9;
// The median absolute deviation times this estimates a normal sample's standard deviation.
constexpr double kMadToSigma = 1.4826;
// Known-good partners a node must be slow with, on re-test, before it is blamed.
constexpr std::size_t kBlamePartners = 2;

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
    std::vector<double> figures;
    figures.reserve(series.pairs.size());
    for (const auto& pair : series.pairs)
      figures.push_back(pair.busbw_gb_per_s);
    const PairLimit limit = pair_limit(std::move(figures), spec ? spec->pairs : PairSpec{});
    if (limit.limit_gb_per_s <= 0) continue;  // too few pairs and no floor: nothing to judge
    series.reference_gb_per_s = limit.reference_gb_per_s;
    series.spread_gb_per_s = limit.spread_gb_per_s;
    series.limit_gb_per_s = limit.limit_gb_per_s;
    for (auto* list : {&series.pairs, &series.retests}) {
      for (auto& pair : *list)
        pair.passed = pair.busbw_gb_per_s >= series.limit_gb_per_s;
    }
    out.push_back(std::move(series));
  }
  return out;
}

double median_of(std::vector<double> values) {
  return values.empty() ? 0 : median(values);
}

// One pair's figure in one collective of the run.
struct Measure {
  std::size_t series = 0;
  const PairFigure* figure = nullptr;
};

// Judges one run: every collective's pairs form one matrix (a pair is slow when it is slow in
// any collective), so the run gets one diagnosis. The round-robin pairs name suspects only;
// a suspect is blamed when it is slow again with a partner that passed every pair, a slow pair
// that is fine when measured again is noise, and what stays slow between nodes fine with
// known-good partners is a link (docs/localization.md).
class RunJudge {
 public:
  RunJudge(const Evidence& evidence, PairLocalization& out, std::vector<std::size_t> series,
           const Topology* topology)
      : evidence_(evidence), out_(out), series_(std::move(series)), topology_(topology) {
    for (const std::size_t index : series_) {
      const PairSeries& s = out.series[index];
      for (const auto& pair : s.pairs)
        round_robin_[{pair.a, pair.b}].push_back({index, &pair});
      for (const auto& pair : s.retests)
        retested_[{pair.a, pair.b}].push_back({index, &pair});
    }
    for (const auto& [key, measures] : round_robin_) {
      const bool slow = any_slow(measures);
      outcomes_.push_back({name(key.first), name(key.second), !slow});
      for (const NodeId node : {key.first, key.second}) {
        ++partners_[node];
        if (slow) failing_[node].push_back(key);
      }
    }
  }

  void judge() {
    if (!judge_cut()) judge_nodes_and_links();
    if (found_cause_) {
      for (const std::size_t index : shown_) {
        const PairSeries& s = out_.series[index];
        out_.explained.emplace(s.run, fmt::format("collective.{}", evidence_.text(s.collective)));
      }
    }
  }

 private:
  // A split into groups fine within and slow across (find_cut) is the switch path between them,
  // not a node: nobody is blamed for it. Like a link it must hold again when measured again, on
  // every pair of groups; until then its nodes are unresolved. A cross pair fine when measured
  // again means there is no clean split after all: the pairs are judged one by one.
  bool judge_cut() {
    PairSlowness slowness;
    for (const auto& [key, measures] : round_robin_)
      slowness.emplace(key, any_slow(measures));
    const auto groups = find_cut(slowness);
    if (groups.empty()) return false;
    std::vector<NodePair> across;
    std::vector<Measure> again;
    std::set<std::pair<std::size_t, std::size_t>> confirmed;  // pairs of groups slow again
    for (std::size_t i = 0; i < groups.size(); ++i) {
      for (std::size_t j = i + 1; j < groups.size(); ++j) {
        for (const NodeId a : groups[i]) {
          for (const NodeId b : groups[j]) {
            const NodePair pair = ordered(a, b);
            across.push_back(pair);
            const auto retest = retested_.find(pair);
            if (retest == retested_.end()) continue;
            if (!any_slow(retest->second)) return false;
            again.insert(again.end(), retest->second.begin(), retest->second.end());
            confirmed.emplace(i, j);
          }
        }
      }
    }
    const std::size_t group_pairs = groups.size() * (groups.size() - 1) / 2;
    if (confirmed.size() < group_pairs) {
      unresolved_cut(groups);
      return true;
    }
    PairVerdict v = base(PairVerdictKind::kSuspectSwitch, groups.front().front(), across);
    v.groups = groups;
    if (topology_) name_switch(v);
    v.retest = fmt::format("slow again when measured again ({})", figures_of(again));
    for (const auto& m : again)
      v.evidence.push_back(m.figure->ref);
    out_.verdicts.push_back(std::move(v));
    found_cause_ = true;
    return true;
  }

  // The switch whose uplinks, or the level joining whose groups, the split follows; where no
  // switch matches, the groups keep their nodes' names and a note says why.
  void name_switch(PairVerdict& v) {
    std::vector<std::vector<std::string>> names;
    std::vector<std::string> sides;
    for (const auto& group : v.groups) {
      auto& side = names.emplace_back();
      for (const NodeId node : group)
        side.push_back(name(node));
      sides.push_back(fmt::format("{{{}}}", fmt::join(side, ", ")));
    }
    SwitchPathNaming naming = name_switch_path(*topology_, names);
    if (naming.kind != SwitchPathNaming::Kind::kNoMatch) {
      v.naming = std::move(naming);
      return;
    }
    const PairSeries& s = out_.series[v.series];
    out_.topology_notes.push_back(fmt::format(
        "the suspect switch path between {} (run {}) does not match the topology: {}; "
        "its groups are named by their nodes",
        fmt::join(sides, " and "), evidence_.text(evidence_.runs[s.run].run_id), naming.mismatch));
  }

  // Before the split holds again: every node unresolved, and for each pair of groups two pairs
  // across measured again, with other nodes where the groups have them.
  void unresolved_cut(const std::vector<std::vector<NodeId>>& groups) {
    for (std::size_t i = 0; i < groups.size(); ++i) {
      for (std::size_t j = i + 1; j < groups.size(); ++j) {
        for (std::size_t k = 0; k < 2; ++k)
          plan_pair(ordered(groups[i][k % groups[i].size()], groups[j][k % groups[j].size()]));
      }
    }
    for (const auto& group : groups) {
      std::vector<std::string> names;
      names.reserve(group.size());
      for (const NodeId node : group)
        names.push_back(name(node));
      for (const NodeId node : group) {
        PairVerdict v = base(PairVerdictKind::kUnresolved, node, failing_.at(node));
        v.retest = fmt::format(
            "slow with every node outside {{{}}} and fine with each inside: a switch path "
            "between groups is suspected, not yet measured again",
            fmt::join(names, ", "));
        out_.verdicts.push_back(std::move(v));
      }
    }
  }

  void judge_nodes_and_links() {
    std::set<NodeId> candidates;  // slow with most partners
    std::set<NodeId> flagged;     // every node the round-robin pairs cast doubt on
    for (const auto& finding : attribute_pair_failures(outcomes_)) {
      flagged.insert(id(finding.node));
      if (finding.kind == LocalizationKind::kBadNode) candidates.insert(id(finding.node));
      if (finding.kind == LocalizationKind::kSuspectLink) flagged.insert(id(finding.other));
    }
    find_known_good(flagged);
    // Second pass first: only a node slow again with known-good partners is blamed, and only
    // one fine with a known-good partner is cleared. One slow again with too few of them is
    // neither: it stays unresolved, whatever its pairs would say (fail closed).
    std::map<NodeId, Retest> slow_again;
    for (const NodeId node : flagged) {
      Retest retest = retest_of(node);
      if (retest.failed) {
        add_bad(node, retest);
      } else if (!retest.passed_with.empty()) {
        cleared_.emplace(node, std::move(retest));
      } else if (!retest.failed_with.empty()) {
        slow_again.emplace(node, std::move(retest));
      }
    }
    std::set<NodeId> unresolved;
    for (const NodeId node : flagged) {
      if (bad_.count(node) || cleared_.count(node)) continue;
      const auto slow = unexplained_of(node);
      if (slow.empty()) continue;  // slow only with nodes found bad, or only noise
      const auto again = slow_again.find(node);
      if (slow.size() == 1 && !candidates.count(node) && again == slow_again.end()) {
        continue;  // judged as a pair below
      }
      unresolved.insert(node);
      PairVerdict v = base(PairVerdictKind::kUnresolved, node, slow);
      v.retest = known_good_.empty()
                     ? "no known-good node to re-test it against (every node was slow with some "
                       "partner): nothing is blamed on this evidence"
                 : again != slow_again.end()
                     ? fmt::format(
                           "slow again with known-good {}, but blamed only when slow with "
                           "{} known-good partners",
                           fmt::join(again->second.failed_with, ", "),
                           std::min(kBlamePartners, known_good_.size()))
                     : "not yet re-tested against a known-good node";
      // The slow re-tests the message names are evidence of the verdict, as a bad node's are.
      if (again != slow_again.end()) {
        v.evidence.insert(v.evidence.end(), again->second.evidence.begin(),
                          again->second.evidence.end());
      }
      out_.verdicts.push_back(std::move(v));
      plan_with_good(node);
    }
    for (const auto& [key, measures] : round_robin_) {
      if (!any_slow(measures) || bad_.count(key.first) || bad_.count(key.second)) continue;
      if (is_noise(key)) continue;
      if (unresolved.count(key.first) || unresolved.count(key.second)) {
        // A node slow with most partners is re-tested alone first: at scale its slow pairs are
        // N - 1 more rounds, needed only if it passes with a known-good node.
        if (!candidates.count(key.first) && !candidates.count(key.second)) plan_pair(key);
        continue;
      }
      if (!passed_with_anyone(key.first) || !passed_with_anyone(key.second)) {
        // Nothing shows an end is good (a run of two nodes): calling the pair a link would
        // explain the shortfall away and certify both ends on no evidence. Fail closed.
        for (const NodeId node : {key.first, key.second}) {
          if (!unresolved.insert(node).second) continue;
          PairVerdict v = base(PairVerdictKind::kUnresolved, node, unexplained_of(node));
          v.retest = "passed with no partner: nothing shows either end of its slow pair is good";
          out_.verdicts.push_back(std::move(v));
          plan_with_good(node);
        }
        continue;
      }
      add_link(key);
    }
  }

  struct Retest {
    bool failed = false;
    std::vector<std::string> passed_with;
    std::vector<std::string> failed_with;  // "n2 (allreduce 0.05 GB/s)"
    std::vector<EvidenceRef> evidence;
  };

  const std::string& name(NodeId node) const { return evidence_.node_name(node); }
  NodeId id(const std::string& node) const { return *evidence_.nodes.find(node); }
  static NodeId partner_of(const NodePair& pair, NodeId node) {
    return pair.first == node ? pair.second : pair.first;
  }
  static bool any_slow(const std::vector<Measure>& measures) {
    return std::any_of(measures.begin(), measures.end(),
                       [](const Measure& m) { return !m.figure->passed; });
  }
  std::string collective_of(const Measure& m) const {
    return std::string(evidence_.text(out_.series[m.series].collective));
  }
  std::string figures_of(const std::vector<Measure>& measures) const {
    std::vector<std::string> parts;
    parts.reserve(measures.size());
    for (const auto& m : measures) {
      parts.push_back(
          fmt::format("{} {} GB/s", collective_of(m), format_figure(m.figure->busbw_gb_per_s)));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
  }

  // The node's slow pairs that neither a bad partner nor a passing re-test explains.
  std::vector<NodePair> unexplained_of(NodeId node) const {
    std::vector<NodePair> out;
    if (const auto found = failing_.find(node); found != failing_.end()) {
      for (const NodePair& pair : found->second) {
        if (!bad_.count(partner_of(pair, node)) && !passed_again(pair)) out.push_back(pair);
      }
    }
    return out;
  }

  // Measured again (`--pair-list`) and fine in every collective that was measured again.
  bool passed_again(const NodePair& pair) const {
    const auto found = retested_.find(pair);
    return found != retested_.end() && !any_slow(found->second);
  }

  // Fast with some partner: in a round-robin pair, or in a re-test against a known-good node.
  bool passed_with_anyone(NodeId node) const {
    const auto failing = failing_.find(node);
    const std::size_t failed = failing == failing_.end() ? 0 : failing->second.size();
    return static_cast<std::size_t>(partners_.at(node)) > failed || cleared_.count(node) > 0;
  }

  bool is_noise(const NodePair& pair) {
    if (!passed_again(pair)) return false;
    out_.noise.push_back(fmt::format(
        "pair {}<->{} was slow in the pairwise rounds ({}) and fine when measured again ({}): "
        "noise, nothing is blamed on it",
        name(pair.first), name(pair.second), figures_of(round_robin_.at(pair)),
        figures_of(retested_.at(pair))));
    return true;
  }

  // Known good: a node the round-robin pairs cast no doubt on, slow at most with a node slow
  // with most of its partners. Those that passed every pair come first, as re-test partners.
  void find_known_good(const std::set<NodeId>& flagged) {
    for (const bool strict : {true, false}) {
      for (const auto& [node, count] : partners_) {
        if (flagged.count(node) || failing_.count(node) != (strict ? 0u : 1u)) continue;
        known_good_.push_back(node);
        known_set_.insert(node);
      }
    }
  }

  // The re-tests of `node` against known-good partners (a re-measured slow pair with one counts).
  Retest retest_of(NodeId node) const {
    Retest r;
    for (const auto& [key, measures] : retested_) {
      if (key.first != node && key.second != node) continue;
      const NodeId partner = partner_of(key, node);
      if (!known_set_.count(partner)) continue;
      for (const auto& m : measures)
        r.evidence.push_back(m.figure->ref);
      if (any_slow(measures)) {
        r.failed_with.push_back(fmt::format("{} ({})", name(partner), figures_of(measures)));
      } else {
        r.passed_with.push_back(name(partner));
      }
    }
    // Imbue's pass ratio: a node fine with one known-good partner works; what failed is the
    // path to the others. Only a node slow with every known-good partner it met, and with
    // kBlamePartners of them where there are that many, is bad: on a busy fabric one healthy
    // pair in a few dozen measures several times slower than its peers, two in a row rarely.
    r.failed = !r.failed_with.empty() && r.passed_with.empty() &&
               r.failed_with.size() >= std::min(kBlamePartners, known_good_.size());
    return r;
  }

  void plan(const std::string& a, const std::string& b) {
    const auto entry = std::make_pair(a, b);
    if (std::find(out_.retest_plan.begin(), out_.retest_plan.end(), entry) ==
        out_.retest_plan.end()) {
      out_.retest_plan.push_back(entry);
    }
  }

  // kBlamePartners known-good partners per suspect (fewer when there are fewer), spread over
  // the known-good nodes so the re-tests of a round stay as disjoint as they can (sweep packs
  // listed pairs into rounds of disjoint pairs).
  void plan_with_good(NodeId node) {
    if (known_good_.empty()) return;
    const Retest done = retest_of(node);
    if (done.failed || !done.passed_with.empty()) return;  // decided
    std::size_t wanted = std::min(kBlamePartners, known_good_.size()) - done.failed_with.size();
    for (std::size_t tries = 0; wanted > 0 && tries < known_good_.size(); ++tries) {
      const NodeId good = known_good_[next_good_++ % known_good_.size()];
      if (retested_.count(ordered(node, good))) continue;
      const std::size_t before = out_.retest_plan.size();
      plan(name(node), name(good));
      if (out_.retest_plan.size() > before) --wanted;
    }
  }

  void plan_pair(const NodePair& pair) {
    if (retested_.count(pair)) return;
    plan(name(pair.first), name(pair.second));
  }

  // The series in which `pairs` were slow, with per collective the median of the slow figures.
  void describe(PairVerdict& v, const std::vector<NodePair>& pairs) {
    std::map<std::size_t, std::vector<double>> slow_by_series;
    std::vector<double> all;
    for (const NodePair& pair : pairs) {
      for (const auto& m : round_robin_.at(pair)) {
        if (m.figure->passed) continue;
        slow_by_series[m.series].push_back(m.figure->busbw_gb_per_s);
        all.push_back(m.figure->busbw_gb_per_s);
        v.evidence.push_back(m.figure->ref);
      }
    }
    std::vector<std::string> collectives;
    std::vector<std::string> figures;
    const bool link = v.kind == PairVerdictKind::kSuspectLink;
    const bool name_each = link || slow_by_series.size() > 1;
    for (const auto& [index, values] : slow_by_series) {
      const PairSeries& s = out_.series[index];
      const std::string collective(evidence_.text(s.collective));
      collectives.push_back(collective);
      shown_.insert(index);
      figures.push_back(fmt::format(
          "{}{}{} GB/s, pairs need {} GB/s at {} (healthy pairs {} GB/s, spread {} GB/s)",
          name_each ? collective + " " : "", link ? "" : "median ",
          format_figure(median_of(values)), format_figure(s.limit_gb_per_s), format_bytes(s.bytes),
          format_figure(s.reference_gb_per_s), format_figure(s.spread_gb_per_s)));
    }
    v.series = slow_by_series.empty() ? series_.front() : slow_by_series.begin()->first;
    v.collectives = fmt::format("{}", fmt::join(collectives, ", "));
    v.figures = fmt::format("{}", fmt::join(figures, "; "));
    v.measured_gb_per_s = median_of(std::move(all));
  }

  PairVerdict base(PairVerdictKind kind, NodeId node, const std::vector<NodePair>& slow) {
    PairVerdict v;
    v.kind = kind;
    v.node = node;
    v.partners = partners_.at(node);
    v.failed_partners = static_cast<int>(slow.size());
    describe(v, slow);
    return v;
  }

  void add_bad(NodeId node, const Retest& retest) {
    if (!bad_.insert(node).second) return;
    const auto found = failing_.find(node);
    PairVerdict v = base(PairVerdictKind::kBadNode, node,
                         found == failing_.end() ? std::vector<NodePair>{} : found->second);
    v.retest = fmt::format("slow again with known-good {}", fmt::join(retest.failed_with, ", "));
    v.evidence.insert(v.evidence.end(), retest.evidence.begin(), retest.evidence.end());
    out_.verdicts.push_back(std::move(v));
    found_cause_ = true;
  }

  void add_link(const NodePair& pair) {
    PairVerdict v = base(PairVerdictKind::kSuspectLink, pair.first, {pair});
    v.other = pair.second;
    v.failed_partners = 1;
    std::vector<std::string> notes;
    if (const auto again = retested_.find(pair); again != retested_.end()) {
      notes.push_back(
          fmt::format("slow again when measured again ({})", figures_of(again->second)));
      for (const auto& m : again->second)
        v.evidence.push_back(m.figure->ref);
    } else {
      plan_pair(pair);
    }
    bool untested = false;
    for (const NodeId node : {pair.first, pair.second}) {
      if (const auto found = cleared_.find(node); found != cleared_.end()) {
        notes.push_back(fmt::format("{} passed with {}", name(node),
                                    fmt::join(found->second.passed_with, ", ")));
      } else if (known_set_.count(node)) {
        notes.push_back(fmt::format("{} passed with every other partner", name(node)));
      } else {
        untested = true;
        plan_with_good(node);
      }
    }
    if (untested) notes.push_back("not yet re-tested against known-good nodes");
    v.retest = fmt::format("{}", fmt::join(notes, "; "));
    out_.verdicts.push_back(std::move(v));
    found_cause_ = true;
  }

  const Evidence& evidence_;
  PairLocalization& out_;
  std::vector<std::size_t> series_;
  std::map<NodePair, std::vector<Measure>> round_robin_;
  std::map<NodePair, std::vector<Measure>> retested_;
  std::vector<PairOutcome> outcomes_;
  std::map<NodeId, std::vector<NodePair>> failing_;
  std::map<NodeId, int> partners_;
  std::vector<NodeId> known_good_;
  std::set<NodeId> known_set_;
  std::size_t next_good_ = 0;
  std::map<NodeId, Retest> cleared_;  // passed with a known-good partner
  std::set<NodeId> bad_;
  std::set<std::size_t> shown_;  // series that showed a verdict's slow pairs
  bool found_cause_ = false;
  const Topology* topology_ = nullptr;  // names a suspect switch path; may be null
};

}  // namespace

PairLimit pair_limit(std::vector<double> figures, const PairSpec& rule) {
  PairLimit out;
  const double floor = rule.floor_gb_per_s.value_or(0);
  out.limit_gb_per_s = floor;
  if (figures.empty() || static_cast<int>(figures.size()) < rule.min_pairs) return out;
  std::sort(figures.begin(), figures.end());
  out.reference_gb_per_s = percentile_sorted(figures, 75);
  const double effect_limit = out.reference_gb_per_s * (1 - rule.max_deficit_pct / 100);
  double relative = effect_limit;
  // The upper half of the pairs is healthy whenever at most one node in four is bad.
  const std::vector<double> upper(figures.begin() + static_cast<std::ptrdiff_t>(figures.size() / 2),
                                  figures.end());
  if (upper.size() >= kMinSpreadPairs) {
    const double centre = median(upper);
    std::vector<double> deviations;
    deviations.reserve(upper.size());
    for (const double value : upper)
      deviations.push_back(std::abs(value - centre));
    out.spread_gb_per_s = kMadToSigma * median(deviations);
    relative = std::min(relative, out.reference_gb_per_s - kSpreadSigmas * out.spread_gb_per_s);
    relative =
        std::max(relative, std::min(effect_limit, out.reference_gb_per_s * kMaxSlowFraction));
  }
  out.limit_gb_per_s = std::max(floor, relative);
  return out;
}

PairLocalization localize_pairs(const Evidence& evidence, const Baseline& baseline,
                                const Topology* topology) {
  PairLocalization out;
  out.series = collect_series(evidence, baseline);
  std::map<std::uint32_t, std::vector<std::size_t>> by_run;
  for (std::size_t i = 0; i < out.series.size(); ++i)
    by_run[out.series[i].run].push_back(i);
  for (auto& [run, series] : by_run)
    RunJudge(evidence, out, std::move(series), topology).judge();
  return out;
}

}  // namespace commcert
