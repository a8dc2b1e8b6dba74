// Leaf-first localization (localize_by_leaves) on small two-level fabrics: what it finds for a
// bad node, a leaf's uplinks, one leaf-spine cable, a spine, and what it refuses to blame; every
// round of disjoint pairs and within its bound. N = 1024 is the simulation's
// (tests/tools/localization_simulation.cpp).
#include <set>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "validate/leaf_localization.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Kind = FabricFault::Kind;

// `leaves` leaves of `per_leaf` nodes each (node i under leaf i / per_leaf), `spines` spines; the
// spine carrying a -> b is b's place in its leaf modulo the spines (InfiniBand's d-mod-k).
struct Fabric {
  int leaves = 4;
  int per_leaf = 4;
  int spines = 2;

  [[nodiscard]] int leaf(int node) const { return node / per_leaf; }
  [[nodiscard]] int route(int, int to) const { return (to % per_leaf) % spines; }
  [[nodiscard]] LeafFabric model(bool routes = true) const {
    LeafFabric f;
    for (int node = 0; node < leaves * per_leaf; ++node)
      f.leaf_of.push_back(leaf(node));
    f.leaves = leaves;
    f.spines = spines;
    if (routes) f.route = [this](int from, int to) { return route(from, to); };
    return f;
  }
};

// What is broken; a pair is slow when it touches any of it.
struct Faults {
  std::set<int> nodes;
  std::set<int> leaf_uplinks;
  std::set<std::pair<int, int>> cables;  // (leaf, spine)
  std::set<int> spines;

  [[nodiscard]] bool slow(const Fabric& f, int a, int b) const {
    if (nodes.count(a) || nodes.count(b)) return true;
    const int la = f.leaf(a), lb = f.leaf(b);
    if (la == lb) return false;
    if (leaf_uplinks.count(la) || leaf_uplinks.count(lb)) return true;
    for (const int spine : {f.route(a, b), f.route(b, a)}) {
      if (spines.count(spine) || cables.count({la, spine}) || cables.count({lb, spine}))
        return true;
    }
    return false;
  }
};

struct Outcome {
  LeafLocalization result;
  bool disjoint = true;
};

Outcome search(const Fabric& fabric, const Faults& faults, bool routes = true) {
  Outcome out;
  const LeafFabric model = fabric.model(routes);
  out.result = localize_by_leaves(model, [&](const std::vector<std::pair<int, int>>& round) {
    std::vector<bool> fast;
    std::set<int> seen;
    for (const auto& [a, b] : round) {
      if (!seen.insert(a).second || !seen.insert(b).second || a == b) out.disjoint = false;
      fast.push_back(!faults.slow(fabric, a, b));
    }
    return fast;
  });
  return out;
}

TEST(LeafLocalization, AHealthyFabricTakesTwoRoundsAndBlamesNothing) {
  const Outcome o = search(Fabric{}, Faults{});
  EXPECT_TRUE(o.disjoint);
  EXPECT_THAT(o.result.bad_nodes, IsEmpty());
  EXPECT_THAT(o.result.fabric, IsEmpty());
  EXPECT_FALSE(o.result.fabric_unexplained);
  EXPECT_EQ(o.result.node_rounds, 1);
  EXPECT_EQ(o.result.leaf_rounds, 1);  // 3 matchings of 4 leaves, 4 nodes a leaf: one round
  EXPECT_EQ(o.result.narrow_rounds, 0);
}

TEST(LeafLocalization, ABadNodeIsFoundInsideItsLeafAndItsPartnerCleared) {
  const Outcome o = search(Fabric{}, Faults{{5}, {}, {}, {}});
  EXPECT_TRUE(o.disjoint);
  EXPECT_THAT(o.result.bad_nodes, ElementsAre(5));
  EXPECT_THAT(o.result.cleared, ElementsAre(4));  // its partner in the first round
  EXPECT_THAT(o.result.fabric, IsEmpty());
  EXPECT_FALSE(o.result.fabric_unexplained);
  EXPECT_EQ(o.result.node_rounds, 3);
  EXPECT_LE(o.result.rounds(), leaf_round_bound(4, 3, 2, 2));
}

TEST(LeafLocalization, ALeafsUplinksAreNamedAndNoNodeUnderItBlamed) {
  for (const bool routes : {true, false}) {
    SCOPED_TRACE(routes);
    const Outcome o = search(Fabric{}, Faults{{}, {2}, {}, {}}, routes);
    EXPECT_TRUE(o.disjoint);
    EXPECT_THAT(o.result.bad_nodes, IsEmpty());
    ASSERT_EQ(o.result.fabric.size(), 1u);
    EXPECT_EQ(o.result.fabric[0].kind, Kind::kLeafUplinks);
    EXPECT_EQ(o.result.fabric[0].leaf, 2);
    EXPECT_GE(o.result.fabric[0].slow_pairs, kMinFabricPairs);
    EXPECT_EQ(o.result.rounds(), 3);
  }
}

