// ibnetdiscover's output read into the model: the fixture, hosts named from HCA descriptions or
// a GUID map, switch names, the tree's orientation, rail-optimized hosts, the same fabric as
// topology.conf giving the same leaves, and every error's file:line.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "fabric_text.hpp"
#include "topology/ibnetdiscover.hpp"
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

Topology parse(std::string_view text, const IbnetdiscoverOptions& options = {}) {
  return parse_ibnetdiscover(text, "fabric.txt", options);
}

std::string error_of(std::string_view text, const IbnetdiscoverOptions& options = {}) {
  try {
    (void)parse(text, options);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

// Two leaves under one spine, written by hand in ibnetdiscover's layout; `extra` is appended.
std::string two_leaves(std::string_view leaf_b_description = "leaf-b") {
  return fmt::format(
      "Switch\t36 \"S-00000000000000a1\"\t\t# \"leaf-a\" enhanced port 0 lid 5 lmc 0\n"
      "[1]\t\"H-0000000000000101\"[1](102) \t\t# \"n1 mlx5_0\" lid 12 4xNDR\n"
      "[33]\t\"S-00000000000000f1\"[1]\t\t# \"spine\" lid 3 4xNDR\n"
      "\n"
      "Switch\t36 \"S-00000000000000a2\"\t\t# \"{}\" enhanced port 0 lid 6 lmc 0\n"
      "[1]\t\"H-0000000000000201\"[1](202) \t\t# \"n2 mlx5_0\" lid 13 4xNDR\n"
      "[33]\t\"S-00000000000000f1\"[2]\t\t# \"spine\" lid 3 4xNDR\n",
      leaf_b_description);
}

TEST(IbnetdiscoverTest, ReadsTheFixture) {
  const Topology topology = read_ibnetdiscover(fixture_path("small_fabric.ibnetdiscover.txt"));
  EXPECT_THAT(topology.node_names(),
              ElementsAre("gpu001", "gpu002", "gpu003", "gpu004", "gpu005", "gpu006"));
  EXPECT_EQ(topology.leaf_of("gpu001"), "leaf-a");
  EXPECT_EQ(topology.leaf_of("gpu005"), "leaf-c");

  // gpu001's two HCAs, both on leaf-a, each a port of its own.
  const std::vector<NodeAttachment>& ports = topology.attachments("gpu001");
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].leaf, "leaf-a");
  EXPECT_EQ(ports[0].adapter, "mlx5_0 port 1");
  EXPECT_EQ(ports[0].leaf_port, 1);
  EXPECT_EQ(ports[1].adapter, "mlx5_1 port 1");
  EXPECT_EQ(ports[1].leaf_port, 2);
  EXPECT_THAT(ports[1].origin, HasSubstr("small_fabric.ibnetdiscover.txt:"));
  EXPECT_THAT(topology.leaves_of("gpu001"), ElementsAre("leaf-a"));

  const Switch* leaf = topology.find_switch("leaf-a");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->level, 0);
  EXPECT_THAT(leaf->parents, ElementsAre("spine-1", "spine-2"));
  EXPECT_THAT(leaf->nodes, ElementsAre("gpu001", "gpu002"));
  EXPECT_EQ(topology.find_switch("spine-1")->level, 1);
  EXPECT_THAT(topology.find_switch("spine-1")->children, ElementsAre("leaf-a", "leaf-b", "leaf-c"));

  // Seven cables between switches, each once though both ends print it; leaf-a's two parallel
  // cables to spine-1 are two links.
  ASSERT_EQ(topology.links().size(), 7u);
  int leaf_a_to_spine_1 = 0;
  for (const SwitchLink& link : topology.links()) {
    if (link.child == "leaf-a" && link.parent == "spine-1") {
      ++leaf_a_to_spine_1;
      EXPECT_EQ(link.child_port, 32 + link.parent_port.value());
    }
  }
  EXPECT_EQ(leaf_a_to_spine_1, 2);
  EXPECT_TRUE(topology.lateral_links().empty());
}

TEST(IbnetdiscoverTest, GivesTheSameLeavesAsTopologyConf) {
  const Topology from_ib = parse(fixture("small_fabric.ibnetdiscover.txt"));
  for (const std::string name : {"small_fabric.topology.conf", "small_fabric.scontrol.txt"}) {
    const Topology from_slurm = parse_slurm_topology(fixture(name), name);
    ASSERT_EQ(from_ib.node_names(), from_slurm.node_names()) << name;
    for (const std::string& node : from_slurm.node_names())
      EXPECT_EQ(from_ib.leaf_of(node), from_slurm.leaf_of(node)) << name << " " << node;
    ASSERT_EQ(from_ib.switches().size(), from_slurm.switches().size()) << name;
    for (const Switch& expected : from_slurm.switches()) {
      const Switch* found = from_ib.find_switch(expected.name);
      ASSERT_NE(found, nullptr) << expected.name;
      EXPECT_EQ(found->parents, expected.parents) << expected.name;
      EXPECT_EQ(found->level, expected.level) << expected.name;
    }
  }
}

