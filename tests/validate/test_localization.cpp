#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bench/groups.hpp"
#include "validate/localization.hpp"

namespace commcert {
namespace {

std::string node(int i) {
  return "n" + std::to_string(i);
}

// A fleet with some bad nodes and bad links: a collective over a group fails when the group holds
// a bad node (and another node to talk to) or both ends of a bad link.
struct Fleet {
  std::set<int> bad_nodes;
  std::set<std::pair<int, int>> bad_links;

  [[nodiscard]] bool group_passes(const std::vector<int>& group) const {
    if (group.size() < 2) return true;
    const std::set<int> members(group.begin(), group.end());
    for (const int bad : bad_nodes) {
      if (members.contains(bad)) return false;
    }
    for (const auto& [a, b] : bad_links) {
      if (members.contains(a) && members.contains(b)) return false;
    }
    return true;
  }

  // Every pair, as the pairs scope measures it, in circle-method rounds.
  [[nodiscard]] std::pair<std::vector<PairOutcome>, int> all_pairs(int n) const {
    std::vector<PairOutcome> outcomes;
    const auto rounds = round_robin_pairs(n);
    for (const auto& round : rounds) {
      for (const auto& [a, b] : round)
        outcomes.push_back({node(a), node(b), group_passes({a, b})});
    }
    return {outcomes, static_cast<int>(rounds.size())};
  }

  [[nodiscard]] GroupRoundRunner runner() const {
    return [this](const std::vector<std::vector<int>>& groups) {
      std::set<int> seen;
      std::vector<bool> passed;
      for (const auto& group : groups) {
        for (const int member : group) {
          EXPECT_TRUE(seen.insert(member).second) << "groups of one round must be disjoint";
        }
        passed.push_back(group_passes(group));
      }
      return passed;
    };
  }
};

int ceil_log2(int n) {
  return static_cast<int>(std::ceil(std::log2(n)));
}

TEST(AttributePairFailures, ANodeFailingWithMostPartnersIsBad) {
  const Fleet fleet{{3}, {}};
  const auto [outcomes, rounds] = fleet.all_pairs(8);
  EXPECT_EQ(rounds, 7);
  const auto findings = attribute_pair_failures(outcomes);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, LocalizationKind::kBadNode);
  EXPECT_EQ(findings[0].node, "n3");
  EXPECT_EQ((std::pair{findings[0].failed_partners, findings[0].partners}), (std::pair{7, 7}));
}

TEST(AttributePairFailures, ASingleFailingPairIsASuspectLinkNotTwoBadNodes) {
  const Fleet fleet{{}, {{2, 5}}};
  const auto findings = attribute_pair_failures(fleet.all_pairs(8).first);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, LocalizationKind::kSuspectLink);
  EXPECT_EQ((std::set<std::string>{findings[0].node, findings[0].other}),
            (std::set<std::string>{"n2", "n5"}));
}

TEST(AttributePairFailures, ABadNodeAndABadLinkTogether) {
  const Fleet fleet{{6}, {{1, 4}}};
  const auto findings = attribute_pair_failures(fleet.all_pairs(9).first);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].kind, LocalizationKind::kBadNode);
  EXPECT_EQ(findings[0].node, "n6");
  EXPECT_EQ(findings[1].kind, LocalizationKind::kSuspectLink);
}

TEST(AttributePairFailures, EveryFailingPairIsJudgedAfterASuspectNode) {
  // Node 1 fails with 2 of its 7 partners (not most: not bad), so the pair 1-2 names both ends
  // as suspects; the failures after it must still be judged: node 3, which failed with node 1,
  // and the unrelated link 5-6.
  const Fleet fleet{{}, {{1, 2}, {1, 3}, {5, 6}}};
  std::set<std::pair<LocalizationKind, std::string>> found;
  for (const auto& finding : attribute_pair_failures(fleet.all_pairs(8).first)) {
    found.insert({finding.kind, finding.kind == LocalizationKind::kSuspectLink
                                    ? finding.node + "-" + finding.other
                                    : finding.node});
  }
  EXPECT_EQ(found, (std::set<std::pair<LocalizationKind, std::string>>{
                       {LocalizationKind::kSuspectNode, "n1"},
                       {LocalizationKind::kSuspectNode, "n2"},
                       {LocalizationKind::kSuspectNode, "n3"},
                       {LocalizationKind::kSuspectLink, "n5-n6"}}));
}