TEST(LeafLocalization, OneCableBetweenALeafAndASpineIsNamedWhereRoutesAreKnown) {
  const Faults cable{{}, {}, {{1, 0}}, {}};
  const Outcome known = search(Fabric{}, cable);
  EXPECT_THAT(known.result.bad_nodes, IsEmpty());
  ASSERT_EQ(known.result.fabric.size(), 1u);
  EXPECT_EQ(known.result.fabric[0],
            (FabricFault{Kind::kUplinkPort, 1, 0, known.result.fabric[0].slow_pairs}));
  // Without routes: a port between leaf 1 and the spines, still nobody blamed.
  const Outcome unknown = search(Fabric{}, cable, false);
  EXPECT_THAT(unknown.result.bad_nodes, IsEmpty());
  ASSERT_EQ(unknown.result.fabric.size(), 1u);
  EXPECT_EQ(unknown.result.fabric[0].kind, Kind::kLeafPort);
  EXPECT_EQ(unknown.result.fabric[0].leaf, 1);
  EXPECT_EQ(describe(
                unknown.result.fabric[0], [](int l) { return "leaf" + std::to_string(l); },
                [](int s) { return "spine" + std::to_string(s); }),
            "a port between leaf1 and the spines");
}

TEST(LeafLocalization, ASpineIsNamedWhereRoutesAreKnown) {
  const Outcome o = search(Fabric{6, 4, 2}, Faults{{}, {}, {}, {1}});
  EXPECT_TRUE(o.disjoint);
  EXPECT_THAT(o.result.bad_nodes, IsEmpty());
  ASSERT_EQ(o.result.fabric.size(), 1u);
  EXPECT_EQ(o.result.fabric[0].kind, Kind::kSpine);
  EXPECT_EQ(o.result.fabric[0].spine, 1);
}

TEST(LeafLocalization, ABadNodeUnderABadLeafIsFoundAndTheLeafToo) {
  const Outcome o = search(Fabric{4, 6, 2}, Faults{{13}, {2}, {}, {}});
  EXPECT_TRUE(o.disjoint);
  EXPECT_THAT(o.result.bad_nodes, ElementsAre(13));
  ASSERT_EQ(o.result.fabric.size(), 1u);
  EXPECT_EQ(o.result.fabric[0].kind, Kind::kLeafUplinks);
  EXPECT_EQ(o.result.fabric[0].leaf, 2);
  EXPECT_EQ(o.result.rounds(), 5);
  EXPECT_LE(o.result.rounds(), leaf_round_bound(4, 5, 2, 4));
}

TEST(LeafLocalization, WhatNoSinglePartExplainsBlamesNothing) {
  // Two leaves' uplinks at once: no one hypothesis fits every slow pair.
  const Outcome two = search(Fabric{}, Faults{{}, {0, 3}, {}, {}});
  EXPECT_THAT(two.result.bad_nodes, IsEmpty());
  EXPECT_THAT(two.result.fabric, IsEmpty());
  EXPECT_TRUE(two.result.fabric_unexplained);
}

TEST(LeafLocalization, ALeafWithNoKnownGoodNodeLeavesItsNodesUnresolved) {
  // Leaf 1 holds two nodes, both bad: their one pair is slow and nobody there is known good.
  Fabric fabric{4, 2, 2};
  const Outcome o = search(fabric, Faults{{2, 3}, {}, {}, {}});
  EXPECT_THAT(o.result.bad_nodes, IsEmpty());
  EXPECT_THAT(o.result.unresolved, ElementsAre(2, 3));
  // Leaf 1 has no healthy node left: the others are measured leaf against leaf, fine.
  EXPECT_THAT(o.result.fabric, IsEmpty());
  EXPECT_FALSE(o.result.fabric_unexplained);
}

TEST(LeafLocalization, AnOddNodeOutIsMeasuredWithAKnownGoodMate) {
  const Outcome o = search(Fabric{3, 5, 2}, Faults{{4}, {}, {}, {}});
  EXPECT_TRUE(o.disjoint);
  EXPECT_THAT(o.result.bad_nodes, ElementsAre(4));  // the odd node out of leaf 0
  EXPECT_THAT(o.result.cleared, IsEmpty());
}

TEST(LeafLocalization, TheBoundIsTheFormula) {
  // N = 1024 under 32 leaves: 1 + 2 + 1 + 1.
  EXPECT_EQ(leaf_round_bound(32, 32, 2, 30), 5);
  EXPECT_EQ(leaf_round_bound(32, 32, 0, 32), 3);
  // 512 leaves of two nodes: 511 matchings, two at a time.
  EXPECT_EQ(leaf_round_bound(512, 2, 0, 2), 1 + 256 + 1);
  EXPECT_EQ(leaf_round_bound(5, 4, 0, 4), 1 + 2 + 1);  // odd: 5 matchings
}

}  // namespace
}  // namespace commcert
