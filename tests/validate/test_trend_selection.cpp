#include <string>

#include <gtest/gtest.h>

#include "report/trend_selection.hpp"

namespace commcert {
namespace {

FleetVerdict fleet(std::size_t certified, std::size_t quarantined, std::size_t inconclusive) {
  FleetVerdict verdict;
  const auto add = [&](const std::string& prefix, std::size_t count, NodeState state) {
    for (std::size_t i = 0; i < count; ++i) {
      NodeVerdict node;
      node.node = prefix + std::to_string(i);
      node.state = state;
      verdict.nodes.push_back(node);
    }
  };
  add("ok", certified, NodeState::kCertified);
  add("bad", quarantined, NodeState::kQuarantined);
  add("unsure", inconclusive, NodeState::kInconclusive);
  return verdict;
}

TEST(TrendSelection, TheLimitHoldsExactlyAndCountsWhatItLeavesOut) {
  for (std::size_t nodes : {63U, 64U, 65U}) {
    const TrendSelection s = select_trend_nodes(fleet(nodes, 0, 0), 64);
    EXPECT_EQ(s.nodes.size(), std::min<std::size_t>(nodes, 64)) << nodes;
    EXPECT_EQ(s.left_out, nodes > 64 ? nodes - 64 : 0) << nodes;
  }
}

TEST(TrendSelection, TroubledNodesComeFirstAndAreNeverTheOnesLeftOut) {
  // 70 certified listed before 2 quarantined and 1 inconclusive: the cut falls on certified ones.
  const TrendSelection s = select_trend_nodes(fleet(70, 2, 1), 64);
  ASSERT_EQ(s.nodes.size(), 64U);
  EXPECT_EQ(s.left_out, 9U);
  EXPECT_EQ(s.nodes[0], "bad0");
  EXPECT_EQ(s.nodes[1], "bad1");
  EXPECT_EQ(s.nodes[2], "unsure0");
  EXPECT_EQ(s.nodes[3], "ok0");  // verdict order kept within a group
  EXPECT_EQ(s.nodes.back(), "ok60");
}

}  // namespace
}  // namespace commcert