TEST(IbnetdiscoverTest, GivesTheSameLeavesAsTopologyConfForA1024HostFatTree) {
  const topology_test::FatTree tree;
  const Topology from_ib = parse(topology_test::ibnetdiscover_output(tree));
  const Topology from_conf = parse_slurm_topology(topology_test::topology_conf(tree), "gen.conf");
  ASSERT_EQ(from_ib.node_names().size(), 1024u);
  ASSERT_EQ(from_ib.node_names(), from_conf.node_names());
  for (const std::string& node : from_conf.node_names())
    EXPECT_EQ(from_ib.leaf_of(node), from_conf.leaf_of(node)) << node;
  EXPECT_EQ(from_ib.links().size(), 32u * 4u);
  EXPECT_EQ(from_ib.path_between("leaf03", "leaf30")->hops,
            from_conf.path_between("leaf03", "leaf30")->hops);
}

TEST(IbnetdiscoverTest, NamesHostsByGuidWhereTheCallerSaysSo) {
  IbnetdiscoverOptions options;
  options.host_by_guid[0x0000000000000201] = "login-7";
  const Topology topology = parse(two_leaves(), options);
  EXPECT_THAT(topology.node_names(), ElementsAre("login-7", "n1"));
  EXPECT_EQ(topology.leaf_of("login-7"), "leaf-b");
  EXPECT_EQ(topology.leaf_of("n2"), std::nullopt);

  options.host_by_guid[0x0000000000000201] = "bad name";
  EXPECT_THAT(error_of(two_leaves(), options),
              HasSubstr("invalid node name 'bad name' from the host name given for GUID "
                        "0000000000000201"));
}

// A CA's host is the first word of its description, exactly: n1 and xn1, node1 and node10,
// and an FQDN (rdma-ndd's "%h" is the hostname as the node has it) are distinct hosts.
TEST(IbnetdiscoverTest, KeepsLookalikeHostNamesExact) {
  for (const auto& [left, right] : std::vector<std::pair<std::string, std::string>>{
           {"xn1", "n1"}, {"node10", "node1"}, {"node1", "node1.cluster.local"}}) {
    std::string text = two_leaves();
    text.replace(text.find("\"n1 mlx5_0\""), 11, "\"" + left + " mlx5_0\"");
    text.replace(text.find("\"n2 mlx5_0\""), 11, "\"" + right + " mlx5_0\"");
    const Topology topology = parse(text);
    EXPECT_EQ(topology.leaf_of(left), "leaf-a") << left;
    EXPECT_EQ(topology.leaf_of(right), "leaf-b") << right;
    EXPECT_EQ(topology.node_names().size(), 2u);
  }
}

TEST(IbnetdiscoverTest, NamesSwitchesByGuidWhereTheirDescriptionIsEmptyOrShared) {
  const Topology shared = parse(two_leaves("leaf-a"));
  EXPECT_EQ(shared.leaf_of("n1"), "S-00000000000000a1");
  EXPECT_EQ(shared.leaf_of("n2"), "S-00000000000000a2");
  EXPECT_NE(shared.find_switch("spine"), nullptr);
  const Topology empty = parse(two_leaves(""));
  EXPECT_EQ(empty.leaf_of("n1"), "leaf-a");
  EXPECT_EQ(empty.leaf_of("n2"), "S-00000000000000a2");
}

TEST(IbnetdiscoverTest, KeepsQuotesInsideADescription) {
  const Topology topology = parse(two_leaves("MF0;\"rack 2\":MQM9700/U1"));
  EXPECT_EQ(topology.leaf_of("n2"), "MF0;\"rack 2\":MQM9700/U1");
}

TEST(IbnetdiscoverTest, GivesAHostWithHcasOnSeveralLeavesEachOfThem) {
  // Rail-optimized: n1's mlx5_1 is on leaf-b.
  const std::string text =
      two_leaves() + "[2]\t\"H-0000000000000111\"[1](112) \t\t# \"n1 mlx5_1\" lid 14 4xNDR\n";
  const Topology topology = parse(text);
  EXPECT_THAT(topology.leaves_of("n1"), ElementsAre("leaf-a", "leaf-b"));
  EXPECT_EQ(topology.leaf_of("n1"), std::nullopt);
  EXPECT_EQ(topology.attachments("n1")[1].adapter, "mlx5_1 port 1");
  EXPECT_THAT(topology.find_switch("leaf-b")->nodes, ElementsAre("n2", "n1"));
}

