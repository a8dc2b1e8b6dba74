// The bisection's decisions on synthetic group outcomes: what `commcert run` measures and the
// validator replays (validate/bisect_localization.*) are decided here, once.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "validate/localization.hpp"

namespace commcert {
namespace {

using Nodes = std::vector<int>;

int ceil_log2(int n) {
  return static_cast<int>(std::ceil(std::log2(n)));
}

// A cluster whose group collectives fail when they hold a bad node or both ends of a bad link,
// plus scripted noise: the k-th measurement of a given group fails once although it is healthy.
struct Cluster {
  std::set<int> bad_nodes;
  std::set<std::pair<int, int>> bad_links;
  std::map<std::set<int>, int> noisy_once;  // group -> which of its measurements (1-based) fails
  std::map<std::set<int>, int> measured;
  std::vector<std::vector<Nodes>> rounds;

  [[nodiscard]] bool healthy(const std::set<int>& members) const {
    for (const int bad : bad_nodes) {
      if (members.contains(bad)) return false;
    }
    for (const auto& [a, b] : bad_links) {
      if (members.contains(a) && members.contains(b)) return false;
    }
    return true;
  }

  GroupRoundRunner runner() {
    return [this](const std::vector<Nodes>& groups) {
      rounds.push_back(groups);
      std::set<int> seen;
      std::vector<bool> passed;
      for (const auto& group : groups) {
        EXPECT_GE(group.size(), 2u) << "a group of one node measures nothing";
        for (const int member : group) {
          EXPECT_TRUE(seen.insert(member).second) << "groups of one round must be disjoint";
        }
        const std::set<int> members(group.begin(), group.end());
        const int nth = ++measured[members];
        const auto noisy = noisy_once.find(members);
        passed.push_back(healthy(members) && !(noisy != noisy_once.end() && noisy->second == nth));
      }
      return passed;
    };
  }
};

TEST(BisectionDecisions, OneSlowNodeIsBlamedAfterFailingWithTwoKnownGoodNodes) {
  for (const int n : {4, 8, 16}) {
    for (int bad = 0; bad < n; ++bad) {
      Cluster cluster{{bad}, {}, {}, {}, {}};
      const auto result = bisect_faults(n, cluster.runner(), {.chase_links = false});
      ASSERT_EQ(result.bad_nodes, Nodes{bad}) << n << " " << bad;
      ASSERT_EQ(result.failed_with.size(), 1u);
      const Nodes& partners = result.failed_with[0].second;
      ASSERT_EQ(partners.size(), 2u);
      EXPECT_NE(partners[0], partners[1]) << "re-tested with another known-good node";
      for (const int partner : partners)
        EXPECT_NE(partner, bad);
      EXPECT_TRUE(result.conclusive());
      EXPECT_LE(result.rounds, ceil_log2(n) + 2) << n << " " << bad;
      EXPECT_EQ(static_cast<int>(result.history.size()), result.rounds);
    }
  }
}

TEST(BisectionDecisions, TwoSlowNodesInOneHalfOrInBothAreBothBlamed) {
  for (const auto& [a, b] : {std::pair{0, 1}, std::pair{1, 6}, std::pair{2, 5}, std::pair{6, 7}}) {
    Cluster cluster{{a, b}, {}, {}, {}, {}};
    const auto result = bisect_faults(8, cluster.runner(), {.chase_links = false});
    EXPECT_EQ(result.bad_nodes, (Nodes{a, b})) << a << "," << b;
    EXPECT_TRUE(result.conclusive());
    EXPECT_LE(result.rounds, 2 * ceil_log2(8) + 2);
  }
}

TEST(BisectionDecisions, ALinkIsHandedOnAsASpanWhenLinksAreNotChased) {
  Cluster cluster{{}, {{1, 6}}, {}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner(), {.chase_links = false});
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_TRUE(result.bad_links.empty());
  ASSERT_EQ(result.spans.size(), 1u);
  EXPECT_EQ(result.spans[0].first, (Nodes{0, 1, 2, 3}));
  EXPECT_EQ(result.spans[0].second, (Nodes{4, 5, 6, 7}));
  EXPECT_EQ(result.rounds, 1);  // the halves, and no verification that would only find it again
  EXPECT_FALSE(result.conclusive());
}

TEST(BisectionDecisions, ALinkIsFoundWhenLinksAreChased) {
  Cluster cluster{{}, {{1, 6}}, {}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner());
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_EQ(result.bad_links, (std::vector<std::pair<int, int>>{{1, 6}}));
  EXPECT_LE(result.rounds, 2 * ceil_log2(8));
}

TEST(BisectionDecisions, NoiseInTheReTestClearsTheNodeInsteadOfBlamingIt) {
  // Healthy cluster; the cluster scope fell short by chance, and so do a half and the lone test
  // of node 2 with its first known-good partner: the confirmation with another one passes.
  Cluster cluster{{}, {}, {{{0, 1, 2, 3}, 1}, {{2, 3}, 1}}, {}, {}};
  // Round 1: {0,1,2,3} fails (noise), {4..7} pass. Round 2: {0,1} pass, {2,3} fails (noise).
  // Round 3: {2,h}, {3,h'}: make 2's lone test fail once.
  const std::set<int> lone_two{2, 4};
  cluster.noisy_once[lone_two] = 1;
  const auto result = bisect_faults(8, cluster.runner(), {.chase_links = false});
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_EQ(result.cleared, Nodes{2});
  EXPECT_FALSE(result.conclusive());
}

TEST(BisectionDecisions, ASingleNoisyHalfEndsAsASpanAndBlamesNobody) {
  Cluster cluster{{}, {}, {{{0, 1, 2, 3}, 1}}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner(), {.chase_links = false});
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_EQ(result.spans.size(), 1u);  // {0,1} and {2,3} each pass: nothing within
  EXPECT_FALSE(result.conclusive());
}

TEST(BisectionDecisions, AHealthyClusterBlamesNobody) {
  Cluster cluster{};
  for (const bool chase : {false, true}) {
    const auto result = bisect_faults(8, cluster.runner(), {.chase_links = chase});
    EXPECT_TRUE(result.bad_nodes.empty());
    EXPECT_TRUE(result.bad_links.empty());
    EXPECT_FALSE(result.conclusive());
  }
}

TEST(BisectionDecisions, NoKnownGoodNodeLeavesEveryoneUnresolved) {
  // Both halves of four fail: nobody passed, nobody can be told apart.
  Cluster cluster{{0, 3}, {}, {}, {}, {}};
  const auto result = bisect_faults(4, cluster.runner(), {.chase_links = false});
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_EQ(result.unresolved, (Nodes{0, 1, 2, 3}));
  EXPECT_FALSE(result.conclusive());
}

TEST(BisectionDecisions, TwoNodesCannotBeToldApart) {
  Cluster cluster{{1}, {}, {}, {}, {}};
  const auto result = bisect_faults(2, cluster.runner(), {.chase_links = false});
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_EQ(result.unresolved, (Nodes{0, 1}));
  EXPECT_EQ(result.rounds, 0);
}

TEST(BisectionDecisions, ThreeNodes) {
  // {0,1} passes first: node 2 fails with node 0, then with node 1, the only other good node.
  Cluster last{{2}, {}, {}, {}, {}};
  const auto found = bisect_faults(3, last.runner(), {.chase_links = false});
  EXPECT_EQ(found.bad_nodes, Nodes{2});
  ASSERT_EQ(found.failed_with.size(), 1u);
  EXPECT_EQ(found.failed_with[0].second, (Nodes{0, 1}));
  EXPECT_LE(found.rounds, ceil_log2(3) + 2);
  // {0,1} fails and node 2 was never measured: nobody is known to be good, so nobody is blamed.
  for (const int bad : {0, 1}) {
    Cluster cluster{{bad}, {}, {}, {}, {}};
    const auto result = bisect_faults(3, cluster.runner(), {.chase_links = false});
    EXPECT_TRUE(result.bad_nodes.empty()) << bad;
    EXPECT_EQ(result.unresolved, (Nodes{0, 1, 2})) << bad;
    EXPECT_FALSE(result.conclusive());
  }
}

TEST(BisectionDecisions, SizesThatAreNotPowersOfTwo) {
  for (const int n : {5, 6, 7, 9, 12, 33, 100}) {
    for (const int bad : {0, n / 2, n - 2, n - 1}) {
      Cluster cluster{{bad}, {}, {}, {}, {}};
      const auto result = bisect_faults(n, cluster.runner(), {.chase_links = false});
      EXPECT_EQ(result.bad_nodes, Nodes{bad}) << n << " " << bad;
      EXPECT_TRUE(result.conclusive()) << n << " " << bad;
      EXPECT_LE(result.rounds, ceil_log2(n) + 3) << n << " " << bad;
    }
  }
}

TEST(BisectionDecisions, AnUnmeasuredRoundStopsTheSearchAndNamesItsGroups) {
  // Replay: answer the first two rounds from a cluster, then say "not measured yet".
  Cluster cluster{{5}, {}, {}, {}, {}};
  auto measured = cluster.runner();
  int calls = 0;
  const auto result = bisect_faults(8,
                                    [&](const std::vector<Nodes>& groups) {
                                      return ++calls <= 2 ? measured(groups) : std::vector<bool>{};
                                    },
                                    {.chase_links = false});
  EXPECT_EQ(result.rounds, 2);
  EXPECT_FALSE(result.finished());
  EXPECT_TRUE(result.bad_nodes.empty());
  // Round 3 tests 4 and 5 alone, each with a node known to be good from round 1.
  ASSERT_EQ(result.pending.size(), 2u);
  EXPECT_EQ(result.pending[0][0], 4);
  EXPECT_EQ(result.pending[1][0], 5);
  EXPECT_LT(result.pending[0][1], 4);
  // The full run asks exactly that round third.
  Cluster again{{5}, {}, {}, {}, {}};
  (void)bisect_faults(8, again.runner(), {.chase_links = false});
  ASSERT_GE(again.rounds.size(), 3u);
  EXPECT_EQ(again.rounds[2], result.pending);
}

TEST(BisectionDecisions, AnAnswerOfTheWrongLengthIsRefused) {
  EXPECT_THROW((void)bisect_faults(4, [](const std::vector<Nodes>&) { return std::vector{true}; }),
               std::invalid_argument);
}

// What every search must keep, over every fleet of 4 to 12 nodes with one to three bad nodes,
// one bad node and one bad link, or two bad links (links chased): nobody healthy blamed, every
// fault found where every node could be compared with a known-good one, in a bounded number of
// rounds, the bad nodes and their partners
// listed in node order, each bad node re-tested with two distinct
// known-good partners, and the history holding every group of every round as it was tested
// (the harness checks each round's groups are disjoint).
TEST(BisectionProperties, EveryFaultIsFoundAndReportedInOrder) {
  int fleets = 0;
  for (int n = 4; n <= 12; ++n) {
    std::vector<std::pair<std::set<int>, std::set<std::pair<int, int>>>> cases;
    for (int a = 0; a < n; ++a) {
      cases.push_back({{a}, {}});
      for (int b = a + 1; b < n; ++b) {
        cases.push_back({{a, b}, {}});
        for (int c = 0; c < n; ++c) {
          if (c != a && c != b) cases.push_back({{c}, {{a, b}}});
          if (c > b && n <= 10) cases.push_back({{a, b, c}, {}});
        }
        if (n > 8) continue;
        for (int c = a + 1; c < n; ++c) {
          for (int d = c + 1; d < n; ++d) {
            if (c != b && d != b) cases.push_back({{}, {{a, b}, {c, d}}});
          }
        }
      }
    }
    for (const auto& [bad_nodes, bad_links] : cases) {
      Cluster cluster{bad_nodes, bad_links, {}, {}, {}};
      const auto result = bisect_faults(n, cluster.runner());
      ++fleets;
      const std::string fleet = ::testing::PrintToString(n) + " nodes, bad " +
                                ::testing::PrintToString(bad_nodes) + ", links " +
                                ::testing::PrintToString(bad_links);
      // Nobody healthy is blamed; with a known-good reference for everyone, every bad node is.
      for (const int node : result.bad_nodes)
        ASSERT_TRUE(bad_nodes.contains(node)) << fleet;
      for (const auto& link : result.bad_links)
        ASSERT_TRUE(bad_links.contains(link)) << fleet;
      if (result.unresolved.empty() && !result.unexplained) {
        ASSERT_EQ(result.bad_nodes, Nodes(bad_nodes.begin(), bad_nodes.end())) << fleet;
        if (result.cleared.empty()) {
          const std::set<std::pair<int, int>> found(result.bad_links.begin(),
                                                    result.bad_links.end());
          ASSERT_EQ(found, bad_links) << fleet;
        }
      }
      // Links cost verification rounds (a quarter pair's second failure is not followed, and a
      // lone node tested with the other end of its link is cleared as noise and verified again):
      // fleets with bad nodes only are held to two rounds per halving and two more.
      if (bad_links.empty()) {
        EXPECT_LE(result.rounds, 2 * ceil_log2(n) + 2) << fleet;
      }
      EXPECT_TRUE(std::is_sorted(result.bad_nodes.begin(), result.bad_nodes.end())) << fleet;
      ASSERT_EQ(result.failed_with.size(), result.bad_nodes.size()) << fleet;
      for (std::size_t i = 0; i < result.failed_with.size(); ++i) {
        const auto& [node, partners] = result.failed_with[i];
        EXPECT_EQ(node, result.bad_nodes[i]) << fleet;
        ASSERT_EQ(partners.size(), 2u) << fleet;
        EXPECT_NE(partners[0], partners[1]) << fleet;
        for (const int partner : partners)
          EXPECT_FALSE(bad_nodes.contains(partner)) << fleet;
      }
      ASSERT_EQ(result.history.size(), cluster.rounds.size()) << fleet;
      for (std::size_t r = 0; r < cluster.rounds.size(); ++r) {
        ASSERT_EQ(result.history[r].size(), cluster.rounds[r].size()) << fleet;
        for (std::size_t g = 0; g < cluster.rounds[r].size(); ++g)
          EXPECT_EQ(result.history[r][g].nodes, cluster.rounds[r][g]) << fleet;
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(fleets, 1000);
}

// A span found in one half does not end the round's other searches: the bad node in the other
// half is still found.
TEST(BisectionDecisions, ASpanDoesNotEndTheOtherSearchesOfItsRound) {
  Cluster cluster{{5}, {{0, 2}}, {}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner(), {.chase_links = false});
  EXPECT_EQ(result.bad_nodes, Nodes{5});
  ASSERT_EQ(result.spans.size(), 1u);
  EXPECT_EQ(result.spans[0].first, (Nodes{0, 1}));
  EXPECT_EQ(result.spans[0].second, (Nodes{2, 3}));
}

// The schedule of a chased link, round by round: the halves, then quarter pairs with the left
// quarter's nodes first.
TEST(BisectionDecisions, AChasedLinksRoundsPairQuartersLeftFirst) {
  Cluster cluster{{}, {{1, 6}}, {}, {}, {}};
  (void)bisect_faults(8, cluster.runner());
  ASSERT_GE(cluster.rounds.size(), 2u);
  EXPECT_EQ(cluster.rounds[0], (std::vector<Nodes>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(cluster.rounds[1], (std::vector<Nodes>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
}

TEST(BisectionDecisions, OneNodeIsRefused) {
  Cluster cluster{};
  EXPECT_THROW((void)bisect_faults(1, cluster.runner()), std::invalid_argument);
}

// A fault that needs three nodes together (no half and no quarter pair holds it) is never
// explained: the search stops after eight verifications that still fail, and says so.
TEST(BisectionDecisions, AFaultNoSearchExplainsStopsAfterEightVerifications) {
  std::vector<std::vector<Nodes>> rounds;
  const auto result = bisect_faults(4, [&rounds](const std::vector<Nodes>& groups) {
    rounds.push_back(groups);
    std::vector<bool> passed;
    for (const auto& group : groups) {
      const std::set<int> members(group.begin(), group.end());
      passed.push_back(!(members.contains(0) && members.contains(1) && members.contains(2)));
    }
    return passed;
  });
  EXPECT_TRUE(result.unexplained);
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_TRUE(result.bad_links.empty());
  const auto verifications =
      std::count(rounds.begin(), rounds.end(), std::vector<Nodes>{{0, 1, 2, 3}});
  EXPECT_EQ(verifications, 8);
}

// A chased link whose first quarter pairs pass does not hold up the round's other searches:
// the bad node of the other half is found in the same rounds, before any verification.
TEST(BisectionDecisions, AChasedLinkAndABadNodeAreSearchedInTheSameRounds) {
  Cluster cluster{{5}, {{0, 3}}, {}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner());
  EXPECT_EQ(result.bad_nodes, Nodes{5});
  EXPECT_EQ(result.bad_links, (std::vector<std::pair<int, int>>{{0, 3}}));
  EXPECT_EQ(result.rounds, 5);
}

}  // namespace
}  // namespace commcert
