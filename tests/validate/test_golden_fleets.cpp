// Synthetic fleets judged against the shipped H100 baseline: each fault class is caught and
// pinned on the right node (and GPU or link); healthy fleets with a few % of spread are not.
#include <ostream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

using fixtures::Fault;
using fixtures::FaultKind;
using fixtures::FleetSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Baseline& h100() {
  static const Baseline b = fixtures::shipped_baseline("h100-sxm-8gpu-ndr400");
  return b;
}

FleetSpec fleet_with(std::vector<Fault> faults, int nodes = 12) {
  FleetSpec spec;
  spec.nodes = nodes;
  spec.seed = 7;
  spec.faults = std::move(faults);
  return spec;
}

struct Case {
  std::string name;
  Fault fault;
  std::string code;  // the first reason of node3
  NodeState state = NodeState::kQuarantined;
  int gpu = -1;           // the GPU the reason must name
  std::string link = "";  // "nvlink 5", "mlx5_2 port 1"
};

// Test names and failure messages show the case's name, not its bytes.
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

class FaultClass : public ::testing::TestWithParam<Case> {};

// One faulty node among twelve: exactly that node leaves the pool, for the right reason.
TEST_P(FaultClass, IsCaughtAndAttributedToTheRightNode) {
  const Case& c = GetParam();
  const FleetVerdict v = fixtures::certify_fleet(fleet_with({c.fault}), h100());
  std::vector<std::string> expected_bad = {"node3"};
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined),
            c.state == NodeState::kQuarantined ? expected_bad : std::vector<std::string>{});
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kInconclusive),
            c.state == NodeState::kInconclusive ? expected_bad : std::vector<std::string>{});
  const NodeVerdict& bad = fixtures::node(v, "node3");
  ASSERT_NE(bad.first_reason(), nullptr);
  const Reason& r = *bad.first_reason();
  EXPECT_EQ(r.code, c.code) << r.message;
  if (c.gpu >= 0) {
    EXPECT_EQ(r.gpu_index, c.gpu);
    EXPECT_EQ(r.gpu_uuid, fmt::format("GPU-{:08x}-{:04x}", 3, c.gpu));
  }
  if (!c.link.empty()) {
    ASSERT_TRUE(r.link);
    const std::string link = r.link->type == "nvlink"
                                 ? fmt::format("nvlink {}", r.link->index)
                                 : fmt::format("{} port {}", r.link->device, r.link->index);
    EXPECT_EQ(link, c.link);
  }
  // A fault points at the records that show it; missing evidence has none to point at.
  if (c.code != "evidence.missing") {
    EXPECT_FALSE(r.evidence.empty());
  }
  EXPECT_EQ(v.exit_status(), c.state == NodeState::kQuarantined ? 1 : 3);
}

INSTANTIATE_TEST_SUITE_P(
    H100Fleet, FaultClass,
    ::testing::Values(
        Case{"wrong_data", {FaultKind::kWrongData, 3}, "collective.wrong_data"},
        Case{"slow_collective", {FaultKind::kSlowCollective, 3, 0, 0, 0.10}, "perf.below_floor"},
        Case{"straggler", {FaultKind::kStraggler, 3, 0, 0, 0.6}, "collective.straggler"},
        Case{"hang", {FaultKind::kHang, 3}, "collective.not_arrived"},
        Case{"burn_miscompare",
             {FaultKind::kBurnMiscompare, 3, 5},
             "burn.miscompare",
             NodeState::kQuarantined,
             5},
        Case{"burn_peer",
             {FaultKind::kBurnPeerMismatch, 3, 2},
             "burn.peer_mismatch",
             NodeState::kQuarantined,
             2},
        Case{"burn_slow",
             {FaultKind::kBurnSlow, 3, 6, 0, 0.15},
             "perf.below_floor",
             NodeState::kQuarantined,
             6},
        Case{"membw_errors",
             {FaultKind::kMembwErrors, 3, 1},
             "membw.integrity",
             NodeState::kQuarantined,
             1},
        Case{"membw_8pct_slow",
             {FaultKind::kMembwSlow, 3, 4, 0, 0.08},
             "perf.fleet_outlier",
             NodeState::kQuarantined,
             4},
        Case{"ecc",
             {FaultKind::kEcc, 3, 7, 0, 2},
             "health.ecc_uncorrectable",
             NodeState::kQuarantined,
             7},
        Case{"remap_failure",
             {FaultKind::kRemapFailure, 3, 0},
             "health.remap_failure",
             NodeState::kQuarantined,
             0},
        Case{"remap_pending",
             {FaultKind::kRemapPending, 3, 1},
             "health.remap_pending",
             NodeState::kQuarantined,
             1},
        Case{"pcie",
             {FaultKind::kPcieDowngrade, 3, 2},
             "health.pcie_degraded",
             NodeState::kQuarantined,
             2},
        Case{"nvlink_down",
             {FaultKind::kNvlinkDown, 3, 6, 5},
             "health.nvlink_down",
             NodeState::kQuarantined,
             6,
             "nvlink 5"},
        Case{"nvlink_errors",
             {FaultKind::kNvlinkErrors, 3, 6, 11},
             "health.nvlink_errors",
             NodeState::kQuarantined,
             6,
             "nvlink 11"},
        Case{"xid79",
             {FaultKind::kXid, 3, 4, 0, 79},
             "health.xid_fatal",
             NodeState::kQuarantined,
             4},
        Case{"ib_down",
             {FaultKind::kIbDown, 3, 0, 2},
             "health.ib_port_down",
             NodeState::kQuarantined,
             -1,
             "mlx5_2 port 1"},
        Case{"ib_rate",
             {FaultKind::kIbRate, 3, 0, 6, 200},
             "perf.not_equal",
             NodeState::kQuarantined,
             -1,
             "mlx5_6 port 1"},
        Case{"ib_flaps",
             {FaultKind::kIbFlaps, 3, 0, 1, 9},
             "health.ib_counter",
             NodeState::kQuarantined,
             -1,
             "mlx5_1 port 1"},
        Case{"gpu_missing", {FaultKind::kGpuMissing, 3}, "health.gpu_count"},
        Case{"burn_error",
             {FaultKind::kBurnError, 3, 2},
             "evidence.error",
             NodeState::kInconclusive},
        Case{"burn_skipped",
             {FaultKind::kBurnSkipped, 3},
             "evidence.skipped",
             NodeState::kInconclusive},
        Case{"no_burn", {FaultKind::kNoBurn, 3}, "evidence.missing", NodeState::kInconclusive},
        Case{"truncated", {FaultKind::kTruncated, 3}, "input.truncated", NodeState::kInconclusive}),
    [](const ::testing::TestParamInfo<Case>& p) { return p.param.name; });

