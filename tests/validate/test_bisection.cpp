// The bisection's decisions on synthetic group outcomes: what `commcert run` measures and the
// validator replays (validate/bisect_localization.*) are decided here, once.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
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

// A round as any runner must see it: every group of two nodes or more of the fleet's `n`, and no
// node in two groups.
void expect_disjoint_groups(const std::vector<Nodes>& groups, int n) {
  std::set<int> seen;
  for (const auto& group : groups) {
    EXPECT_GE(group.size(), 2u) << "a group of one node measures nothing";
    for (const int member : group) {
      EXPECT_TRUE(member >= 0 && member < n) << member;
      EXPECT_TRUE(seen.insert(member).second) << "groups of one round must be disjoint";
    }
  }
}

// What every result keeps: its outputs in node order, each blamed node re-tested with two
// distinct partners, and the history holding every round as it was asked.
void expect_ordered_outputs_and_history(const BisectionResult& result,
                                        const std::vector<std::vector<Nodes>>& rounds,
                                        const std::string& what) {
  EXPECT_TRUE(std::is_sorted(result.bad_nodes.begin(), result.bad_nodes.end())) << what;
  EXPECT_TRUE(std::is_sorted(result.bad_links.begin(), result.bad_links.end())) << what;
  EXPECT_TRUE(std::is_sorted(result.cleared.begin(), result.cleared.end())) << what;
  EXPECT_TRUE(std::is_sorted(result.unresolved.begin(), result.unresolved.end())) << what;
  ASSERT_EQ(result.failed_with.size(), result.bad_nodes.size()) << what;
  for (std::size_t i = 0; i < result.failed_with.size(); ++i) {
    const auto& [node, partners] = result.failed_with[i];
    EXPECT_EQ(node, result.bad_nodes[i]) << what;
    ASSERT_EQ(partners.size(), 2u) << what;
    EXPECT_NE(partners[0], partners[1]) << what;
  }
  ASSERT_EQ(result.history.size(), rounds.size()) << what;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    ASSERT_EQ(result.history[r].size(), rounds[r].size()) << what;
    for (std::size_t g = 0; g < rounds[r].size(); ++g)
      EXPECT_EQ(result.history[r][g].nodes, rounds[r][g]) << what;
  }
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
      expect_disjoint_groups(groups, std::numeric_limits<int>::max());
      std::vector<bool> passed;
      for (const auto& group : groups) {
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

// Two links across the same halves, one in each quarter pair: both pairs fail in one round and
// both are chased side by side, in the rounds one link takes.
TEST(BisectionDecisions, EveryFailingQuarterPairIsChased) {
  Cluster cluster{{}, {{1, 5}, {2, 7}}, {}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner());
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_EQ(result.bad_links, (std::vector<std::pair<int, int>>{{1, 5}, {2, 7}}));
  EXPECT_LE(result.rounds, 2 * ceil_log2(8));
  // The round after the halves: both quarter pairs failed, and the next holds both searches.
  ASSERT_GE(cluster.rounds.size(), 3u);
  EXPECT_EQ(cluster.rounds[1], (std::vector<Nodes>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(cluster.rounds[2].size(), 4u);
}

TEST(BisectionDecisions, ALinkIsFoundWhenLinksAreChased) {
  Cluster cluster{{}, {{1, 6}}, {}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner());
  EXPECT_TRUE(result.bad_nodes.empty());
  EXPECT_EQ(result.bad_links, (std::vector<std::pair<int, int>>{{1, 6}}));
  EXPECT_LE(result.rounds, 2 * ceil_log2(8));
  // The fleet is then verified without the link's higher end.
  EXPECT_EQ(cluster.rounds.back(), (std::vector<Nodes>{{0, 1, 2, 3, 4, 5, 7}}));
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
  // The fleet is then verified without the cleared node.
  EXPECT_EQ(cluster.rounds.back(), (std::vector<Nodes>{{0, 1, 3, 4, 5, 6, 7}}));
}

// A node cleared by its confirmation does not end the round's other searches: a bad node
// confirmed in the same round is blamed there, and the fleet is verified right after.
TEST(BisectionDecisions, AClearedNodeDoesNotEndItsRoundsOtherConfirmations) {
  // Round 1 both halves fail (noise in the first, node 6 in the second); round 2 {2,3} fails by
  // noise; round 3 node 2's lone test fails by noise; round 4 confirms 2 (passes) and 6 (fails).
  Cluster cluster{{6}, {}, {{{0, 1, 2, 3}, 1}, {{2, 3}, 1}, {{0, 2}, 1}}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner(), {.chase_links = false});
  EXPECT_EQ(result.cleared, Nodes{2});
  EXPECT_EQ(result.bad_nodes, Nodes{6});
  EXPECT_EQ(result.rounds, 5);
  EXPECT_EQ(cluster.rounds.back(), (std::vector<Nodes>{{0, 1, 3, 4, 5, 7}}));
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
  // {0,1}; {2,0}; {2,1}; then the two nodes left are verified together.
  EXPECT_EQ(found.rounds, 4);
  EXPECT_EQ(last.rounds.back(), (std::vector<Nodes>{{0, 1}}));
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

// The message a refusal carries, or "" when the call does not throw invalid_argument.
std::string refusal_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// An answer shorter or longer than the round's groups is refused, saying why.
TEST(BisectionDecisions, AnAnswerOfTheWrongLengthIsRefused) {
  for (const std::size_t answers : {1u, 3u}) {
    EXPECT_EQ(refusal_of([answers] {
                (void)bisect_faults(4, [answers](const std::vector<Nodes>&) {
                  return std::vector<bool>(answers, true);
                });
              }),
              "a round's answer must say for every group whether it passed")
        << answers;
  }
}

// What every search must keep on one fleet: nobody healthy blamed, every fault found where every
// node could be compared with a known-good one, the bad nodes, links, cleared nodes and partners
// listed in order, each bad node re-tested with two distinct known-good partners, and the history
// holding every group of every round as it was tested (the harness checks each round's groups
// are disjoint and hold two nodes or more). Links cost verification rounds (a quarter pair's
// second failure is not followed, and a lone node tested with the other end of its link is
// cleared as noise and verified again): fleets with bad nodes only are held to two rounds per
// halving and two more.
void expect_the_invariants(int n, const std::set<int>& bad_nodes,
                           const std::set<std::pair<int, int>>& bad_links) {
  Cluster cluster{bad_nodes, bad_links, {}, {}, {}};
  const auto result = bisect_faults(n, cluster.runner());
  const std::string fleet = ::testing::PrintToString(n) + " nodes, bad " +
                            ::testing::PrintToString(bad_nodes) + ", links " +
                            ::testing::PrintToString(bad_links);
  for (const int node : result.bad_nodes)
    ASSERT_TRUE(bad_nodes.contains(node)) << fleet;
  for (const auto& link : result.bad_links)
    ASSERT_TRUE(bad_links.contains(link)) << fleet;
  if (result.unresolved.empty() && !result.unexplained) {
    ASSERT_EQ(result.bad_nodes, Nodes(bad_nodes.begin(), bad_nodes.end())) << fleet;
    if (result.cleared.empty()) {
      const std::set<std::pair<int, int>> found(result.bad_links.begin(), result.bad_links.end());
      ASSERT_EQ(found, bad_links) << fleet;
    }
  }
  if (bad_links.empty()) {
    // More than three bad nodes leave fewer known-good nodes to test lone ones with: one round
    // more.
    const int extra = bad_nodes.size() > 3 ? 1 : 0;
    EXPECT_LE(result.rounds, 2 * ceil_log2(n) + 2 + extra) << fleet;
  }
  expect_ordered_outputs_and_history(result, cluster.rounds, fleet);
  for (const auto& [node, partners] : result.failed_with) {
    for (const int partner : partners)
      EXPECT_FALSE(bad_nodes.contains(partner)) << fleet;
  }
}

// Over every fleet of 4 to 12 nodes with one to three bad nodes, one bad node and one bad link,
// or two bad links (links chased).
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
      expect_the_invariants(n, bad_nodes, bad_links);
      ++fleets;
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(fleets, 1000);
}

// Over every fleet of 3 to 8 nodes with any set of bad nodes (none to all), and up to 6 nodes
// with up to two bad nodes and one bad link between healthy nodes: the shapes a handful of faults
// do not reach (most of a fleet bad, three nodes).
TEST(BisectionProperties, EverySetOfBadNodesOnSmallFleetsKeepsTheInvariants) {
  for (int n = 3; n <= 8; ++n) {
    for (unsigned mask = 0; mask < (1u << n); ++mask) {
      std::set<int> bad_nodes;
      for (int node = 0; node < n; ++node) {
        if (mask & (1u << node)) bad_nodes.insert(node);
      }
      expect_the_invariants(n, bad_nodes, {});
      if (n > 6 || bad_nodes.size() > 2) continue;
      // A link with a bad node at an end is hidden by it: every group holding both ends fails
      // for the node.
      for (int a = 0; a < n; ++a) {
        for (int b = a + 1; b < n; ++b) {
          if (!bad_nodes.contains(a) && !bad_nodes.contains(b))
            expect_the_invariants(n, bad_nodes, {{a, b}});
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Over every fleet of 6 to 8 nodes with three bad links that share no node (a node on several
// bad links fails like a bad node, and may be blamed as one): searches that run side by side in
// one round (a quarter pair beside a lone node's test) keep their groups apart.
TEST(BisectionProperties, EveryThreeSeparateLinksOnSmallFleetsKeepTheInvariants) {
  for (int n = 6; n <= 8; ++n) {
    std::vector<std::pair<int, int>> links;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b)
        links.emplace_back(a, b);
    }
    const auto apart = [](std::pair<int, int> x, std::pair<int, int> y) {
      return x.first != y.first && x.first != y.second && x.second != y.first &&
             x.second != y.second;
    };
    for (std::size_t i = 0; i < links.size(); ++i) {
      for (std::size_t j = i + 1; j < links.size(); ++j) {
        for (std::size_t k = j + 1; k < links.size(); ++k) {
          if (!apart(links[i], links[j]) || !apart(links[i], links[k]) ||
              !apart(links[j], links[k]))
            continue;
          expect_the_invariants(n, {}, {links[i], links[j], links[k]});
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// Noise can answer any group either way. Over many seeded random answers on fleets of 3 to 10
// nodes: every round's groups are disjoint and hold two nodes or more (checked by the harness
// below), every blamed node failed with two distinct partners, the outputs are in node order, the
// history is every round as asked, and every run ends.
TEST(BisectionProperties, AnyAnswersKeepTheGroupsApartAndTheOutputsInOrder) {
  for (int n = 3; n <= 10; ++n) {
    for (unsigned seed = 0; seed < 300; ++seed) {
      std::mt19937 random(seed * 131u + static_cast<unsigned>(n));
      const double pass_rate = 0.3 + 0.1 * (seed % 7);
      std::vector<std::vector<Nodes>> rounds;
      const auto result = bisect_faults(n, [&](const std::vector<Nodes>& groups) {
        rounds.push_back(groups);
        expect_disjoint_groups(groups, n);
        std::vector<bool> passed;
        for (std::size_t g = 0; g < groups.size(); ++g)
          passed.push_back(std::uniform_real_distribution<double>(0, 1)(random) < pass_rate);
        return passed;
      });
      const std::string run =
          ::testing::PrintToString(n) + " nodes, seed " + ::testing::PrintToString(seed);
      expect_ordered_outputs_and_history(result, rounds, run);
      if (::testing::Test::HasFailure()) return;
    }
  }
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
  // Both pass, so the quarters are crossed; the failing pair is chased the same way, its left
  // quarter's node first.
  EXPECT_EQ(cluster.rounds[2], (std::vector<Nodes>{{0, 1, 6, 7}, {2, 3, 4, 5}}));
  ASSERT_GE(cluster.rounds.size(), 5u);
  EXPECT_EQ(cluster.rounds[3], (std::vector<Nodes>{{0, 6}, {1, 7}}));
  EXPECT_EQ(cluster.rounds[4], (std::vector<Nodes>{{0, 7}, {1, 6}}));
}

TEST(BisectionDecisions, OneNodeIsRefused) {
  Cluster cluster{};
  EXPECT_EQ(refusal_of([&cluster] { (void)bisect_faults(1, cluster.runner()); }),
            "bisection needs at least two nodes");
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
  ASSERT_EQ(result.failed_with.size(), 1u);
  EXPECT_EQ(result.failed_with[0].second, (Nodes{7, 6}));
}

// A quarter pair chased further (two nodes a side) does not end the round's other searches: the
// bad node of the other half is found in the same rounds, before any verification.
TEST(BisectionDecisions, AChasedLinksNarrowerPairDoesNotEndItsRoundsOtherSearches) {
  Cluster cluster{{15}, {{0, 4}}, {}, {}, {}};
  const auto result = bisect_faults(16, cluster.runner());
  EXPECT_EQ(result.bad_nodes, Nodes{15});
  EXPECT_EQ(result.bad_links, (std::vector<std::pair<int, int>>{{0, 4}}));
  EXPECT_EQ(result.rounds, 6);
}

// The halves of a chased link pass on their own, but one of their nodes is on the bad link: they
// are no known-good references, even once the link is found. Node 7 is confirmed with the
// nodes of its own passing quarter, not with node 0, which is free by then.
TEST(BisectionDecisions, AChasedLinksHalvesAreNoReferences) {
  Cluster cluster{{7}, {{0, 2}}, {}, {}, {}};
  const auto result = bisect_faults(8, cluster.runner());
  EXPECT_EQ(result.bad_nodes, Nodes{7});
  EXPECT_EQ(result.bad_links, (std::vector<std::pair<int, int>>{{0, 2}}));
  ASSERT_EQ(result.failed_with.size(), 1u);
  EXPECT_EQ(result.failed_with[0].second, (Nodes{5, 4}));
}

}  // namespace
}  // namespace commcert