TEST(AttributePairFailures, ANodeWithOnePartnerCannotBeToldFromItsLink) {
  // n1 was paired only with n0, and failed: n0 passed with its other partners, but nothing
  // shows that n1 works with anyone, so the pair is not a link: both ends stay suspects. The
  // same whichever end is listed first.
  for (const bool n1_first : {false, true}) {
    const PairOutcome failing =
        n1_first ? PairOutcome{"n1", "n0", false} : PairOutcome{"n0", "n1", false};
    const std::vector<PairOutcome> outcomes = {failing, {"n0", "n2", true}, {"n0", "n3", true}};
    std::set<std::pair<LocalizationKind, std::string>> found;
    for (const auto& finding : attribute_pair_failures(outcomes))
      found.insert({finding.kind, finding.node});
    EXPECT_EQ(found,
              (std::set<std::pair<LocalizationKind, std::string>>{
                  {LocalizationKind::kSuspectNode, "n0"}, {LocalizationKind::kSuspectNode, "n1"}}))
        << n1_first;
  }
}

TEST(AttributePairFailures, HealthyFleetHasNoFinding) {
  EXPECT_TRUE(attribute_pair_failures(Fleet{}.all_pairs(16).first).empty());
}

TEST(SecondPass, SuspectsAreRetestedAgainstDistinctKnownGoodNodes) {
  const Fleet fleet{{}, {{2, 5}}};
  const auto outcomes = fleet.all_pairs(8).first;
  const auto plan = second_pass_pairs(outcomes, attribute_pair_failures(outcomes));
  ASSERT_EQ(plan.size(), 2u);
  std::set<std::string> partners;
  for (const auto& [suspect, good] : plan) {
    EXPECT_TRUE(suspect == "n2" || suspect == "n5");
    EXPECT_NE(good, "n2");
    EXPECT_NE(good, "n5");
    partners.insert(good);
  }
  EXPECT_EQ(partners.size(), 2u);
}

// A finding as the report names it: kind, node(s), failed partners of partners.
std::string described(const LocalizationFinding& f) {
  const char* kind = f.kind == LocalizationKind::kBadNode       ? "bad"
                     : f.kind == LocalizationKind::kSuspectLink ? "link"
                                                                : "suspect";
  return std::string(kind) + " " + f.node + (f.other.empty() ? "" : "-" + f.other) + " " +
         std::to_string(f.failed_partners) + "/" + std::to_string(f.partners);
}

std::vector<std::string> described(const std::vector<LocalizationFinding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings)
    out.push_back(described(f));
  return out;
}

// Bad: failed with more than half of its partners, and with at least two. Half is not more than
// half; two of three is; one of one is too few to tell the node from its only link.
TEST(AttributePairFailures, TheMajorityIsMoreThanHalfOfThePartnersAndAtLeastTwo) {
  const std::vector<PairOutcome> half = {{"n0", "n1", false}, {"n0", "n2", false},
                                         {"n0", "n3", true},  {"n0", "n4", true},
                                         {"n1", "n3", true},  {"n2", "n4", true}};
  EXPECT_EQ(described(attribute_pair_failures(half)),
            (std::vector<std::string>{"suspect n0 2/4", "suspect n1 1/2", "suspect n2 1/2"}));
  const std::vector<PairOutcome> two_of_three = {
      {"n0", "n1", false}, {"n0", "n2", false}, {"n0", "n3", true}};
  EXPECT_EQ(described(attribute_pair_failures(two_of_three)),
            (std::vector<std::string>{"bad n0 2/3"}));
  const std::vector<PairOutcome> one_of_one = {{"n0", "n1", false}};
  EXPECT_EQ(described(attribute_pair_failures(one_of_one)),
            (std::vector<std::string>{"suspect n0 1/1", "suspect n1 1/1"}));
}