TEST(HealthyFleet, AFewPercentOfSpreadQuarantinesNobody) {
  for (const std::uint64_t seed : {1, 2, 3}) {
    FleetSpec spec;
    spec.nodes = 64;
    spec.noise_pct = 3.0;
    spec.seed = seed;
    const FleetVerdict v = fixtures::certify_fleet(spec, h100());
    EXPECT_EQ(v.count(NodeState::kCertified), 64u) << "seed " << seed;
    EXPECT_EQ(v.exit_status(), 0);
    // The fleet statistics are there for the operator.
    const auto it = std::find_if(v.fleet.begin(), v.fleet.end(), [](const FleetMetricSummary& m) {
      return m.metric == "burn.tflops.gemm_bf16";
    });
    ASSERT_NE(it, v.fleet.end());
    EXPECT_EQ(it->samples, 64u * 8u);
    EXPECT_EQ(it->nodes, 64u);
    EXPECT_NEAR(it->median, 730, 730 * 0.01);
  }
}

TEST(HealthyFleet, ThrottlingIsRecordedButCertified) {
  const FleetVerdict v =
      fixtures::certify_fleet(fleet_with({{FaultKind::kThrottle, 3, 2}}), h100());
  EXPECT_EQ(v.count(NodeState::kCertified), 12u);
  const auto& n3 = fixtures::node(v, "node3");
  EXPECT_EQ(n3.severity, Severity::kMonitor);
  EXPECT_TRUE(fixtures::has_code(n3, "health.throttle"));
}

TEST(ClusterFaults, ASlowFabricWithNobodyToBlameIsInconclusiveForAll) {
  const FleetVerdict v =
      fixtures::certify_fleet(fleet_with({{FaultKind::kSlowCluster, 0, 0, 0, 0.2}}), h100());
  EXPECT_EQ(v.count(NodeState::kInconclusive), 12u);
  EXPECT_EQ(fixtures::node(v, "node0").first_reason()->code, "perf.unattributed");
  EXPECT_THAT(fixtures::node(v, "node0").first_reason()->message,
              HasSubstr("12-node run collectives-cluster"));
}

TEST(ClusterFaults, AStuckOperationIsInconclusiveNotQuarantined) {
  const FleetVerdict v = fixtures::certify_fleet(fleet_with({{FaultKind::kStuck, 0}}), h100());
  EXPECT_EQ(v.count(NodeState::kQuarantined), 0u);
  EXPECT_EQ(v.count(NodeState::kInconclusive), 12u);
  EXPECT_EQ(fixtures::node(v, "node5").first_reason()->code, "collective.timeout_unattributed");
}

TEST(ClusterFaults, CorruptionThatSpreadToEveryRankBlamesNobody) {
  const FleetVerdict v =
      fixtures::certify_fleet(fleet_with({{FaultKind::kCorruptEverywhere, 0}}), h100());
  EXPECT_EQ(v.count(NodeState::kQuarantined), 0u);
  EXPECT_EQ(fixtures::node(v, "node0").first_reason()->code, "collective.wrong_data_everywhere");
}

TEST(ClusterFaults, SeveralFaultsAreEachAttributed) {
  const FleetVerdict v = fixtures::certify_fleet(fleet_with({{FaultKind::kWrongData, 1},
                                                             {FaultKind::kEcc, 4, 2, 0, 1},
                                                             {FaultKind::kIbDown, 9, 0, 7}}),
                                                 h100());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined),
            (std::vector<std::string>{"node1", "node4", "node9"}));
  EXPECT_EQ(fixtures::node(v, "node1").first_reason()->code, "collective.wrong_data");
  EXPECT_EQ(fixtures::node(v, "node4").first_reason()->code, "health.ecc_uncorrectable");
  EXPECT_EQ(fixtures::node(v, "node9").first_reason()->code, "health.ib_port_down");
}

}  // namespace
}  // namespace commcert
