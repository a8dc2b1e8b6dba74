// A suspect switch path named by the topology (issue 31): the switch whose uplinks cut one group
// off, the level joining groups that are each one switch's nodes, a note where the topology does
// not match; the reason, its action, verdict.json's link and every report format.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/verdict_reporter.hpp"
#include "support.hpp"
#include "topology/slurm_topology.hpp"
#include "validate/switch_path.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Kind = SwitchPathNaming::Kind;

// Three leaves under two spines: leaf-a h1..h3, leaf-b h4..h6, leaf-c h7, h8.
Topology two_spines() {
  return parse_slurm_topology(
      "SwitchName=leaf-a Nodes=h[1-3]\n"
      "SwitchName=leaf-b Nodes=h[4-6]\n"
      "SwitchName=leaf-c Nodes=h[7-8]\n"
      "SwitchName=spine1 Switches=leaf-a,leaf-b,leaf-c\n"
      "SwitchName=spine2 Switches=leaf-a,leaf-b,leaf-c\n",
      "fabric.conf");
}

TEST(SwitchPath, AGroupThatIsOneLeafsNodesIsCutOffAtThatLeafsUplinks) {
  const SwitchPathNaming n =
      name_switch_path(two_spines(), {{"h1", "h2", "h3"}, {"h4", "h5", "h6", "h7", "h8"}});
  EXPECT_EQ(n.kind, Kind::kUplink);
  ASSERT_EQ(n.below.size(), 1u);
  EXPECT_EQ(n.below[0].group, 0u);
  EXPECT_THAT(n.below[0].switches, ElementsAre("leaf-a"));
  EXPECT_THAT(n.below[0].parents, ElementsAre("spine1", "spine2"));
  EXPECT_EQ(n.path, "leaf-a <-> spine1, spine2 (uplink of leaf-a)");
  EXPECT_EQ(n.pattern,
            "3 nodes under leaf-a (h1, h2, h3) slow with each of the 5 nodes outside it, fine "
            "with each other");
  EXPECT_EQ(n.target, "the uplinks of leaf-a and the ports of spine1, spine2 facing it");
  // The same whichever side comes first.
  const SwitchPathNaming other =
      name_switch_path(two_spines(), {{"h8", "h4", "h5", "h6", "h7"}, {"h3", "h1", "h2"}});
  EXPECT_EQ(other.path, n.path);
  EXPECT_EQ(other.pattern, n.pattern);
}

TEST(SwitchPath, OnlyTheJudgedNodesCount) {
  // h3 took no part: leaf-a's judged nodes are h1, h2, and the others span leaf-b and leaf-c.
  const SwitchPathNaming n =
      name_switch_path(two_spines(), {{"h1", "h2"}, {"h4", "h5", "h7", "h8"}});
  EXPECT_EQ(n.kind, Kind::kUplink);
  EXPECT_EQ(n.path, "leaf-a <-> spine1, spine2 (uplink of leaf-a)");
  EXPECT_THAT(n.pattern, HasSubstr("2 nodes under leaf-a (h1, h2) slow with each of the 4 nodes"));
}

TEST(SwitchPath, GroupsThatAreEachOneLeafsNodesAreCutApartWhereTheyMeet) {
  // Two leaves' nodes alone (leaf-c took no part): the spines joining them.
  const SwitchPathNaming two =
      name_switch_path(two_spines(), {{"h1", "h2", "h3"}, {"h4", "h5", "h6"}});
  EXPECT_EQ(two.kind, Kind::kJoiningLevel);
  EXPECT_THAT(two.above, ElementsAre("spine1", "spine2"));
  EXPECT_EQ(two.path, "leaf-a <-> spine1, spine2 <-> leaf-b (the level joining leaf-a and leaf-b)");
  EXPECT_EQ(two.pattern,
            "the nodes under each of leaf-a (3), leaf-b (3) slow with every node under the "
            "others, fine with each other");
  EXPECT_EQ(two.target,
            "spine1, spine2 and their ports facing leaf-a, leaf-b, and the uplinks of those "
            "switches");
  const SwitchPathNaming three =
      name_switch_path(two_spines(), {{"h1", "h2", "h3"}, {"h4", "h5", "h6"}, {"h7", "h8"}});
  EXPECT_EQ(three.kind, Kind::kJoiningLevel);
  EXPECT_EQ(three.path,
            "leaf-a, leaf-b, leaf-c <-> spine1, spine2 (the level joining leaf-a, leaf-b, leaf-c)");
}

