// Slurm's topology.conf and `scontrol show topology` read into the model: the fixtures, Slurm's
// syntax (case-insensitive keys, quotes, comments), a 1,024-host fat tree, and every error's
// file:line.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "fabric_text.hpp"
#include "topology/slurm_topology.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::filesystem::path fixture_path(const std::string& name) {
  return std::filesystem::path(COMMCERT_SOURCE_DIR) / "tests/fixtures/topology" / name;
}

std::string fixture(const std::string& name) {
  std::ifstream in(fixture_path(name));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

Topology parse(std::string_view text) {
  return parse_slurm_topology(text, "topo.conf");
}

std::string error_of(std::string_view text) {
  try {
    (void)parse(text);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(SlurmTopologyTest, ReadsLeavesSpinesAndTheirHosts) {
  const Topology topology = read_slurm_topology(fixture_path("small_fabric.topology.conf"));
  EXPECT_THAT(topology.node_names(),
              ElementsAre("gpu001", "gpu002", "gpu003", "gpu004", "gpu005", "gpu006"));
  EXPECT_EQ(topology.leaf_of("gpu001"), "leaf-a");
  EXPECT_EQ(topology.leaf_of("gpu004"), "leaf-b");
  EXPECT_EQ(topology.leaf_of("gpu006"), "leaf-c");
  EXPECT_EQ(topology.leaf_of("gpu007"), std::nullopt);
  ASSERT_EQ(topology.attachments("gpu003").size(), 1u);
  EXPECT_EQ(topology.attachments("gpu003")[0].origin,
            fixture_path("small_fabric.topology.conf").string() + ":4");
  EXPECT_EQ(topology.attachments("gpu003")[0].adapter, "");

  const Switch* spine = topology.find_switch("spine-2");
  ASSERT_NE(spine, nullptr);
  EXPECT_EQ(spine->level, 1);
  EXPECT_EQ(spine->link_speed, 400u);
  EXPECT_THAT(spine->children, ElementsAre("leaf-a", "leaf-b", "leaf-c"));
  EXPECT_TRUE(spine->parents.empty());
  const Switch* leaf = topology.find_switch("leaf-a");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->level, 0);
  EXPECT_EQ(leaf->link_speed, std::nullopt);
  EXPECT_THAT(leaf->parents, ElementsAre("spine-1", "spine-2"));
  EXPECT_THAT(leaf->nodes, ElementsAre("gpu001", "gpu002"));
  EXPECT_EQ(topology.links().size(), 6u);
  EXPECT_TRUE(topology.lateral_links().empty());
}

TEST(SlurmTopologyTest, ReadsScontrolShowTopologyTheSameWay) {
  const Topology conf = parse(fixture("small_fabric.topology.conf"));
  const Topology shown = parse(fixture("small_fabric.scontrol.txt"));
  EXPECT_EQ(shown.node_names(), conf.node_names());
  for (const std::string& node : conf.node_names())
    EXPECT_EQ(shown.leaf_of(node), conf.leaf_of(node)) << node;
  ASSERT_EQ(shown.switches().size(), conf.switches().size());
  for (const Switch& expected : conf.switches()) {
    const Switch* read = shown.find_switch(expected.name);
    ASSERT_NE(read, nullptr) << expected.name;
    EXPECT_EQ(read->parents, expected.parents) << expected.name;
    EXPECT_EQ(read->children, expected.children) << expected.name;
    EXPECT_EQ(read->nodes, expected.nodes) << expected.name;
    EXPECT_EQ(read->level, expected.level) << expected.name;
  }
  // scontrol's LinkSpeed=1 on the leaves is Slurm's default, printed.
  EXPECT_EQ(shown.find_switch("leaf-a")->link_speed, 1u);
}

TEST(SlurmTopologyTest, TakesKeysInAnyCaseQuotedValuesBlanksAroundEqualsAndComments) {
  const Topology topology = parse(
      "  # a comment line\n"
      "switchname=leaf1 NODES=\"gpu[1-2]\"   linkspeed = 100 # hosts of rack 1\r\n"
      "\n"
      "\t\n"
      "SWITCHNAME=top sWiTcHeS=leaf1\n");
  EXPECT_EQ(topology.leaf_of("gpu2"), "leaf1");
  EXPECT_EQ(topology.find_switch("leaf1")->link_speed, 100u);
  EXPECT_THAT(topology.find_switch("top")->children, ElementsAre("leaf1"));
}

TEST(SlurmTopologyTest, AcceptsALeafWithoutHostsAsSlurmDoes) {
  const Topology topology = parse("SwitchName=empty\nSwitchName=top Switches=empty\n");
  EXPECT_TRUE(topology.find_switch("empty")->nodes.empty());
  EXPECT_EQ(topology.find_switch("top")->level, 1);
}

TEST(SlurmTopologyTest, KeepsHostNamesExact) {
  const Topology topology =
      parse("SwitchName=a Nodes=node1,node100\nSwitchName=b Nodes=node10,node[1000-1001]\n");
  EXPECT_EQ(topology.leaf_of("node1"), "a");
  EXPECT_EQ(topology.leaf_of("node10"), "b");
  EXPECT_EQ(topology.leaf_of("node100"), "a");
  EXPECT_EQ(topology.leaf_of("node1000"), "b");
  EXPECT_EQ(topology.leaf_of("node"), std::nullopt);
  EXPECT_EQ(topology.leaf_of("node1 "), std::nullopt);
}

// Suffixes, substrings and an FQDN beside its short name: each is its own host, on the leaf its
// own line names (docs/topology.md: names are compared exactly).
TEST(SlurmTopologyTest, KeepsLookalikeHostsOnTheirOwnLeaves) {
  const Topology topology = parse(
      "SwitchName=a Nodes=gpu-a1,xn1,node1.cluster.local\n"
      "SwitchName=b Nodes=gpu-a[10],n1,node1\n");
  EXPECT_EQ(topology.leaf_of("gpu-a1"), "a");
  EXPECT_EQ(topology.leaf_of("gpu-a10"), "b");
  EXPECT_EQ(topology.leaf_of("xn1"), "a");
  EXPECT_EQ(topology.leaf_of("n1"), "b");
  EXPECT_EQ(topology.leaf_of("node1.cluster.local"), "a");
  EXPECT_EQ(topology.leaf_of("node1"), "b");
  EXPECT_EQ(topology.leaf_of("node1.cluster"), std::nullopt);
  EXPECT_EQ(topology.leaf_of("gpu-a"), std::nullopt);
}

TEST(SlurmTopologyTest, ReadsAFatTreeOf1024HostsUnder32LeavesAnd4Spines) {
  const topology_test::FatTree tree;
  const Topology topology = parse(topology_test::topology_conf(tree));
  ASSERT_EQ(topology.node_names().size(), 1024u);
  ASSERT_EQ(topology.switches().size(), 36u);
  for (int host = 1; host <= tree.hosts; ++host) {
    EXPECT_EQ(topology.leaf_of(topology_test::host_name(host)),
              topology_test::leaf_name(topology_test::leaf_of_host(tree, host)))
        << host;
  }
  EXPECT_EQ(topology.leaf_of("gpu0032"), "leaf01");
  EXPECT_EQ(topology.leaf_of("gpu0033"), "leaf02");
  EXPECT_EQ(topology.leaf_of("gpu1024"), "leaf32");
  for (int spine = 1; spine <= tree.spines; ++spine) {
    const Switch* found = topology.find_switch(topology_test::spine_name(spine));
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->level, 1);
    EXPECT_EQ(found->children.size(), 32u);
  }
  EXPECT_THAT(topology.find_switch("leaf17")->parents,
              ElementsAre("spine1", "spine2", "spine3", "spine4"));

  const auto across = topology.path_between("leaf01", "leaf17");
  ASSERT_TRUE(across);
  EXPECT_THAT(across->hops, ElementsAre(ElementsAre("leaf01"),
                                        ElementsAre("spine1", "spine2", "spine3", "spine4"),
                                        ElementsAre("leaf17")));
  EXPECT_THAT(across->lowest_common, ElementsAre("spine1", "spine2", "spine3", "spine4"));
  const auto within = topology.path_between("leaf05", "leaf05");
  ASSERT_TRUE(within);
  EXPECT_THAT(within->hops, ElementsAre(ElementsAre("leaf05")));
  EXPECT_THAT(within->lowest_common, ElementsAre("leaf05"));
}

TEST(SlurmTopologyTest, ChecksTheHostsScontrolListsOnASwitchAboveTheLeaves) {
  const std::string leaves = "SwitchName=l1 Nodes=n[1-2]\nSwitchName=l2 Nodes=n[3-4]\n";
  EXPECT_NO_THROW((void)parse(leaves + "SwitchName=s Level=1 Nodes=n[1-4] Switches=l[1-2]\n"));
  EXPECT_NO_THROW((void)parse(leaves + "SwitchName=s Nodes=n[4,3,2,1] Switches=l[1-2]\n"));
  EXPECT_THAT(error_of(leaves + "SwitchName=s Nodes=n[1-5] Switches=l[1-2]\n"),
              HasSubstr("topo.conf:3: switch 's' has Switches= and Nodes=, which must list the "
                        "hosts under those switches (as scontrol show topology prints them), but "
                        "'n5' is under none of them"));
  EXPECT_THAT(error_of(leaves + "SwitchName=s Nodes=n[1-3] Switches=l[1-2]\n"),
              HasSubstr("topo.conf:3: switch 's' has Switches= and Nodes=, which must list the "
                        "hosts under those switches (as scontrol show topology prints them), but "
                        "'n4', under them, is missing"));
}

struct BadFileCase {
  std::string name;
  std::string text;
  std::string message;
};

class BadSlurmTopologyTest : public ::testing::TestWithParam<BadFileCase> {};

TEST_P(BadSlurmTopologyTest, IsRefusedWithOneLineNamingFileAndLine) {
  const std::string message = error_of(GetParam().text);
  EXPECT_THAT(message, HasSubstr(GetParam().message));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadSlurmTopologyTest,
    ::testing::Values(
        BadFileCase{"UnknownKey", "SwitchName=a Nodes=n1\nSwitchName=b Nodez=n2\n",
                    "topo.conf:2: unknown key 'Nodez' (known: SwitchName, Switches, Nodes, "
                    "LinkSpeed, Level)"},
        BadFileCase{"BlockPluginKey", "BlockName=b1 Nodes=n[1-4]\n",
                    "topo.conf:1: unknown key 'BlockName'"},
        BadFileCase{"SwitchDefinedTwice", "SwitchName=a Nodes=n1\n#\nSwitchName=a Nodes=n2\n",
                    "topo.conf:3: switch 'a' is defined twice (first at topo.conf:1)"},
        BadFileCase{"NodeUnderTwoLeaves", "SwitchName=a Nodes=n[1-3]\nSwitchName=b Nodes=n[3-4]\n",
                    "topo.conf:2: node 'n3' is under switch 'b' and already under switch 'a' "
                    "(at topo.conf:1): a node has one leaf switch"},
        BadFileCase{"UndefinedChild", "SwitchName=a Nodes=n1\nSwitchName=top Switches=a,b\n",
                    "topo.conf:2: Switches= names 'b', which no SwitchName= line defines"},
        BadFileCase{"Cycle",
                    "SwitchName=leaf Nodes=n1\nSwitchName=s1 Switches=leaf,s2\n"
                    "SwitchName=s2 Switches=s1\n",
                    "switches form a cycle: s1 -> s2 -> s1 (each one above the next)"},
        BadFileCase{"SelfCycle", "SwitchName=s1 Switches=s1\n",
                    "topo.conf:1: switches form a cycle: s1 -> s1"},
        BadFileCase{"LineWithoutSwitchName", "SwitchName=a Nodes=n1\nNodes=n2\n",
                    "topo.conf:2: the line begins with Nodes=, not SwitchName= (each line "
                    "defines one switch)"},
        BadFileCase{"SwitchNameNotFirst", "Nodes=n2 SwitchName=a\n",
                    "topo.conf:1: the line begins with Nodes=, not SwitchName="},
        BadFileCase{"KeyTwice", "SwitchName=a Nodes=n1 nodes=n2\n",
                    "topo.conf:1: nodes= is given twice"},
        BadFileCase{"NotKeyValue", "SwitchName=a Nodes=n1 leaf\n",
                    "topo.conf:1: expected '=' after leaf"},
        BadFileCase{"Garbage", "SwitchName=a ~~\n", "topo.conf:1: expected Key=Value, got '~~'"},
        BadFileCase{"EmptyValue", "SwitchName=a Nodes=\n", "topo.conf:1: Nodes= has no value"},
        BadFileCase{"OpenQuote", "SwitchName=a Nodes=\"n1\n",
                    "topo.conf:1: Nodes= has no closing '\"'"},
        BadFileCase{"BadLinkSpeed", "SwitchName=a LinkSpeed=fast\n",
                    "topo.conf:1: LinkSpeed= must be a whole number below 2^32, got 'fast'"},
        BadFileCase{"LinkSpeedTooLarge", "SwitchName=a LinkSpeed=4294967296\n",
                    "topo.conf:1: LinkSpeed= must be a whole number"},
        BadFileCase{"BadLevel", "SwitchName=a Level=-1\n",
                    "topo.conf:1: Level= must be a whole number"},
        BadFileCase{"BadHostlist", "SwitchName=a Nodes=n[1-3\n",
                    "topo.conf:1: hostlist 'n[1-3': '[' without ']'"},
        BadFileCase{"ReversedRange", "SwitchName=a Nodes=n[9-1]\n",
                    "topo.conf:1: hostlist 'n[9-1]': range 9-1 is reversed"},
        BadFileCase{"BadSwitchesHostlist", "SwitchName=a Switches=l[]\n",
                    "topo.conf:1: hostlist 'l[]': empty brackets"},
        BadFileCase{"InvalidSwitchName", "SwitchName=ib/sw1 Nodes=n1\n",
                    "invalid node name 'ib/sw1' from topo.conf:1 (SwitchName=)"},
        BadFileCase{"InvalidNodeName", "SwitchName=a Nodes=n1,n;2\n",
                    "invalid node name 'n;2' from topo.conf:1"},
        BadFileCase{"NoSwitches", "# nothing\n\n",
                    "topo.conf: no SwitchName= line: not a topology.conf"},
        BadFileCase{"Empty", "", "topo.conf: no SwitchName= line"},
        BadFileCase{"ControlCharacters", "SwitchName=a\x1b[2J Nodes=n1\n",
                    "invalid node name 'a\\x1b[2J' from topo.conf:1 (SwitchName=)"}),
    [](const ::testing::TestParamInfo<BadFileCase>& param) { return param.param.name; });

TEST(SlurmTopologyTest, BoundsTheNamesOfAllHostlistsOfAFile) {
  // Two hostlists of 600,000 names each: each under the bound of one, together over it.
  const std::string text =
      "SwitchName=a Nodes=n[1-600000]\nSwitchName=b Nodes=m[1-600000]\nSwitchName=c Nodes=x\n";
  EXPECT_THAT(error_of(text), HasSubstr("topo.conf:2: the hostlists up to here expand to more "
                                        "than 1000000 names"));
  // A smaller bound, as the fuzz target asks for: exactly it is read, one more is refused, and
  // one hostlist over it is refused before its names are made.
  EXPECT_EQ(parse_slurm_topology("SwitchName=a Nodes=n[1-3]\nSwitchName=b Nodes=m1\n", "t", 4)
                .node_names()
                .size(),
            4u);
  try {
    (void)parse_slurm_topology("SwitchName=a Nodes=n[1-3]\nSwitchName=b Nodes=m[1-2]\n", "t", 4);
    ADD_FAILURE() << "5 names under a bound of 4";
  } catch (const UsageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("t:2: the hostlists up to here expand to more than 4"));
  }
  try {
    (void)parse_slurm_topology("SwitchName=a Nodes=n[1-999999999]\n", "t", 4);
    ADD_FAILURE() << "a hostlist of 999999999 names under a bound of 4";
  } catch (const UsageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("expands to more than 4 names"));
  }
}

// s0 over s1 over ... over the leaf s(n-1), each listing the leaf's host as scontrol would:
// checking them walks n + (n - 1) + ... + 2 switches, n(n+1)/2 - 1 in all.
std::string stacked_switches(int count) {
  std::string text;
  for (int i = 0; i + 1 < count; ++i)
    text += fmt::format("SwitchName=s{} Nodes=x Switches=s{}\n", i, i + 1);
  return text + fmt::format("SwitchName=s{} Nodes=x\n", count - 1);
}

TEST(SlurmTopologyTest, BoundsTheWorkOfCheckingHostsListedAboveTheLeaves) {
  // 67,100,319 switches walked, under the bound of 64 Mi; one more switch makes 67,111,904.
  EXPECT_EQ(parse(stacked_switches(11584)).switches().size(), 11584u);
  EXPECT_THAT(error_of(stacked_switches(11585)),
              HasSubstr(": too many switches under switches with both Switches= and Nodes= to "
                        "check them (more than 67108864)"));
}

TEST(SlurmTopologyTest, RefusesAFileThatCannotBeRead) {
  EXPECT_THROW((void)read_slurm_topology(fixture_path("no-such-file.conf")), UsageError);
}

}  // namespace
}  // namespace commcert
