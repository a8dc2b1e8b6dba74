#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "validate/pair_cut.hpp"

namespace commcert {
namespace {

using ::testing::IsEmpty;
using Groups = std::vector<std::vector<NodeId>>;

// Every pair of `nodes` nodes measured; slow when `slow(a, b)`.
template <typename Slow>
PairSlowness matrix(NodeId nodes, Slow slow) {
  PairSlowness pairs;
  for (NodeId a = 0; a < nodes; ++a) {
    for (NodeId b = a + 1; b < nodes; ++b)
      pairs[{a, b}] = slow(a, b);
  }
  return pairs;
}

// Nodes below `split` on one side, the rest on the other.
auto across(NodeId split) {
  return [split](NodeId a, NodeId b) { return (a < split) != (b < split); };
}

TEST(PairCut, GroupsFineWithinAndSlowAcrossAreTheSplit) {
  EXPECT_EQ(find_cut(matrix(6, across(3))), (Groups{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(find_cut(matrix(7, across(2))), (Groups{{0, 1}, {2, 3, 4, 5, 6}}));
}

TEST(PairCut, TheSmallestGroupHasTwoNodesAndAloneIsABadNodeNotASwitch) {
  // Two nodes a side is a split; one node slow with everyone is a node's fault.
  EXPECT_EQ(find_cut(matrix(4, across(2))), (Groups{{0, 1}, {2, 3}}));
  EXPECT_THAT(find_cut(matrix(4, across(1))), IsEmpty());
  EXPECT_THAT(find_cut(matrix(5, across(4))), IsEmpty());
}

TEST(PairCut, ThreeLeavesWithOneBadUplinkAndThreeSeparateLeaves) {
  // Leaves {0,1}, {2,3}, {4,5}: a bad uplink of the first slows its pairs with both others.
  const auto leaf = [](NodeId n) { return n / 2; };
  EXPECT_EQ(find_cut(matrix(6,
                            [&](NodeId a, NodeId b) {
                              return leaf(a) != leaf(b) && (leaf(a) == 0 || leaf(b) == 0);
                            })),
            (Groups{{0, 1}, {2, 3, 4, 5}}));
  // A spine that slows every path between leaves: three groups.
  EXPECT_EQ(find_cut(matrix(6, [&](NodeId a, NodeId b) { return leaf(a) != leaf(b); })),
            (Groups{{0, 1}, {2, 3}, {4, 5}}));
}

TEST(PairCut, NoSplitWithoutASlowPairWithEverySlowPairOrWithASlowPairInsideAGroup) {
  EXPECT_THAT(find_cut(matrix(6, [](NodeId, NodeId) { return false; })), IsEmpty());
  EXPECT_THAT(find_cut(matrix(6, [](NodeId, NodeId) { return true; })), IsEmpty());
  // 0-1-2 chained by fast pairs but 0-2 slow: not fine among themselves.
  auto pairs = matrix(6, across(3));
  pairs[{0, 2}] = true;
  EXPECT_THAT(find_cut(pairs), IsEmpty());
  // One slow link inside a healthy fleet is a link, not a split.
  EXPECT_THAT(find_cut(matrix(6, [](NodeId a, NodeId b) { return a == 1 && b == 4; })), IsEmpty());
}

TEST(PairCut, EveryPairMustBeMeasured) {
  auto pairs = matrix(6, across(3));
  pairs.erase({0, 1});  // inside a group
  EXPECT_THAT(find_cut(pairs), IsEmpty());
  pairs = matrix(6, across(3));
  pairs.erase({2, 3});  // across: it could be the fast path
  EXPECT_THAT(find_cut(pairs), IsEmpty());
  EXPECT_THAT(find_cut({}), IsEmpty());
}

}  // namespace
}  // namespace commcert