// A suspect link counts the one failure each of its ends had, of the first end's partners; the
// ends of a failing pair that is no link are named in the pair's order.
TEST(AttributePairFailures, ALinkCountsItsOneFailureAndSuspectsFollowThePairsOrder) {
  const Fleet fleet{{}, {{2, 5}}};
  const auto findings = attribute_pair_failures(fleet.all_pairs(8).first);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].failed_partners, 1);
  EXPECT_EQ(findings[0].partners, 7);
  const std::vector<PairOutcome> lone = {{"n1", "n0", false}, {"n0", "n2", true}};
  EXPECT_EQ(described(attribute_pair_failures(lone)),
            (std::vector<std::string>{"suspect n1 1/1", "suspect n0 1/2"}));
}

// At three failures the majority rule still counts: three of five partners is bad, three of six
// is not (half is not more than half).
TEST(AttributePairFailures, ThreeFailuresAreBadOfFivePartnersNotOfSix) {
  std::vector<PairOutcome> outcomes;
  for (const std::string partner : {"n1", "n2", "n3"})
    outcomes.push_back({"n0", partner, false});
  for (const std::string partner : {"n4", "n5"})
    outcomes.push_back({"n0", partner, true});
  EXPECT_EQ(described(attribute_pair_failures(outcomes)), (std::vector<std::string>{"bad n0 3/5"}));
  outcomes.push_back({"n0", "n6", true});
  EXPECT_EQ(described(attribute_pair_failures(outcomes)),
            (std::vector<std::string>{"suspect n0 3/6", "suspect n1 1/1", "suspect n2 1/1",
                                      "suspect n3 1/1"}));
}

// A failing pair is a link only when each end failed with that partner alone: an end that failed
// with another partner too (not most of them) makes both ends suspects.
TEST(AttributePairFailures, APairIsNoLinkWhenAnEndFailedWithAnotherPartnerToo) {
  const std::vector<PairOutcome> outcomes = {{"n0", "n1", false}, {"n0", "n2", true},
                                             {"n1", "n2", true},  {"n1", "n3", false},
                                             {"n1", "n4", true},  {"n3", "n4", true}};
  EXPECT_EQ(described(attribute_pair_failures(outcomes)),
            (std::vector<std::string>{"suspect n0 1/2", "suspect n1 2/4", "suspect n3 1/2"}));
}

// Every failing pair is judged after a link is found: two links, two findings.
TEST(AttributePairFailures, EveryFailingPairIsJudgedAfterALink) {
  const Fleet fleet{{}, {{1, 2}, {5, 6}}};
  std::vector<std::string> links;
  for (const auto& finding : attribute_pair_failures(fleet.all_pairs(8).first)) {
    EXPECT_EQ(finding.kind, LocalizationKind::kSuspectLink);
    links.push_back(finding.node + "-" + finding.other);
  }
  std::sort(links.begin(), links.end());
  EXPECT_EQ(links, (std::vector<std::string>{"n1-n2", "n5-n6"}));
}

// Every suspect is planned, those after a link as well as before it, each with its own good node.
TEST(SecondPass, EverySuspectAfterALinkIsPlannedToo) {
  const Fleet fleet{};
  const auto outcomes = fleet.all_pairs(8).first;
  const std::vector<LocalizationFinding> findings = {
      {LocalizationKind::kSuspectLink, "n2", "n5", 1, 7},
      {LocalizationKind::kSuspectNode, "n7", "", 1, 7}};
  EXPECT_EQ(
      second_pass_pairs(outcomes, findings),
      (std::vector<std::pair<std::string, std::string>>{{"n2", "n0"}, {"n5", "n1"}, {"n7", "n2"}}));
}

// Ends with two partners each are enough to tell a link: each passed with its other partner.
TEST(AttributePairFailures, ALinkBetweenNodesWithTwoPartnersEach) {
  const std::vector<PairOutcome> three = {
      {"n0", "n1", false}, {"n0", "n2", true}, {"n1", "n2", true}};
  EXPECT_EQ(described(attribute_pair_failures(three)),
            (std::vector<std::string>{"link n0-n1 1/2"}));
}

