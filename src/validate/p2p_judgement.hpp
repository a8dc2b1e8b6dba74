#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "validate/baseline.hpp"
#include "validate/evidence.hpp"

namespace commcert {

// `p2p` judged (docs/p2p.md). Pure functions of the evidence and the baseline; the rules
// (rules/p2p_rule.cpp, rules/p2p_host_rule.cpp) turn their verdicts into findings.

// The payload rate of a PCIe link per direction: lanes x transfer rate x line-code efficiency / 8
// (gen 1-2: 8b/10b at 2.5 and 5 GT/s; gen 3-5: 128b/130b at 8, 16, 32 GT/s; gen 6: 64 GT/s in
// 242/256 FLITs). Gen5 x16 gives 63.0 GB/s. nullopt for an unknown generation or no lanes.
[[nodiscard]] std::optional<double> pcie_bytes_per_s(int generation, int width);

// One ordered pair's figure within a series, GB/s (or µs for latency).
struct P2pPairFigure {
  int src = -1;
  int dst = -1;
  double figure = 0;
  bool slow = false;
  EvidenceRef ref;
};

// Which GPUs are slow to every peer, and which slow pairs no such GPU explains. A GPU is slow to
// all when it has two or more peers and, with each, at least one direction is slow (the GPU or its
// NVSwitch ports); the remaining slow pairs are links at fault. With one peer nothing tells the
// GPU from the link: the pair is reported.
struct PairMatrixClassification {
  std::vector<int> slow_gpus;
  std::vector<std::size_t> slow_pairs;  // indices into the figures, not explained by a slow GPU
};
[[nodiscard]] PairMatrixClassification classify_pair_matrix(
    const std::vector<P2pPairFigure>& figures);

// Unordered pairs measured both ways whose slower direction is more than `max_asymmetry_pct`
// below the faster (at the limit passes): {index of the slower, index of the faster}.
[[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> asymmetric_pairs(
    const std::vector<P2pPairFigure>& figures, double max_asymmetry_pct);

// One run's GPU pair figures of one node, method, access and direction.
struct P2pSeries {
  std::uint32_t run = 0;
  NodeId node = kNoString;
  StringId method = kNoString;
  StringId access = kNoString;
  bool bidirectional = false;
  bool latency = false;  // pointer chase: µs, lower is better
  double reference = 0;  // upper quartile of the pairs; 0 with too few pairs
  double limit = 0;      // a pair worse than this is slow
  std::vector<P2pPairFigure> pairs;
};

enum class P2pVerdictKind { kSlowGpu, kSlowPair, kAsymmetric };

struct P2pVerdict {
  P2pVerdictKind kind = P2pVerdictKind::kSlowPair;
  std::size_t series = 0;
  int gpu = -1;  // kSlowGpu
  int src = -1;  // kSlowPair, kAsymmetric: the slow direction
  int dst = -1;
  int peers = 0;        // kSlowGpu
  double measured = 0;  // the slow figure (kSlowGpu: the median of its slow pairs)
  double other = 0;     // kAsymmetric: the reverse direction's figure
  std::vector<EvidenceRef> evidence;
};

struct P2pJudgement {
  std::vector<P2pSeries> series;
  std::vector<P2pVerdict> verdicts;
};

// Bandwidth: a pair below the floor or more than max_deficit_pct below the reference is slow;
// latency: above the ceiling. A series that nothing can judge is left out. At the limit passes.
[[nodiscard]] P2pJudgement judge_p2p_pairs(const Evidence& evidence, const P2pSpec& spec);

// Host<->GPU figures from the GPU's own NUMA node against the PCIe link of that GPU.
enum class P2pHostVerdictKind { kSlow, kUnjudged };
struct P2pHostVerdict {
  P2pHostVerdictKind kind = P2pHostVerdictKind::kSlow;
  std::size_t record = 0;  // index into evidence.p2p
  double measured = 0;     // GB/s
  double limit = 0;        // GB/s; kUnjudged: 0
  std::optional<int> generation;
  std::optional<int> width;
};
[[nodiscard]] std::vector<P2pHostVerdict> judge_p2p_host(const Evidence& evidence,
                                                         const P2pSpec& spec);

// Figures of one GPU each that a node's GPUs are compared on: host<->GPU from the other socket
// (per direction) and copies within a GPU's memory (per method). Each GPU's worst figure of a
// run against the node's others (max_deficit_pct from their upper quartile, or for latency above
// the lower quartile / (1 - pct), with min_pairs GPUs) and the floor; at the limit passes. A
// series with too few GPUs and no floor is not judged: these figures add to a GPU's own-socket
// and pair figures, which the required evidence asks for, and stand in for none of them.
enum class P2pPeerKind { kHostRemote, kDeviceLocal };
struct P2pPeerVerdict {
  P2pPeerKind kind = P2pPeerKind::kDeviceLocal;
  std::size_t record = 0;  // index into evidence.p2p
  bool latency = false;    // pointer chase: µs, lower is better
  double measured = 0;     // GB/s or µs
  double limit = 0;
  double reference = 0;  // the peers' quartile; 0 when only the floor judged
};
[[nodiscard]] std::vector<P2pPeerVerdict> judge_p2p_peer_figures(const Evidence& evidence,
                                                                 const P2pSpec& spec);

}  // namespace commcert
