// The model itself: Slurm's levels, paths between leaves in trees with one parent per switch and
// with several (fat trees, pods), separate trees, and build_topology's own checks.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "topology/slurm_topology.hpp"
#include "topology/topology.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Topology parse(std::string_view text) {
  return parse_slurm_topology(text, "t.conf");
}

std::string build_error(TopologyParts parts) {
  try {
    (void)build_topology(std::move(parts));
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

// core over agg1 and agg2; agg1 over l1 and l2, agg2 over l3; l4 hangs from the core directly.
constexpr std::string_view kTree =
    "SwitchName=l1 Nodes=n1\nSwitchName=l2 Nodes=n2\nSwitchName=l3 Nodes=n3\n"
    "SwitchName=l4 Nodes=n4\n"
    "SwitchName=agg1 Switches=l[1-2]\nSwitchName=agg2 Switches=l3\n"
    "SwitchName=core Switches=agg[1-2],l4\n";

TEST(TopologyTest, LevelsAreOneAboveTheHighestChildAsSlurmCountsThem) {
  const Topology topology = parse(kTree);
  EXPECT_EQ(topology.find_switch("l4")->level, 0);
  EXPECT_EQ(topology.find_switch("agg2")->level, 1);
  EXPECT_EQ(topology.find_switch("core")->level, 2);
  EXPECT_EQ(topology.find_switch("nowhere"), nullptr);
}

TEST(TopologyTest, PathInATreeClimbsToTheLowestCommonSwitch) {
  const Topology topology = parse(kTree);
  const auto same_agg = topology.path_between("l1", "l2");
  ASSERT_TRUE(same_agg);
  EXPECT_THAT(same_agg->hops,
              ElementsAre(ElementsAre("l1"), ElementsAre("agg1"), ElementsAre("l2")));
  EXPECT_THAT(same_agg->lowest_common, ElementsAre("agg1"));

  const auto across = topology.path_between("l1", "l3");
  ASSERT_TRUE(across);
  EXPECT_THAT(across->hops, ElementsAre(ElementsAre("l1"), ElementsAre("agg1"), ElementsAre("core"),
                                        ElementsAre("agg2"), ElementsAre("l3")));
  EXPECT_THAT(across->lowest_common, ElementsAre("core"));

  // Uneven depths: l4 is one hop below the core, l2 two.
  const auto uneven = topology.path_between("l2", "l4");
  ASSERT_TRUE(uneven);
  EXPECT_THAT(uneven->hops, ElementsAre(ElementsAre("l2"), ElementsAre("agg1"), ElementsAre("core"),
                                        ElementsAre("l4")));
  const auto reverse = topology.path_between("l4", "l2");
  ASSERT_TRUE(reverse);
  EXPECT_THAT(reverse->hops, ElementsAre(ElementsAre("l4"), ElementsAre("core"),
                                         ElementsAre("agg1"), ElementsAre("l2")));
  // Between a switch and one above it, the path only climbs.
  EXPECT_THAT(topology.path_between("l1", "core")->hops,
              ElementsAre(ElementsAre("l1"), ElementsAre("agg1"), ElementsAre("core")));
}

TEST(TopologyTest, PathInAFatTreeWithPodsOffersEverySwitchOfAHop) {
  // Two pods of two leaves, each pod with two aggregation switches over both its leaves, and two
  // cores over all four aggregation switches.
  const Topology topology = parse(
      "SwitchName=p1l1 Nodes=a\nSwitchName=p1l2 Nodes=b\n"
      "SwitchName=p2l1 Nodes=c\nSwitchName=p2l2 Nodes=d\n"
      "SwitchName=p1a1 Switches=p1l[1-2]\nSwitchName=p1a2 Switches=p1l[1-2]\n"
      "SwitchName=p2a1 Switches=p2l[1-2]\nSwitchName=p2a2 Switches=p2l[1-2]\n"
      "SwitchName=c1 Switches=p1a[1-2],p2a[1-2]\nSwitchName=c2 Switches=p1a[1-2],p2a[1-2]\n");
  const auto within_pod = topology.path_between("p1l1", "p1l2");
  ASSERT_TRUE(within_pod);
  EXPECT_THAT(within_pod->hops,
              ElementsAre(ElementsAre("p1l1"), ElementsAre("p1a1", "p1a2"), ElementsAre("p1l2")));
  EXPECT_THAT(within_pod->lowest_common, ElementsAre("p1a1", "p1a2"));

  const auto across = topology.path_between("p1l2", "p2l1");
  ASSERT_TRUE(across);
  EXPECT_THAT(across->hops,
              ElementsAre(ElementsAre("p1l2"), ElementsAre("p1a1", "p1a2"), ElementsAre("c1", "c2"),
                          ElementsAre("p2a1", "p2a2"), ElementsAre("p2l1")));
  EXPECT_THAT(across->lowest_common, ElementsAre("c1", "c2"));
}

TEST(TopologyTest, NoPathBetweenSeparateTrees) {
  const Topology topology = parse(
      "SwitchName=a1 Nodes=n1\nSwitchName=ta Switches=a1\n"
      "SwitchName=b1 Nodes=n2\nSwitchName=tb Switches=b1\n");
  EXPECT_EQ(topology.path_between("a1", "b1"), std::nullopt);
  EXPECT_THROW((void)topology.path_between("a1", "n2"), std::invalid_argument);
}

TEST(TopologyTest, AnswersNothingForAHostItDoesNotHold) {
  const Topology topology = parse(kTree);
  EXPECT_TRUE(topology.attachments("n9").empty());
  EXPECT_TRUE(topology.leaves_of("n9").empty());
  EXPECT_EQ(topology.leaf_of("n9"), std::nullopt);
  EXPECT_EQ(topology.leaf_of(""), std::nullopt);
}

TEST(TopologyTest, BuildRefusesPartsNoReaderShouldHand) {
  TopologyParts unknown_leaf;
  unknown_leaf.switches = {{"s", std::nullopt, "x:1"}};
  unknown_leaf.attachments = {{"n1", {"t", "", std::nullopt, "x:2"}}};
  EXPECT_THAT(build_error(unknown_leaf), HasSubstr("x:2: switch 't' is not defined"));

  TopologyParts hosts_above_leaves;
  hosts_above_leaves.switches = {{"leaf", std::nullopt, "x:1"}, {"top", std::nullopt, "x:2"}};
  hosts_above_leaves.links = {{"leaf", "top", std::nullopt, std::nullopt, "x:2"}};
  hosts_above_leaves.attachments = {{"n1", {"top", "", std::nullopt, "x:3"}}};
  EXPECT_THAT(build_error(hosts_above_leaves),
              HasSubstr("x:3: host 'n1' is attached to switch 'top', which has child switches"));

  TopologyParts unknown_parent;
  unknown_parent.switches = {{"leaf", std::nullopt, "x:1"}};
  unknown_parent.links = {{"leaf", "top", std::nullopt, std::nullopt, "x:4"}};
  EXPECT_THAT(build_error(unknown_parent), HasSubstr("x:4: switch 'top' is not defined"));
}

}  // namespace
}  // namespace commcert