TEST(SwitchPath, AThreeLevelTreeNamesThePodOrTheCore) {
  const Topology pods = parse_slurm_topology(
      "SwitchName=leaf-a Nodes=h[1-2]\nSwitchName=leaf-b Nodes=h[3-4]\n"
      "SwitchName=leaf-c Nodes=h[5-6]\nSwitchName=leaf-d Nodes=h[7-8]\n"
      "SwitchName=agg-1 Switches=leaf-a,leaf-b\nSwitchName=agg-2 Switches=leaf-c,leaf-d\n"
      "SwitchName=core Switches=agg-1,agg-2\n",
      "pods.conf");
  const SwitchPathNaming pod =
      name_switch_path(pods, {{"h1", "h2", "h3", "h4"}, {"h5", "h6", "h7", "h8"}});
  EXPECT_EQ(pod.kind, Kind::kJoiningLevel);
  EXPECT_EQ(pod.path, "agg-1 <-> core <-> agg-2 (the level joining agg-1 and agg-2)");
  const SwitchPathNaming leaf =
      name_switch_path(pods, {{"h1", "h2"}, {"h3", "h4", "h5", "h6", "h7", "h8"}});
  EXPECT_EQ(leaf.kind, Kind::kUplink);
  EXPECT_EQ(leaf.path, "leaf-a <-> agg-1 (uplink of leaf-a)");
}

TEST(SwitchPath, GroupsNoSwitchHoldsAreNotNamedAndSayWhy) {
  // {h1, h2, h4} spans leaf-a and leaf-b, whose other nodes are on the other side.
  const SwitchPathNaming spans =
      name_switch_path(two_spines(), {{"h1", "h2", "h4"}, {"h3", "h5", "h6", "h7", "h8"}});
  EXPECT_EQ(spans.kind, Kind::kNoMatch);
  EXPECT_TRUE(spans.path.empty());
  EXPECT_EQ(spans.mismatch,
            "no switch holds exactly the judged nodes {h1, h2, h4}: they hang from leaf-a, "
            "leaf-b, which hold 3 judged node(s) of the other group(s) too");
  const SwitchPathNaming unknown = name_switch_path(two_spines(), {{"h1", "h2"}, {"x9", "h4"}});
  EXPECT_EQ(unknown.kind, Kind::kNoMatch);
  EXPECT_EQ(unknown.mismatch, "the topology holds no host named x9");
}

// ---- Judged from records, with a topology --------------------------------------------------

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
const std::vector<std::string> kNodes = {"n0", "n1", "n2", "n3", "n4", "n5"};

Json pair_record(const std::string& a, const std::string& b, double busbw_gb, bool listed) {
  Json c = fixtures::collective(kGiB, busbw_gb, "pairs", a);
  c["nranks"] = 2;
  c["nodes"] = 2;
  c["group_nodes"] = {a, b};
  c["round"] = 0;
  c["group"] = 0;
  if (listed) c["pair_list"] = true;
  return c;
}

