// Where a verdict's topology comes from: a file whose format its content shows (topology.conf,
// `scontrol show topology`, ibnetdiscover), its errors naming file:line, and, in a Slurm job
// without a file, `scontrol show topology` with every way it can give none.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "fabric_text.hpp"
#include "topology/topology_source.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::filesystem::path fixture_path(const std::string& name) {
  return std::filesystem::path(COMMCERT_SOURCE_DIR) / "tests/fixtures/topology" / name;
}

std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(TopologySourceTest, TheFormatIsToldFromTheContent) {
  EXPECT_EQ(detect_topology_format("SwitchName=leaf1 Nodes=n[1-2]\n"), TopologyFormat::kSlurm);
  EXPECT_EQ(detect_topology_format("# comment\n\n  switchname = leaf1 Nodes=n1\n"),
            TopologyFormat::kSlurm);
  EXPECT_EQ(detect_topology_format("#\n# Topology file: generated\n#\n\nvendid=0x2c9\n"),
            TopologyFormat::kIbnetdiscover);
  EXPECT_EQ(detect_topology_format("Switch\t64 \"S-01\"\t# \"leaf\"\n"),
            TopologyFormat::kIbnetdiscover);
  // SwitchNameX= is not Slurm's key, nor is a key without `=`.
  EXPECT_EQ(detect_topology_format("SwitchNameX=a\n"), TopologyFormat::kIbnetdiscover);
  EXPECT_EQ(detect_topology_format("SwitchName leaf1\n"), TopologyFormat::kIbnetdiscover);
  // Nothing but comments: Slurm's parser says there is no switch.
  EXPECT_EQ(detect_topology_format("# nothing\n\n"), TopologyFormat::kSlurm);
  EXPECT_EQ(detect_topology_format(""), TopologyFormat::kSlurm);
}

TEST(TopologySourceTest, EachFixtureGivesTheSameLeaves) {
  for (const char* name : {"small_fabric.topology.conf", "small_fabric.scontrol.txt",
                           "small_fabric.ibnetdiscover.txt"}) {
    SCOPED_TRACE(name);
    const Topology topology = read_topology_file(fixture_path(name));
    EXPECT_EQ(topology.leaf_of("gpu001"), "leaf-a");
    EXPECT_EQ(topology.leaf_of("gpu004"), "leaf-b");
    EXPECT_EQ(topology.leaf_of("gpu006"), "leaf-c");
  }
  const topology_test::FatTree tree;
  EXPECT_EQ(parse_topology(topology_test::ibnetdiscover_output(tree), "fabric.txt")
                .leaf_of(topology_test::host_name(1024)),
            "leaf32");
  EXPECT_EQ(parse_topology(topology_test::topology_conf(tree), "topology.conf")
                .leaf_of(topology_test::host_name(1024)),
            "leaf32");
}

TEST(TopologySourceTest, AMalformedFileIsOneUsageErrorNamingFileAndLine) {
  const auto dir = std::filesystem::temp_directory_path() / "commcert-topology-source";
  std::filesystem::create_directories(dir);
  const auto slurm = dir / "bad.conf";
  std::ofstream(slurm) << "SwitchName=leaf1 Nodes=n[1-2]\nSwitchName=leaf2 Nodes=n[3-]\n";
  EXPECT_THAT(usage_error_of([&] { (void)read_topology_file(slurm); }),
              StartsWith(slurm.string() + ":2: "));
  const auto ib = dir / "bad.ibnet";
  std::ofstream(ib)
      << "#\nvendid=0x2c9\nSwitch\t64 \"S-0002c90300ffee01\"\t\t# \"spine-1\" enhanced "
         "port 0 lid 3 lmc 0\nnonsense here\n";
  EXPECT_THAT(usage_error_of([&] { (void)read_topology_file(ib); }),
              StartsWith(ib.string() + ":4: "));
  EXPECT_THAT(usage_error_of([&] { (void)read_topology_file(dir / "absent.conf"); }),
              HasSubstr("absent.conf"));
  // Through find_topology too: a file the user named is never skipped for being malformed.
  EXPECT_THAT(usage_error_of([&] { (void)find_topology(slurm.string(), "42"); }),
              StartsWith(slurm.string() + ":2: "));
  std::filesystem::remove_all(dir);
}