TEST(IbnetdiscoverTest, KeepsACableBetweenTwoLeavesOutOfTheTree) {
  const std::string text =
      two_leaves() + "[34]\t\"S-00000000000000a1\"[34]\t\t# \"leaf-a\" lid 5 4xNDR\n";
  const Topology topology = parse(text);
  ASSERT_EQ(topology.lateral_links().size(), 1u);
  EXPECT_EQ(topology.lateral_links()[0].child_port, 34);
  EXPECT_TRUE(topology.find_switch("leaf-a")->children.empty());
  EXPECT_EQ(topology.links().size(), 2u);
}

TEST(IbnetdiscoverTest, OrientsAThreeLevelTreeFromTheHostsUp) {
  // Two leaves - spine - core; and two switches cabled only to each other: no hosts anywhere
  // near them, so nothing says which is above, and their cable is lateral.
  const std::string text =
      two_leaves() +
      "Switch\t36 \"S-00000000000000f1\"\t\t# \"spine\" enhanced port 0 lid 3 lmc 0\n"
      "[36]\t\"S-00000000000000c1\"[1]\t\t# \"core\" lid 2 4xNDR\n"
      "Switch\t36 \"S-00000000000000e1\"\t\t# \"idle-1\" enhanced port 0 lid 9 lmc 0\n"
      "[1]\t\"S-00000000000000e2\"[1]\t\t# \"idle-2\" lid 10 4xNDR\n";
  const Topology topology = parse(text);
  EXPECT_EQ(topology.find_switch("core")->level, 2);
  EXPECT_THAT(topology.find_switch("core")->children, ElementsAre("spine"));
  EXPECT_THAT(topology.find_switch("spine")->parents, ElementsAre("core"));
  EXPECT_EQ(topology.lateral_links().size(), 1u);
}

TEST(IbnetdiscoverTest, ReadsGroupedAndFullOutput) {
  // -g adds chassis lines and "[ext N]" after port numbers; -f adds speed fields.
  const std::string text =
      "#\n# Topology file: generated on Mon Nov  2 09:14:07 2026\n#\n"
      "\nChassis 1 (guid 0x2c90300a1b2c3)\n\n# Spine Nodes\n\n# Line Nodes\n"
      "sysimgguid=0x2c90300a1b2c3\t\t# Chassis 1 (leaf) ISR9288/ISR9096 Voltaire sLB-24D\n"
      "switchguid=0xa1(a1)\n"
      "Switch\t36 \"S-00000000000000a1\"\t\t# \"leaf-a\" base port 0 lid 5 lmc 0\n"
      "[1][ext 3]\t\"H-0000000000000101\"[1](102) \t\t# \"n1 mlx5_0\" lid 12 4xNDR s=4 w=2 v=4\n"
      "\nNon-Chassis Nodes\n"
      "Ca\t2 \"H-0000000000000101\"\t\t# \"n1 mlx5_0\"\n"
      "[1](102) \t\"S-00000000000000a1\"[1][ext 3]\t\t# lid 12 lmc 0 \"leaf-a\" lid 5 4xNDR\n"
      "Rt\t2 \"R-0000000000000901\"\t\t# \"router\"\n"
      "[1](902) \t\"S-00000000000000a1\"[2]\t\t# lid 20 lmc 0 \"leaf-a\" lid 5 4xNDR\n";
  const Topology topology = parse(text);
  EXPECT_THAT(topology.node_names(), ElementsAre("n1"));
  ASSERT_EQ(topology.attachments("n1").size(), 1u);
  EXPECT_EQ(topology.attachments("n1")[0].leaf_port, 1);
}

TEST(IbnetdiscoverTest, NamesHostsFromTheSwitchSideWhenTheCaBlockIsMissing) {
  const Topology topology = parse(two_leaves());
  EXPECT_EQ(topology.leaf_of("n1"), "leaf-a");
  EXPECT_EQ(topology.leaf_of("n2"), "leaf-b");
}

struct BadOutputCase {
  std::string name;
  std::string text;
  std::string message;
};

class BadIbnetdiscoverTest : public ::testing::TestWithParam<BadOutputCase> {};

