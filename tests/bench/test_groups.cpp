#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/groups.hpp"
#include "core/errors.hpp"
#include "node_groups_support.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

using test_support::job;
using test_support::usage_error_of;

TEST(PlanRounds, EveryPairOnceWithTheNodesFirstRanks) {
  const auto rounds = plan_rounds(Scope::kPairs, job(5, 2));
  EXPECT_EQ(rounds.size(), 5u);  // odd: N rounds with a bye each
  std::set<std::vector<std::string>> pairs;
  for (const auto& round : rounds) {
    for (const auto& group : round.groups) {
      EXPECT_EQ(group.ranks.size(), 2u);
      for (const int rank : group.ranks)
        EXPECT_EQ(rank % 2, 0) << "a node's first rank";
      EXPECT_TRUE(pairs.insert(group.nodes).second);
    }
  }
  EXPECT_EQ(pairs.size(), 10u);
}

TEST(PlanRounds, AListedPairsPlanMeasuresOnlyThosePairsInDisjointRounds) {
  const auto rounds = plan_rounds(Scope::kPairs, job(6, 2), PairRanks::kAll,
                                  parse_pair_list("n1:n0,n4:n2,n1:n3", "--pair-list"));
  ASSERT_EQ(rounds.size(), 2u);  // n1 is in two pairs: they cannot share a round
  ASSERT_EQ(rounds[0].groups.size(), 2u);
  EXPECT_EQ(rounds[0].groups[0].nodes, (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(rounds[0].groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(rounds[0].groups[1].nodes, (std::vector<std::string>{"n2", "n4"}));
  ASSERT_EQ(rounds[1].groups.size(), 1u);
  EXPECT_EQ(rounds[1].groups[0].nodes, (std::vector<std::string>{"n1", "n3"}));
  EXPECT_EQ(rounds[1].group_of_rank[2], 0);   // n1's first rank
  EXPECT_EQ(rounds[1].group_of_rank[0], -1);  // n0 sits this round out
}

TEST(PlanRounds, AListedNodeTheJobDoesNotHaveIsAUsageError) {
  EXPECT_THAT(usage_error_of([] {
                (void)plan_rounds(Scope::kPairs, job(3, 1), PairRanks::kOne,
                                  parse_pair_list("n0:n7", "--pair-list"));
              }),
              HasSubstr("no rank runs on node 'n7'"));
}

TEST(ParsePairList, RejectsWhatIsNotAListOfNodePairs) {
  EXPECT_EQ(parse_pair_list("a:b", "--pair-list"), (std::vector<NodePair>{{"a", "b"}}));
  for (const char* bad : {"", "a", "a:", ":b", "a:b:c", "a:b,", "a:a"}) {
    EXPECT_THAT(usage_error_of([&] { (void)parse_pair_list(bad, "--pair-list"); }),
                HasSubstr("--pair-list"))
        << bad;
  }
}

}  // namespace
}  // namespace commcert