// A stand-in for scontrol: answers with `result` and remembers what it was asked.
struct FakeScontrol {
  ProcessResult result;
  std::vector<std::vector<std::string>> asked;
  TopologyCommandRunner runner() {
    return [this](const std::vector<std::string>& argv, double) {
      asked.push_back(argv);
      return result;
    };
  }
};

TEST(TopologySourceTest, AFileIsReadAndScontrolNotAsked) {
  FakeScontrol scontrol;
  const FoundTopology found =
      find_topology(fixture_path("small_fabric.topology.conf").string(), "42", scontrol.runner());
  ASSERT_TRUE(found.topology);
  EXPECT_EQ(found.source, fixture_path("small_fabric.topology.conf").string());
  EXPECT_TRUE(found.unavailable.empty());
  EXPECT_TRUE(scontrol.asked.empty());
}

TEST(TopologySourceTest, OutsideSlurmThereIsNoneAndNothingToSay) {
  FakeScontrol scontrol;
  for (const char* job : {static_cast<const char*>(nullptr), ""}) {
    const FoundTopology found = find_topology(std::nullopt, job, scontrol.runner());
    EXPECT_FALSE(found.topology);
    EXPECT_TRUE(found.unavailable.empty());
  }
  EXPECT_TRUE(scontrol.asked.empty());
}

TEST(TopologySourceTest, InASlurmJobScontrolShowTopologyIsRead) {
  FakeScontrol scontrol;
  scontrol.result.exit_code = 0;
  std::ifstream in(fixture_path("small_fabric.scontrol.txt"));
  scontrol.result.output.assign(std::istreambuf_iterator<char>(in), {});
  const FoundTopology found = find_topology(std::nullopt, "42", scontrol.runner());
  ASSERT_TRUE(found.topology);
  EXPECT_EQ(found.topology->leaf_of("gpu005"), "leaf-c");
  EXPECT_EQ(found.source, "scontrol show topology");
  ASSERT_EQ(scontrol.asked.size(), 1u);
  EXPECT_EQ(scontrol.asked[0], (std::vector<std::string>{"scontrol", "show", "topology"}));
}

TEST(TopologySourceTest, WhenScontrolGivesNoneOneLineSaysWhyAndNothingIsThrown) {
  struct Case {
    const char* name;
    ProcessResult result;
    const char* said;
  };
  const std::vector<Case> cases = {
      {"fails",
       {1, false, "", "slurm_load_topo error: Invalid user\nmore\n"},
       "failed with status 1 (slurm_load_topo error: Invalid user)"},
      {"cannot start",
       {-1, false, "", "No such file or directory"},
       "could not run (No such file or directory)"},
      {"times out", {-1, true, "", ""}, "did not answer within 30 s"},
      {"prints nothing", {0, false, " \n", ""}, "printed nothing"},
      {"prints no topology",
       {0, false, "No topology information available\n", ""},
       "printed what is not a topology (scontrol show topology:1: "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FakeScontrol scontrol;
    scontrol.result = c.result;
    const FoundTopology found = find_topology(std::nullopt, "42", scontrol.runner());
    EXPECT_FALSE(found.topology);
    EXPECT_TRUE(found.source.empty());
    EXPECT_THAT(found.unavailable, HasSubstr(c.said));
    EXPECT_THAT(found.unavailable, StartsWith("no --topology given and `scontrol show topology` "));
    EXPECT_THAT(found.unavailable, HasSubstr("suspect switch paths are named by their nodes"));
    EXPECT_EQ(found.unavailable.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace commcert