TEST_P(BadIbnetdiscoverTest, IsRefusedWithOneLineNamingFileAndLine) {
  const std::string message = error_of(GetParam().text);
  EXPECT_THAT(message, HasSubstr(GetParam().message));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadIbnetdiscoverTest,
    ::testing::Values(
        BadOutputCase{"Garbage", two_leaves() + "hello world\n",
                      "fabric.txt:8: not a line of ibnetdiscover's topology output: 'hello "
                      "world'"},
        BadOutputCase{"PortsReport",
                      "CA    12  1 0x0002c90300d40011 4x NDR - SW     5  1 0x0002c90300aa0001 "
                      "( 'gpu001 mlx5_0' - 'leaf-a' )\n",
                      "fabric.txt:1: not a line of ibnetdiscover's topology output"},
        BadOutputCase{"PortBeforeHeader", "\n[1]\t\"S-00000000000000a1\"[1]\t\t# \"x\" lid 1\n",
                      "fabric.txt:2: a port line before any Switch, Ca or Rt line"},
        BadOutputCase{"BadGuid",
                      "Switch\t36 \"S-00000000000000zz\"\t\t# \"leaf\" base port 0 lid 5 lmc 0\n",
                      "fabric.txt:1: expected '\"' closing the node id"},
        BadOutputCase{"GuidTooLong",
                      "Switch\t36 \"S-00000000000000a10\"\t\t# \"leaf\" base port 0 lid 5\n",
                      "fabric.txt:1: bad GUID"},
        BadOutputCase{"WrongLetter",
                      "Switch\t36 \"H-00000000000000a1\"\t\t# \"leaf\" base port 0 lid 5\n",
                      "fabric.txt:1: a Switch line names a CA"},
        BadOutputCase{"UnknownLetter", "Ca\t1 \"X-01\"\t\t# \"n1 mlx5_0\"\n",
                      "fabric.txt:1: a node id begins with S-, H- or R-"},
        BadOutputCase{"NoDescription", "Ca\t1 \"H-01\"\n",
                      "fabric.txt:1: expected '#' before the description"},
        BadOutputCase{"UnquotedDescription", "Ca\t1 \"H-01\"\t# n1\n",
                      "fabric.txt:1: no quoted description after '#'"},
        BadOutputCase{"BadPortNumber", "Ca\t1 \"H-01\"\t# \"n1 a\"\n[x](2)\t\"S-a1\"[1]\t# \"l\"\n",
                      "fabric.txt:2: bad port number"},
        BadOutputCase{"PortNumberTooLarge",
                      "Ca\t1 \"H-01\"\t# \"n1 a\"\n[99999999999](2)\t\"S-a1\"[1]\t# \"l\"\n",
                      "fabric.txt:2: bad port number"},
        BadOutputCase{"UnclosedExt",
                      "Ca\t1 \"H-01\"\t# \"n1 a\"\n[1][ext 3\t\"S-a1\"[1]\t# \"l\"\n",
                      "fabric.txt:2: expected ']' after an external port number"},
        BadOutputCase{"ListedTwice",
                      two_leaves() + "Switch\t36 \"S-00000000000000a1\"\t\t# \"leaf-a\" base\n",
                      "fabric.txt:8: S-00000000000000a1 is listed twice (first at fabric.txt:1)"},
        BadOutputCase{"TwoKinds", two_leaves() + "Ca\t1 \"H-00000000000000a1\"\t\t# \"x y\"\n",
                      "fabric.txt:8: GUID 00000000000000a1 is a CA here but a switch at "
                      "fabric.txt:1"},
        BadOutputCase{"PortLinkedTwice",
                      two_leaves() + "[2]\t\"H-0000000000000101\"[1](102) \t\t# \"n1 x\" lid 1\n",
                      "fabric.txt:8: port 1 of H-0000000000000101 is linked to port 2 of "
                      "S-00000000000000a2 here, but to port 1 of S-00000000000000a1 at "
                      "fabric.txt:2"},
        BadOutputCase{"HostNameInvalid",
                      "Ca\t1 \"H-01\"\t# \"n/1 mlx5_0\"\n[1](2)\t\"S-a1\"[1]\t# \"leaf\"\n",
                      "fabric.txt:1: CA H-0000000000000001 (\"n/1 mlx5_0\"): invalid node name "
                      "'n/1' from the first word of its description: only letters, digits"},
        BadOutputCase{"HostNameEmpty", "Ca\t1 \"H-01\"\t# \"\"\n[1](2)\t\"S-a1\"[1]\t# \"l\"\n",
                      "fabric.txt:1: CA H-0000000000000001 (\"\"): invalid node name '' from the "
                      "first word of its description: empty; name its host by GUID instead"},
        BadOutputCase{"Empty", "#\n# Topology file\n",
                      "fabric.txt: no Switch or Ca line: not ibnetdiscover's output"}),
    [](const ::testing::TestParamInfo<BadOutputCase>& param) { return param.param.name; });

TEST(IbnetdiscoverTest, RefusesAFileThatCannotBeRead) {
  EXPECT_THROW((void)read_ibnetdiscover(fixture_path("no-such-file.txt")), UsageError);
}

}  // namespace
}  // namespace commcert