// A cluster allreduce below its floor, every pair measured: slow across {n0, n1, n2} and
// {n3, n4, n5}, fine within; two pairs across slow again when measured again.
std::vector<Json> slow_path_records() {
  std::vector<Json> records = {fixtures::run_record(kNodes), fixtures::collective(kGiB, 60.0)};
  for (std::size_t i = 0; i < kNodes.size(); ++i) {
    for (std::size_t j = i + 1; j < kNodes.size(); ++j) {
      const bool across = (i < 3) != (j < 3);
      records.push_back(pair_record(kNodes[i], kNodes[j], across ? 12.0 : 48.0, false));
    }
  }
  records.push_back(pair_record("n0", "n3", 11.0, true));
  records.push_back(pair_record("n1", "n4", 13.0, true));
  return records;
}

// n0..n2 under leaf-a; n3, n4 under leaf-b and n5 under leaf-c: {n3, n4, n5} is no one switch's.
Topology fabric_of_the_run() {
  return parse_slurm_topology(
      "SwitchName=leaf-a Nodes=n[0-2]\nSwitchName=leaf-b Nodes=n[3-4],n9\n"
      "SwitchName=leaf-c Nodes=n5\nSwitchName=spine1 Switches=leaf-a,leaf-b,leaf-c\n"
      "SwitchName=spine2 Switches=leaf-a,leaf-b,leaf-c\n",
      "fabric.conf");
}

FleetVerdict judged(const Topology* topology) {
  return judge(fixtures::evidence_of(slow_path_records()), fixtures::cluster_floor_baseline(),
               nullptr, {}, topology);
}

TEST(SwitchPath, TheReasonAndItsActionNameTheSwitchAndTheNodesStayCertified) {
  const Topology topology = fabric_of_the_run();
  const FleetVerdict verdict = judged(&topology);
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified), kNodes);
  for (const auto& node : kNodes) {
    SCOPED_TRACE(node);
    const Reason& r =
        fixtures::reason(fixtures::node(verdict, node), "localization.suspect_switch");
    EXPECT_THAT(r.message,
                HasSubstr("switch path leaf-a <-> spine1, spine2 (uplink of leaf-a): 3 nodes under "
                          "leaf-a (n0, n1, n2) slow with each of the 3 nodes outside it, fine with "
                          "each other (median 12 GB/s, pairs need "));
    EXPECT_THAT(r.message, HasSubstr("slow again when measured again (allreduce 11 GB/s, "
                                     "allreduce 13 GB/s); no node is blamed"));
    EXPECT_EQ(r.action,
              "check the uplinks of leaf-a and the ports of spine1, spine2 facing it (port "
              "counters, optics, `ibdiagnet`); draining the nodes would not help");
    ASSERT_TRUE(r.link.has_value());
    EXPECT_EQ(r.link->type, "switch_path");
    EXPECT_EQ(r.link->device, "leaf-a <-> spine1, spine2 (uplink of leaf-a)");
    EXPECT_THAT(r.link->hosts, ElementsAre("leaf-a", "spine1", "spine2"));
  }
  const Json json = to_json(verdict);
  const Json& link = json["nodes"][0]["reasons"][0]["link"];
  EXPECT_EQ(link["type"], "switch_path");
  EXPECT_EQ(link["path"], "leaf-a <-> spine1, spine2 (uplink of leaf-a)");
  EXPECT_EQ(link["switches"], Json::array({"leaf-a", "spine1", "spine2"}));
  for (const auto& note : verdict.notes)
    EXPECT_NE(note.code, "localization.topology_mismatch");
}

TEST(SwitchPath, WithoutATopologyTheGroupsAreNamedByTheirNodesAsBefore) {
  const FleetVerdict verdict = judged(nullptr);
  const Reason& r = fixtures::reason(fixtures::node(verdict, "n0"), "localization.suspect_switch");
  EXPECT_THAT(r.message, HasSubstr("switch path between {n0, n1, n2} and {n3, n4, n5}: every "
                                   "pair across is slow, every pair within a group is fine ("));
  EXPECT_EQ(r.action,
            "check the uplinks and spine ports between these groups' leaf switches (port "
            "counters, optics, `ibdiagnet`); draining the nodes would not help");
  ASSERT_TRUE(r.link.has_value());
  EXPECT_EQ(r.link->device, "between {n0, n1, n2} and {n3, n4, n5}");
  EXPECT_TRUE(r.link->hosts.empty());
}

