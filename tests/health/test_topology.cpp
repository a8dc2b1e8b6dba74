#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "health/topology.hpp"

namespace commcert {
namespace {

TEST(Topology, TheNearestNicSharesTheLongestAncestry) {
  // root(1) > package(2) > switch(3) > gpu ; nic0 on the same switch, nic1 on another switch of
  // the package, nic2 on the other package.
  const std::vector<std::uintptr_t> gpu = {1, 2, 3, 10};
  const std::vector<std::pair<std::string, std::vector<std::uintptr_t>>> nics = {
      {"mlx5_0", {1, 2, 3, 11}}, {"mlx5_1", {1, 2, 4, 12}}, {"mlx5_2", {1, 5, 6, 13}}};
  EXPECT_EQ(nearest_by_ancestry(gpu, nics), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(nearest_by_ancestry({1, 2, 7, 14}, nics),
            (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_TRUE(nearest_by_ancestry(gpu, {}).empty());
}

TEST(Topology, AffinityIsNullWithoutATopologyRatherThanEmpty) {
  TopologyReport missing;
  EXPECT_TRUE(affinity_json(missing).is_null());
  TopologyReport empty;
  empty.available = true;
  EXPECT_TRUE(affinity_json(empty).is_array());
}

#if COMMCERT_TEST_HAVE_HWLOC
// hwloc loads the fixture instead of this machine when HWLOC_XMLFILE names it.
class TopologyFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto path =
        std::filesystem::path(COMMCERT_SOURCE_DIR) / "tests/fixtures/hwloc/two_socket_gpu_nic.xml";
    ::setenv("HWLOC_XMLFILE", path.c_str(), 1);
    ::setenv("HWLOC_THISSYSTEM", "0", 1);
  }
  void TearDown() override { ::unsetenv("HWLOC_XMLFILE"); }
};

TEST_F(TopologyFixture, PlacesGpusOnTheirNumaNodeNextToTheirNics) {
  const TopologyReport report = read_topology(
      {{0, "00000000:1B:00.0"}, {1, "0000:3b:00.0"}, {2, "0000:9C:00.0"}, {3, "0000:bb:00.0"}});
  ASSERT_TRUE(report.available) << report.unavailable_reason;
  ASSERT_EQ(report.gpus.size(), 4u);
  EXPECT_EQ(report.gpus[0].pci_bus_id, "0000:1b:00.0");
  EXPECT_EQ(report.gpus[0].numa_node, 0);
  EXPECT_EQ(report.gpus[0].nearest_ib_devices, std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(report.gpus[1].nearest_ib_devices, std::vector<std::string>{"mlx5_1"});
  EXPECT_EQ(report.gpus[2].numa_node, 1);
  EXPECT_EQ(report.gpus[2].nearest_ib_devices, std::vector<std::string>{"mlx5_2"});
  // Alone on its switch: the NIC of its own socket is still nearer than the other socket's.
  EXPECT_EQ(report.gpus[3].nearest_ib_devices, std::vector<std::string>{"mlx5_2"});
  EXPECT_EQ(report.gpus[3].gpu, 3);
}

TEST_F(TopologyFixture, WithoutNvmlFindsNvidiaGpusOnPci) {
  const TopologyReport report = read_topology({});
  ASSERT_TRUE(report.available);
  ASSERT_EQ(report.gpus.size(), 4u);
  EXPECT_FALSE(report.gpus[0].gpu.has_value());  // no driver: no NVML index
  EXPECT_EQ(report.gpus[0].pci_bus_id, "0000:1b:00.0");
  EXPECT_EQ(report.gpus[0].numa_node, 0);
}

TEST_F(TopologyFixture, AGpuHwlocDoesNotKnowKeepsItsAddressAndNullLocality) {
  const TopologyReport report = read_topology({{5, "0000:ee:00.0"}});
  ASSERT_EQ(report.gpus.size(), 1u);
  EXPECT_FALSE(report.gpus[0].numa_node.has_value());
  EXPECT_TRUE(report.gpus[0].nearest_ib_devices.empty());
}
#endif

}  // namespace
}  // namespace commcert
