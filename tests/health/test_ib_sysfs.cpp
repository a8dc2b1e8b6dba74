#include <filesystem>

#include <gtest/gtest.h>

#include "health/ib_sysfs.hpp"

namespace commcert {
namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(COMMCERT_SOURCE_DIR) / "tests/fixtures/sysfs";

TEST(IbSysfs, ReadsAHealthyPortAsTheKernelPrintsIt) {
  const IbScan scan = read_ib_ports(kFixtures / "healthy");
  ASSERT_TRUE(scan.class_present);
  ASSERT_EQ(scan.ports.size(), 4u);
  const IbPort& p = scan.ports[0];
  EXPECT_EQ(p.device, "mlx5_0");
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.phys_state, "LinkUp");
  EXPECT_DOUBLE_EQ(*p.rate_gbps, 400);
  EXPECT_EQ(p.link_layer, "InfiniBand");
  EXPECT_EQ(p.counters.at("symbol_error"), 0u);
  EXPECT_EQ(p.counters.at("port_xmit_data"), 1234567890123u);  // 64-bit data counters survive
  EXPECT_EQ(p.counters.size(), 17u);
}

TEST(IbSysfs, OrdersDevicesNaturallyAndSeesRoce) {
  const IbScan scan = read_ib_ports(kFixtures / "healthy");
  ASSERT_EQ(scan.ports.size(), 4u);
  EXPECT_EQ(scan.ports[1].device, "mlx5_2");
  EXPECT_EQ(scan.ports[2].device, "mlx5_10");
  EXPECT_EQ(scan.ports[3].device, "mlx5_bond_0");
  EXPECT_EQ(scan.ports[3].link_layer, "Ethernet");
  EXPECT_DOUBLE_EQ(*scan.ports[3].rate_gbps, 200);
}

TEST(IbSysfs, ReportsADownPortAsDown) {
  const IbScan scan = read_ib_ports(kFixtures / "down_port");
  ASSERT_EQ(scan.ports.size(), 1u);
  EXPECT_EQ(scan.ports[0].state, "DOWN");
  EXPECT_EQ(scan.ports[0].phys_state, "Disabled");
  EXPECT_EQ(scan.ports[0].counters.at("link_downed"), 3u);
}

TEST(IbSysfs, KeepsErrorCountersRawIncludingSaturatedOnesAndSkipsUnreadable) {
  const IbScan scan = read_ib_ports(kFixtures / "errors");
  ASSERT_EQ(scan.ports.size(), 1u);
  const auto& c = scan.ports[0].counters;
  EXPECT_EQ(c.at("symbol_error"), 65535u);
  EXPECT_EQ(c.at("link_error_recovery"), 255u);
  EXPECT_EQ(c.at("link_downed"), 2u);
  EXPECT_EQ(c.at("port_rcv_errors"), 1234u);
  EXPECT_EQ(c.at("port_xmit_discards"), 17u);
  EXPECT_EQ(c.count("unreadable_counter"), 0u);
}

TEST(IbSysfs, NoInfinibandClassMeansNoPortsNotAnError) {
  const IbScan scan = read_ib_ports(kFixtures / "no_rdma");
  EXPECT_FALSE(scan.class_present);
  EXPECT_TRUE(scan.ports.empty());
  EXPECT_FALSE(read_ib_ports(kFixtures / "does_not_exist").class_present);
}

TEST(IbSysfs, ParsesStateAndRateText) {
  EXPECT_EQ(ib_state_name("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(ib_state_name("5: LinkUp"), "LinkUp");
  EXPECT_EQ(ib_state_name("ACTIVE_DEFER"), "ACTIVE_DEFER");
  EXPECT_DOUBLE_EQ(*ib_rate_gbps("400 Gb/sec (4X NDR)"), 400);
  EXPECT_DOUBLE_EQ(*ib_rate_gbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_FALSE(ib_rate_gbps("fast").has_value());
  EXPECT_FALSE(ib_rate_gbps("").has_value());
}

}  // namespace
}  // namespace commcert
