#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "validate/baseline.hpp"
#include "validate/evidence.hpp"

namespace commcert {

// Pairwise localization read from records (docs/localization.md): the pairs scope measured every
// node pair once; pairs named by `sweep --pair-list` re-tested suspects against known-good nodes.

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
  double limit_gb_per_s = 0;        // a pair below this fails
  std::vector<PairFigure> pairs;    // the round-robin pairs
  std::vector<PairFigure> retests;  // --pair-list pairs
};

enum class PairVerdictKind {
  kBadNode,      // slow with most partners, or again with a known-good one: quarantine
  kSuspectLink,  // one pair slow whose nodes pass with everyone else: the path between them
  kUnresolved,   // slow with some partners, not yet re-tested: inconclusive
};

struct PairVerdict {
  PairVerdictKind kind = PairVerdictKind::kUnresolved;
  std::size_t series = 0;  // index in PairLocalization::series
  NodeId node = kNoString;
  NodeId other = kNoString;  // the other end of a suspect link
  int failed_partners = 0;
  int partners = 0;
  double measured_gb_per_s = 0;  // the median of the node's failing pairs, or the link's figure
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
};

// A pair fails when its busbw is below the collective's `pairs.floor_gb_per_s` or more than
// `pairs.max_deficit_pct` below the upper quartile of the run's round-robin pairs (with at least
// `pairs.min_pairs` of them). The upper quartile stays a healthy pair's figure while a quarter
// of the pairs are healthy: one bad node slows 2 of every N pairs (N = 4: 3 of 6; N = 3: 2 of 3).
[[nodiscard]] PairLocalization localize_pairs(const Evidence& evidence, const Baseline& baseline);

}  // namespace commcert
