#pragma once

#include <cstdint>
#include <vector>

#include "validate/baseline.hpp"
#include "validate/evidence.hpp"

namespace commcert {

// Link tests judged pair by pair (docs/links.md). A series is one run's records of one test,
// transport, memory, message size and rail; within it each unordered pair of nodes has one
// figure, its worst (both directions of a one-way test count).

struct LinkPairFigure {
  NodeId a = kNoString;
  NodeId b = kNoString;
  double figure = 0;  // GB/s, or µs for latency
  bool slow = false;
  std::vector<EvidenceRef> refs;
};

struct LinkSeries {
  std::uint32_t run = 0;
  StringId transport = kNoString;
  StringId memory = kNoString;
  StringId test = kNoString;
  std::uint64_t bytes = 0;
  int rail = -1;
  bool latency = false;  // figures in µs, lower is better
  double reference = 0;  // upper quartile (bandwidth) / lower quartile (latency); 0: too few pairs
  double limit = 0;      // a pair worse than this is slow
  std::vector<LinkPairFigure> pairs;
};

enum class LinkVerdictKind {
  kSlowNode,    // slow with every partner (two or more): the node, its NIC or its PCIe path
  kSlowLink,    // one pair slow whose nodes both pass with another partner: the path between them
  kUnresolved,  // slow with a partner and no passing partner to clear it
};

struct LinkVerdict {
  LinkVerdictKind kind = LinkVerdictKind::kUnresolved;
  std::size_t series = 0;
  NodeId node = kNoString;
  NodeId other = kNoString;  // kSlowLink: the other end
  int failed = 0;
  int partners = 0;
  double measured = 0;  // the median of the node's slow pairs, or the link's figure
  std::vector<EvidenceRef> evidence;
};

struct LinkJudgement {
  std::vector<LinkSeries> series;
  std::vector<LinkVerdict> verdicts;
};

// Bandwidth: a pair below the test's floor or more than max_deficit_pct below the reference is
// slow; latency: above the ceiling or above reference / (1 - max_deficit_pct / 100). A series
// with neither an absolute limit nor min_pairs pairs judges nothing. At the limit passes.
[[nodiscard]] LinkJudgement judge_links(const Evidence& evidence, const LinkSpec& spec);

}  // namespace commcert
