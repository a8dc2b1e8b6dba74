#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace commcert {

// Leaf-first localization on a two-level fabric (docs/localization.md, "With a topology: leaf
// against leaf first"): where the pairs scope measures every pair (N − 1 rounds), the topology
// lets a few rounds ask first inside each leaf (which nodes are bad: their traffic crosses no
// uplink), then leaf against leaf (one pair per pair of leaves, all in about one round), then,
// only where a leaf pair was slow, more pairs across that leaf's uplinks to tell which part of
// the fabric it is. Pure: the caller measures the pairs of each round.

// The fabric as the search needs it: each node's leaf and, where known, which spine carries the
// traffic from one node to a node under another leaf (InfiniBand's routing fixes it per
// destination; the topology file alone does not say it, docs/topology.md).
struct LeafFabric {
  std::vector<int> leaf_of;  // per node 0..N-1: its leaf, 0..leaves-1
  int leaves = 0;
  int spines = 0;  // the switches above the leaves; 0 when unknown
  // route(from, to): the spine carrying from -> to (nodes under different leaves), 0..spines-1;
  // empty when the routes are not known.
  std::function<int(int from, int to)> route;
};

// Measures one round of disjoint node pairs at once and says, per pair, whether it was fast.
using PairRoundRunner = std::function<std::vector<bool>(const std::vector<std::pair<int, int>>&)>;

// A part of the fabric the pairs across the leaves blame.
struct FabricFault {
  enum class Kind {
    kLeafUplinks,  // every path out of a leaf is slow: its uplinks (or the leaf itself)
    kUplinkPort,   // routes known: the one cable between a leaf and a spine
    kSpine,        // routes known: every path through one spine
    kLeafPort,     // routes unknown: some, not all, paths out of a leaf are slow: one of the
                   // ports between it and the spines
  };
  Kind kind = Kind::kLeafUplinks;
  int leaf = -1;       // kLeafUplinks, kUplinkPort, kLeafPort
  int spine = -1;      // kUplinkPort, kSpine
  int slow_pairs = 0;  // measured pairs across that explain it (at least kMinFabricPairs)

  friend bool operator==(const FabricFault&, const FabricFault&) = default;
};

// A fabric fault is named only when this many pairs across, with different nodes, were slow
// through it and none fast: once more than the one representative pair of a leaf pair.
inline constexpr int kMinFabricPairs = 2;

struct LeafLocalization {
  // Slow inside its leaf with two known-good leaf mates (one where the leaf has only one).
  std::vector<int> bad_nodes;
  // Slow with a leaf mate, then fine with a known-good one: noise, blamed for nothing.
  std::vector<int> cleared;
  // Slow inside a leaf that has no known-good node to test it against: blamed for nothing.
  std::vector<int> unresolved;
  std::vector<FabricFault> fabric;  // at most one: a single hypothesis that explains every pair
  // Some leaf pairs were slow and no single part of the fabric explains them: nothing blamed.
  bool fabric_unexplained = false;
  int node_rounds = 0;    // inside the leaves
  int leaf_rounds = 0;    // leaf against leaf
  int narrow_rounds = 0;  // more pairs across the leaves that were slow
  [[nodiscard]] int rounds() const { return node_rounds + leaf_rounds + narrow_rounds; }
};

// The search above. Rounds, with L leaves of which the fewest healthy nodes any has is c, s the
// most suspects (nodes of a slow pair inside a leaf, or the odd node out) a leaf has and g the
// fewest known-good nodes such a leaf has (g >= 1):
//   inside the leaves   1, plus 2 ceil(s / g) when some pair inside a leaf is slow;
//   leaf against leaf   ceil(M / c), M = L − 1 for even L, L for odd (the circle method's
//                       matchings of the leaves, up to c of them measured at once);
//   across a leaf       1 when the slow leaf pairs share a leaf (each of its nodes with a node
//                       of another leaf), else one per slow leaf pair at most.
[[nodiscard]] LeafLocalization localize_by_leaves(const LeafFabric& fabric,
                                                  const PairRoundRunner& run_round);

// The bound above for the rounds inside and between the leaves plus one round across
// (leaf_round_bound(32, 32, 2, 15) = 1 + 2 + 1 + 1 = 5 at N = 1024 under 32 leaves).
[[nodiscard]] int leaf_round_bound(int leaves, int fewest_healthy, int most_suspects,
                                   int fewest_known_good);

// "uplinks of leaf 3", "cable leaf 3 - spine 1", "spine 2", "a port between leaf 3 and the
// spines", with the caller's names for leaves and spines.
[[nodiscard]] std::string describe(const FabricFault& fault,
                                   const std::function<std::string(int)>& leaf_name,
                                   const std::function<std::string(int)>& spine_name);

}  // namespace commcert