TEST(SwitchPath, ATopologyThatDoesNotMatchKeepsTheGroupsAndSaysSoInANote) {
  const Topology crossed = parse_slurm_topology(
      "SwitchName=leaf-a Nodes=n0,n1,n3\nSwitchName=leaf-b Nodes=n2,n4,n5\n"
      "SwitchName=spine1 Switches=leaf-a,leaf-b\n",
      "crossed.conf");
  const FleetVerdict verdict = judged(&crossed);
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified), kNodes);
  const Reason& r = fixtures::reason(fixtures::node(verdict, "n3"), "localization.suspect_switch");
  EXPECT_THAT(r.message, HasSubstr("switch path between {n0, n1, n2} and {n3, n4, n5}: "));
  std::vector<std::string> notes;
  for (const auto& note : verdict.notes) {
    if (note.code == "localization.topology_mismatch") notes.push_back(note.message);
  }
  EXPECT_THAT(
      notes, ElementsAre("the suspect switch path between {n0, n1, n2} and {n3, n4, n5} (run "
                         "run1) does not match the topology: no switch holds exactly the judged "
                         "nodes {n0, n1, n2}: they hang from leaf-a, leaf-b, which hold 3 judged "
                         "node(s) of the other group(s) too; its groups are named by their nodes"));
}

TEST(SwitchPath, EveryReportFormatShowsThePathOnALineOfItsOwn) {
  const Topology topology = fabric_of_the_run();
  const FleetVerdict verdict = judged(&topology);
  const std::string path = "leaf-a <-> spine1, spine2 (uplink of leaf-a)";
  EXPECT_THAT(suspect_switch_paths(verdict), ElementsAre(path));
  const auto render = [&](std::string_view format) {
    return make_verdict_reporter(format)->render(Report(verdict));
  };
  const std::string text = render("text");
  EXPECT_THAT(text, HasSubstr("\n  suspect switch path " + path + ": 3 nodes under leaf-a"));
  EXPECT_EQ(text.find("suspect switch path"), text.rfind("suspect switch path"));
  EXPECT_THAT(render("md"), HasSubstr("\n- suspect switch path: leaf-a &lt;-&gt; spine1, spine2 "
                                      "(uplink of leaf-a)\n"));
  EXPECT_THAT(render("html"),
              HasSubstr("<p class=\"suspect-switch\">suspect switch path leaf-a &lt;-&gt; spine1, "
                        "spine2 (uplink of leaf-a)</p>\n"));
  const std::string junit = render("junit");
  EXPECT_THAT(junit, HasSubstr("\n      <property name=\"suspect_switch_path\" value=\"leaf-a "
                               "&lt;-&gt; spine1, spine2 (uplink of leaf-a)\"/>\n"));
  // One property per node of the split.
  std::size_t properties = 0;
  for (std::size_t at = junit.find("suspect_switch_path"); at != std::string::npos;
       at = junit.find("suspect_switch_path", at + 1))
    ++properties;
  EXPECT_EQ(properties, kNodes.size());
  EXPECT_THAT(render("prom"), HasSubstr("\ncommcert_suspect_switch_path_info{path=\"" + path +
                                        "\",switches=\"leaf-a,spine1,spine2\"} 1\n"));
  // A verdict without one shows none.
  const FleetVerdict clean = judge(fixtures::evidence_of({fixtures::run_record(kNodes)}),
                                   fixtures::cluster_floor_baseline(), nullptr, {}, &topology);
  EXPECT_TRUE(suspect_switch_paths(clean).empty());
  for (const char* format : {"md", "html", "junit", "prom"}) {
    EXPECT_THAT(make_verdict_reporter(format)->render(Report(clean)),
                Not(HasSubstr("suspect_switch")))
        << format;
  }
}

}  // namespace
}  // namespace commcert