// A bad node is not re-tested (it is blamed), and suspects beyond the known-good nodes wait.
TEST(SecondPass, OnlySuspectsArePlannedAndNoMoreThanThereAreGoodNodes) {
  const std::vector<PairOutcome> outcomes = {
      {"n0", "n1", false}, {"n2", "n3", false}, {"n4", "n5", true}};
  const std::vector<LocalizationFinding> findings = {
      {LocalizationKind::kBadNode, "n0", "", 2, 3},
      {LocalizationKind::kSuspectNode, "n1", "", 1, 1},
      {LocalizationKind::kSuspectNode, "n2", "", 1, 1},
      {LocalizationKind::kSuspectNode, "n3", "", 1, 1}};
  EXPECT_EQ(second_pass_pairs(outcomes, findings),
            (std::vector<std::pair<std::string, std::string>>{{"n1", "n4"}, {"n2", "n5"}}));
}

// A suspect node is re-tested too, against a node that failed with nobody.
TEST(SecondPass, ASuspectNodeIsRetestedAgainstAKnownGoodNode) {
  const std::vector<PairOutcome> outcomes = {
      {"n1", "n0", false}, {"n0", "n2", true}, {"n0", "n3", true}, {"n2", "n3", true}};
  const auto plan = second_pass_pairs(outcomes, attribute_pair_failures(outcomes));
  EXPECT_EQ(plan, (std::vector<std::pair<std::string, std::string>>{{"n1", "n2"}, {"n0", "n3"}}));
}

TEST(Bisection, OneBadNodeAmong1024InLog2Rounds) {
  for (const int bad : {0, 511, 512, 777, 1023}) {
    const Fleet fleet{{bad}, {}};
    const auto result = bisect_faults(1024, fleet.runner());
    EXPECT_EQ(result.bad_nodes, std::vector<int>{bad});
    EXPECT_TRUE(result.bad_links.empty());
    EXPECT_LE(result.rounds, ceil_log2(1024) + 2) << "bad node " << bad;
  }
}

TEST(Bisection, OneBadLinkAmong1024InTwiceLog2Rounds) {
  for (const auto& link :
       {std::pair{0, 1}, std::pair{3, 1000}, std::pair{511, 512}, std::pair{100, 900}}) {
    const Fleet fleet{{}, {link}};
    const auto result = bisect_faults(1024, fleet.runner());
    EXPECT_TRUE(result.bad_nodes.empty());
    EXPECT_EQ(result.bad_links, (std::vector<std::pair<int, int>>{link}));
    EXPECT_LE(result.rounds, 2 * ceil_log2(1024)) << link.first << "-" << link.second;
  }
}

TEST(Bisection, ABadNodeAndABadLinkAtOnce) {
  const Fleet fleet{{700}, {{12, 300}}};
  const auto result = bisect_faults(1024, fleet.runner());
  EXPECT_EQ(result.bad_nodes, std::vector<int>{700});
  EXPECT_EQ(result.bad_links, (std::vector<std::pair<int, int>>{{12, 300}}));
  // The bad node masks the link until a verification round re-tests the fleet without it.
  EXPECT_LE(result.rounds, 3 * ceil_log2(1024) + 2);
}

TEST(Bisection, OddSizesAndSmallFleets) {
  for (const int n : {3, 5, 7, 33, 1000}) {
    const Fleet fleet{{n - 1}, {}};
    const auto result = bisect_faults(n, fleet.runner());
    EXPECT_EQ(result.bad_nodes, std::vector<int>{n - 1}) << n;
    EXPECT_LE(result.rounds, ceil_log2(n) + 2) << n;
  }
  // Two nodes with no third to compare against cannot be told apart: say so.
  const auto two = bisect_faults(2, Fleet{{1}, {}}.runner());
  EXPECT_TRUE(two.bad_nodes.empty());
  EXPECT_EQ(two.unresolved, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace commcert
