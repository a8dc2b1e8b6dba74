#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "validate/baseline.hpp"
#include "validate/evidence.hpp"
#include "validate/switch_path.hpp"

namespace commcert {

// Pairwise localization read from records (docs/localization.md): the pairs scope measured every
// node pair once; pairs named by `sweep --pair-list` re-tested suspects against known-good nodes
// and slow pairs once more. Every collective of a run is judged as one pair matrix: one
// diagnosis per run, and no node is blamed before it was slow again with a known-good partner.

// One pair's figure at the judged size: its best placement.
struct PairFigure {
  NodeId a = kNoString;
  NodeId b = kNoString;
  double busbw_gb_per_s = 0;
  EvidenceRef ref;
  bool passed = true;
};

// The pairs of one run and collective at the largest size measured in pairs.
struct PairSeries {
  std::uint32_t run = 0;
  StringId collective = kNoString;
  std::uint64_t bytes = 0;
  double reference_gb_per_s = 0;    // upper quartile of the round-robin pairs; 0: too few pairs
  double spread_gb_per_s = 0;       // robust spread of the upper half of the pairs; 0: too few
  double limit_gb_per_s = 0;        // a pair below this fails
  std::vector<PairFigure> pairs;    // the round-robin pairs
  std::vector<PairFigure> retests;  // --pair-list pairs
};

enum class PairVerdictKind {
  kBadNode,        // slow in the pairwise rounds and again with a known-good partner: quarantine
  kSuspectLink,    // a slow pair whose nodes pass with known-good ones: the path between them
  kUnresolved,     // slow, not yet re-tested (or nothing known-good to test with): inconclusive
  kSuspectSwitch,  // groups fine within, slow across, and again when measured again: the path
                   // between them (a leaf uplink, a spine port); a warning that blames no node
};

struct PairVerdict {
  PairVerdictKind kind = PairVerdictKind::kUnresolved;
  std::size_t series = 0;  // index in PairLocalization::series: the first collective showing it
  NodeId node = kNoString;
  NodeId other = kNoString;  // the other end of a suspect link
  // A suspect switch path's groups (find_cut), each fine within and slow with the others.
  std::vector<std::vector<NodeId>> groups;
  // The switch the topology names for them; absent without a topology or where it does not
  // match the groups (PairLocalization::topology_notes says why).
  std::optional<SwitchPathNaming> naming;
  int failed_partners = 0;
  int partners = 0;
  double measured_gb_per_s = 0;  // the median of the node's failing pairs, or the link's figure
  std::string collectives;       // the collectives that showed it: "allreduce, sendrecv"
  std::string figures;           // per collective, what was measured against what limit
  std::string retest;            // what the second pass showed, in words; empty: not re-tested
  std::vector<EvidenceRef> evidence;
};

struct PairLocalization {
  std::vector<PairSeries> series;
  std::vector<PairVerdict> verdicts;
  // Re-tests still to run before a suspect can be blamed: (suspect, known-good node) names.
  std::vector<std::pair<std::string, std::string>> retest_plan;
  // (run, check) whose cluster-scope shortfall the pairs explain (a bad node or link found).
  std::set<std::pair<std::uint32_t, std::string>> explained;
  // Pairs slow in the rounds and fine when measured again: noise, said in the verdict's notes.
  std::vector<std::string> noise;
  // A suspect switch path the topology could not name (its groups follow no switch), said in
  // the verdict's notes.
  std::vector<std::string> topology_notes;
};

// How far below the healthy reference a pair must fall to be slow: by the baseline's minimum
// effect size (`pairs.max_deficit_pct`) and by kSpreadSigmas robust standard deviations of the
// upper half of the run's pairs, whichever is further; never further than to kMaxSlowFraction of
// the reference, where a pair is slow whatever the spread.
inline constexpr double kSpreadSigmas = 3.0;
inline constexpr double kMaxSlowFraction = 0.25;
inline constexpr std::size_t kMinSpreadPairs = 3;  // fewer pairs in the upper half: no spread

// The limit a pair must reach, from the run's figures (docs/localization.md, "When a pair is
// slow"). `figures` need not be sorted; the result is 0 when nothing can be judged.
struct PairLimit {
  double reference_gb_per_s = 0;
  double spread_gb_per_s = 0;
  double limit_gb_per_s = 0;
};
[[nodiscard]] PairLimit pair_limit(std::vector<double> figures, const PairSpec& rule);

// A pair fails when its busbw is below the collective's `pairs.floor_gb_per_s` or below
// pair_limit's limit (with at least `pairs.min_pairs` pairs). The upper quartile stays a healthy
// pair's figure while a quarter of the pairs are healthy: one bad node slows 2 of every N pairs
// (N = 4: 3 of 6; N = 3: 2 of 3). With a `topology`, a suspect switch path is named by the
// switch whose uplinks (or the level joining whose groups) explain it (switch_path.hpp).
[[nodiscard]] PairLocalization localize_pairs(const Evidence& evidence, const Baseline& baseline,
                                              const Topology* topology = nullptr);

}  // namespace commcert
