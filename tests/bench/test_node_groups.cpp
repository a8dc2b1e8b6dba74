// `sweep --groups`: the spec (or group file) and the one round of node groups it plans.
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/groups.hpp"
#include "core/errors.hpp"
#include "node_groups_support.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;
using Groups = std::vector<std::vector<std::string>>;

using test_support::job;
using test_support::usage_error_of;

std::string spec_error(const std::string& spec) {
  return usage_error_of([&] { (void)parse_node_groups(spec, "--groups"); });
}

TEST(NodeGroups, ASpecNamesGroupsAndTheirNodes) {
  EXPECT_EQ(parse_node_groups("n0,n1;n2,n3,n4", "--groups"),
            (Groups{{"n0", "n1"}, {"n2", "n3", "n4"}}));
  EXPECT_EQ(parse_node_groups("n5", "--groups"), (Groups{{"n5"}}));
}

TEST(NodeGroups, BadSpecsNameTheFlagAndWhatIsWrong) {
  EXPECT_EQ(spec_error("n0,n1;n1,n2"),
            "--groups: node 'n1' is in group 1 and in group 2: groups of a round must be disjoint");
  EXPECT_EQ(spec_error("n0,n0"),
            "--groups: node 'n0' is in group 1 and in group 1: groups of a round must be disjoint");
  EXPECT_EQ(spec_error("n0,n1;;n2"), "--groups: group 2 is empty");
  EXPECT_EQ(spec_error("n0;"), "--groups: group 2 is empty");
  EXPECT_EQ(spec_error(""), "--groups: group 1 is empty");
  EXPECT_EQ(spec_error("n0,,n1"), "--groups: group 1 has an empty node name in 'n0,,n1'");
  EXPECT_EQ(spec_error("n0,"), "--groups: group 1 has an empty node name in 'n0,'");
}

TEST(NodeGroups, AGroupFileHasAGroupPerLineAndNamesTheLineOfAnError) {
  test_support::TempDirectory dir;
  const std::string path = (dir.path() / "groups.txt").string();
  {
    std::ofstream out(path);
    out << "# racks\nn0 n1, n2   # rack 1\n\n  n3\tn4 ; n5\n";
  }
  EXPECT_EQ(parse_node_groups("@" + path, "--groups"),
            (Groups{{"n0", "n1", "n2"}, {"n3", "n4"}, {"n5"}}));
  {
    std::ofstream out(path, std::ios::app);
    out << "n6,n2\n";
  }
  EXPECT_EQ(spec_error("@" + path), "--groups: node 'n2' is in " + path + ":2 and in " + path +
                                        ":5: groups of a round must be disjoint");
  {
    std::ofstream out(path);
    out << "# nothing but comments\n\n";
  }
  EXPECT_EQ(spec_error("@" + path), "--groups: '" + path + "' names no group");
  EXPECT_THAT(spec_error("@" + path + ".missing"), HasSubstr("cannot read the group file"));
}

TEST(NodeGroups, OneRoundOfGroupsWithEveryRankOfTheirNodesAndTheRestIdle) {
  const auto rounds = plan_rounds(Scope::kGroups, job(5, 2), PairRanks::kOne, {},
                                  NodeGroups{{{"n3", "n0"}, {"n4"}}, 7});
  ASSERT_EQ(rounds.size(), 1u);
  const GroupRound& round = rounds[0];
  EXPECT_EQ(round.round, 7);
  ASSERT_EQ(round.groups.size(), 2u);
  EXPECT_EQ(round.groups[0].ranks, (std::vector<int>{0, 1, 6, 7}));
  EXPECT_EQ(round.groups[0].nodes, (std::vector<std::string>{"n0", "n3"}));  // first-rank order
  EXPECT_EQ(round.groups[1].ranks, (std::vector<int>{8, 9}));
  EXPECT_EQ(round.group_of_rank, (std::vector<int>{0, 0, -1, -1, -1, -1, 0, 0, 1, 1}));
}

TEST(NodeGroups, ANodeTheJobDoesNotRunIsAUsageError) {
  EXPECT_EQ(usage_error_of([] {
              (void)plan_rounds(Scope::kGroups, job(2, 1), PairRanks::kOne, {},
                                NodeGroups{{{"n0", "n9"}}, 0});
            }),
            "--groups: no rank runs on node 'n9' in this job");
}

TEST(NodeGroups, TheScopeIsNamedGroups) {
  EXPECT_EQ(name_of(Scope::kGroups), "groups");
  EXPECT_EQ(parse_scope("groups", "--scope"), Scope::kGroups);
  EXPECT_THAT(usage_error_of([] { (void)parse_scope("rings", "--scope"); }),
              HasSubstr("cluster, node, pairs or groups"));
}

}  // namespace
}  // namespace commcert
