#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/fleet_stats.hpp"
#include "validate/metrics.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> found(const Evidence& e, const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings)
    out.push_back(e.node_name(f.node) + ":" + f.code.str());
  return out;
}

// Node-scope allreduce figures, one node each: n0 -> values[0], ...
Evidence node_scope_fleet(const std::vector<double>& busbw_gb) {
  std::vector<Json> records;
  for (std::size_t i = 0; i < busbw_gb.size(); ++i) {
    records.push_back(
        fixtures::collective(std::uint64_t{1} << 30, busbw_gb[i], "node", fmt::format("n{}", i)));
  }
  return fixtures::evidence_of(records);
}

Baseline busbw_baseline(const std::string& bound) {
  return fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    busbw_gb_per_s:\n      node: " +
      bound + "\n      cluster: " + bound + "\n");
}

TEST(MetricTable, KeepsEachSubjectsBestFigureAtJudgedSizes) {
  const Evidence e = fixtures::evidence_of(
      {fixtures::collective(1 << 20, 999, "node", "n0"),  // below 1 GiB: not judged
       fixtures::collective(std::uint64_t{1} << 30, 400, "node", "n0"),
       fixtures::collective(std::uint64_t{2} << 30, 470, "node", "n0"),
       fixtures::burn("n0", 0, 600), fixtures::burn("n0", 0, 650), fixtures::burn("n0", 1, 500)});
  const MetricTable table(e, busbw_baseline("{floor: 1}"));
  const MetricSeries* busbw = table.find("collective.allreduce.busbw.node");
  ASSERT_NE(busbw, nullptr);
  ASSERT_EQ(busbw->samples.size(), 1u);
  EXPECT_DOUBLE_EQ(busbw->samples[0].value, 470);
  EXPECT_EQ(busbw->samples[0].bytes, std::uint64_t{2} << 30);
  const MetricSeries* tflops = table.find("burn.tflops.gemm_bf16");
  ASSERT_NE(tflops, nullptr);
  ASSERT_EQ(tflops->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(tflops->samples[0].value, 650);
}

TEST(MetricTable, KeepsTheBestRecordOfEveryGroupInRecordOrder) {
  // 1,500 node-scope groups, more than the group index's first 1,024 slots hold: each node's
  // better figure is kept, and samples follow the order the records were read in, whatever the
  // groups' hashes (a verdict must not change with them).
  constexpr int kNodes = 1500;
  std::vector<Json> records;
  for (int n = 0; n < kNodes; ++n) {
    const std::string node = "n" + std::to_string(n);
    records.push_back(fixtures::collective(std::uint64_t{2} << 30, 300, "node", node));
    records.push_back(fixtures::collective(std::uint64_t{1} << 30, 400 + n % 7, "node", node));
  }
  const Evidence e = fixtures::evidence_of(records);
  const MetricTable table(e, busbw_baseline("{floor: 1}"));
  const MetricSeries* busbw = table.find("collective.allreduce.busbw.node");
  ASSERT_NE(busbw, nullptr);
  ASSERT_EQ(busbw->samples.size(), std::size_t{kNodes});
  for (int n = 0; n < kNodes; ++n) {
    const MetricSample& sample = busbw->samples[static_cast<std::size_t>(n)];
    ASSERT_EQ(e.node_name(sample.node), "n" + std::to_string(n));
    EXPECT_DOUBLE_EQ(sample.value, 400 + n % 7) << "n" << n;
    EXPECT_EQ(sample.bytes, std::uint64_t{1} << 30);
  }
}

TEST(FloorRule, BelowTheFloorQuarantinesTheNodeWithFigures) {
  const Evidence e = node_scope_fleet({470, 455});
  const Baseline b = busbw_baseline("{floor: 460}");
  const auto findings = fixtures::run_rule("rule.floor", e, b);
  ASSERT_THAT(found(e, findings), ElementsAre("n1:perf.below_floor"));
  EXPECT_DOUBLE_EQ(*findings[0].measured, 455);
  EXPECT_DOUBLE_EQ(*findings[0].limit, 460);
  const FleetVerdict v = fixtures::certify(e, b);
  EXPECT_EQ(fixtures::node(v, "n1").first_reason()->message,
            "allreduce busbw (node scope, 1 GiB) 455 GB/s below the floor 460 GB/s");
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kCertified);
}

TEST(FloorRule, ASharedFigureBelowTheFloorBlamesNobody) {
  const Evidence e = fixtures::evidence_of({fixtures::run_record({"n0", "n1", "n2"}),
                                            fixtures::collective(std::uint64_t{1} << 30, 300)});
  const Baseline b = busbw_baseline("{floor: 355}");
  EXPECT_THAT(found(e, fixtures::run_rule("rule.floor", e, b)),
              ElementsAre("n0:perf.unattributed", "n1:perf.unattributed", "n2:perf.unattributed"));
  const FleetVerdict v = fixtures::certify(e, b);
  EXPECT_EQ(v.count(NodeState::kInconclusive), 3u);
  EXPECT_THAT(
      fixtures::node(v, "n0").first_reason()->message,
      HasSubstr("allreduce busbw (cluster scope, 1 GiB) 300 GB/s fails the floor (355 GB/s) in "
                "the 3-node run run1"));
  ASSERT_TRUE(fixtures::node(v, "n0").first_reason()->link);
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->link->hosts,
            (std::vector<std::string>{"n0", "n1", "n2"}));
}

// A shared figure's reason names the nodes sharing it while there are at most eight of them
// (the message gives the count), with the figure's unit and its record.
TEST(FloorRule, ASharedFigureNamesUpToEightNodes) {
  const auto shared = [](std::size_t nodes) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < nodes; ++i)
      names.push_back("n" + std::to_string(i));
    const FleetVerdict v = fixtures::certify(
        fixtures::evidence_of(
            {fixtures::run_record(names), fixtures::collective(std::uint64_t{1} << 30, 300)}),
        busbw_baseline("{floor: 355}"));
    return fixtures::reason(fixtures::node(v, "n0"), "perf.unattributed");
  };
  const Reason eight = shared(8);
  ASSERT_TRUE(eight.link);
  EXPECT_EQ(eight.link->type, "hosts");
  EXPECT_EQ(eight.link->index, -1);
  EXPECT_EQ(eight.link->hosts.size(), 8u);
  EXPECT_EQ(eight.unit, "GB/s");
  EXPECT_EQ(eight.evidence.size(), 1u);
  // The nodes of a second run's shared figure are named the same way.
  const FleetVerdict second =
      fixtures::certify(fixtures::evidence_of({fixtures::run_record({"m0"}, "run0"),
                                               fixtures::run_record({"n0", "n1", "n2"}),
                                               fixtures::collective(std::uint64_t{1} << 30, 300)}),
                        busbw_baseline("{floor: 355}"));
  const Reason& of_run1 = fixtures::reason(fixtures::node(second, "n0"), "perf.unattributed");
  ASSERT_TRUE(of_run1.link);
  EXPECT_EQ(of_run1.link->hosts, (std::vector<std::string>{"n0", "n1", "n2"}));
  const Reason nine = shared(9);
  ASSERT_TRUE(nine.link);
  EXPECT_TRUE(nine.link->hosts.empty());
  EXPECT_THAT(nine.message, HasSubstr("in the 9-node run run1"));
}

// A port's figure names the port: in the message and as the reason's link.
TEST(FloorRule, APortRateBelowItsFloorNamesThePort) {
  const Json port = fixtures::ib_port("n0", "mlx5_3", 200);
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({port}),
                        fixtures::baseline_of("required: [health.ib]\nchecks:\n  health.ib:\n"
                                              "    rate_gbit_per_s: {floor: 400}\n"));
  const Reason& r = fixtures::reason(fixtures::node(v, "n0"), "perf.below_floor");
  EXPECT_THAT(r.message, ::testing::StartsWith("mlx5_3 port 1: port rate 200 Gb/s"));
  ASSERT_TRUE(r.link);
  EXPECT_EQ(r.link->type, "ib_port");
  EXPECT_EQ(r.link->device, "mlx5_3");
  EXPECT_EQ(r.link->index, 1);
}

// The size a collective figure was measured at is said from the smallest, one byte.
TEST(FloorRule, TheSizeOfACollectiveFigureIsSaidFromOneByte) {
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n    min_bytes: 1\n"
      "    busbw_gb_per_s:\n      node: {floor: 355}\n");
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({fixtures::collective(1, 300, "node", "n0")}), b);
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->message,
            "allreduce busbw (node scope, 1 B) 300 GB/s below the floor 355 GB/s");
}

TEST(FloorRule, AOneNodeCommunicatorIsAttributable) {
  const Evidence e = fixtures::evidence_of(
      {fixtures::run_record({"n0", "n0"}), fixtures::collective(std::uint64_t{1} << 30, 300)});
  EXPECT_THAT(found(e, fixtures::run_rule("rule.floor", e, busbw_baseline("{floor: 355}"))),
              ElementsAre("n0:perf.below_floor"));
}

// The sweep's process 0 writes every group's record: `group_nodes`, not `host`, names the node.
TEST(FloorRule, NodeScopeFiguresBelongToTheirGroupNotToTheWriter) {
  Json slow = fixtures::collective(std::uint64_t{1} << 30, 400, "node", "n0");
  slow["group_nodes"] = {"n7"};
  Json fine = fixtures::collective(std::uint64_t{1} << 30, 480, "node", "n0");
  fine["group_nodes"] = {"n0"};
  const Evidence e = fixtures::evidence_of({slow, fine});
  EXPECT_THAT(found(e, fixtures::run_rule("rule.floor", e, busbw_baseline("{floor: 460}"))),
              ElementsAre("n7:perf.below_floor"));
}

TEST(FloorRule, WithoutARankMapASharedFigureIsNeverPinnedOnItsWriter) {
  // The run record is missing: the record names only its writer, who is not the whole story.
  const Evidence e = fixtures::evidence_of({fixtures::collective(std::uint64_t{1} << 30, 300)});
  EXPECT_THAT(found(e, fixtures::run_rule("rule.floor", e, busbw_baseline("{floor: 355}"))),
              ElementsAre("n0:perf.unattributed"));
  const FleetVerdict v = fixtures::certify(e, busbw_baseline("{floor: 355}"));
  std::vector<std::string> notes;
  for (const auto& n : v.notes)
    notes.push_back(n.code);
  EXPECT_THAT(notes, ElementsAre("input.no_rank_map"));
}

TEST(MetricTable, ScopesItDoesNotKnowAreNotedNotJudged) {
  const Evidence e =
      fixtures::evidence_of({fixtures::run_record({"n0", "n1"}),
                             fixtures::collective(std::uint64_t{1} << 30, 1, "rail")});
  const FleetVerdict v = fixtures::certify(e, busbw_baseline("{floor: 355}"));
  EXPECT_EQ(v.count(NodeState::kInconclusive), 2u);  // no judgeable evidence
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_EQ(v.notes[0].code, "input.unknown_scope");
}

TEST(MetricTable, PairsAreLocalizationEvidenceNotACheckFigure) {
  Json pair = fixtures::collective(std::uint64_t{1} << 30, 1, "pairs");
  pair["group_nodes"] = {"n0", "n1"};
  const Evidence e = fixtures::evidence_of({fixtures::run_record({"n0", "n1"}), pair});
  const FleetVerdict v = fixtures::certify(e, busbw_baseline("{floor: 355}"));
  EXPECT_EQ(v.count(NodeState::kInconclusive), 2u);  // the check still needs its own scope
  EXPECT_TRUE(fixtures::has_code(fixtures::node(v, "n0"), "evidence.missing"));
  EXPECT_TRUE(v.notes.empty());
}

TEST(CeilingAndEqualityRules, JudgeTemperatureAndPortRate) {
  Json hot = fixtures::gpu_health("n0", 1);
  hot["temperature_c"] = 91.0;
  const Json port = fixtures::ib_port("n1", "mlx5_3", 200);
  const Evidence e = fixtures::evidence_of({hot, fixtures::gpu_health("n1", 0), port});
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nchecks:\n  health.gpu:\n    temperature_c: {ceiling: 85}\n"
      "  health.ib:\n    rate_gbit_per_s: {equals: 400}\n");
  EXPECT_THAT(found(e, fixtures::run_rule("rule.ceiling", e, b)),
              ElementsAre("n0:perf.above_ceiling"));
  const auto equality = fixtures::run_rule("rule.equality", e, b);
  ASSERT_THAT(found(e, equality), ElementsAre("n1:perf.not_equal"));
  EXPECT_EQ(equality[0].link->device, "mlx5_3");
  const FleetVerdict v = fixtures::certify(e, b);
  EXPECT_EQ(fixtures::node(v, "n1").first_reason()->message,
            "mlx5_3 port 1: port rate 200 Gb/s, the baseline requires 400 Gb/s");
}

TEST(RegressionRule, FlagsFiguresTooFarBelowExpected) {
  const Evidence e = node_scope_fleet({480, 470, 450});
  const Baseline b = busbw_baseline("{expected: 480, max_regression_pct: 5}");
  const auto findings = fixtures::run_rule("rule.regression", e, b);
  ASSERT_THAT(found(e, findings), ElementsAre("n2:perf.regression"));
  const FleetVerdict v = fixtures::certify(e, b);
  EXPECT_EQ(fixtures::node(v, "n2").first_reason()->message,
            "allreduce busbw (node scope, 1 GiB) 450 GB/s is 6.25% below the expected 480 GB/s "
            "(allowed 5%)");
}

TEST(WarnBandRule, JustAboveTheFloorIsAWarningNotAQuarantine) {
  const Evidence e = node_scope_fleet({500, 462});
  const Baseline b = busbw_baseline("{floor: 460, warn_band_pct: 2}");
  EXPECT_THAT(found(e, fixtures::run_rule("rule.warn_band", e, b)),
              ElementsAre("n1:perf.warn_band"));
  const FleetVerdict v = fixtures::certify(e, b);
  EXPECT_EQ(fixtures::node(v, "n1").state, NodeState::kCertified);
  EXPECT_EQ(fixtures::node(v, "n1").severity, Severity::kMonitor);
  EXPECT_EQ(v.exit_status(), 0);
}

TEST(FleetOutlierRule, FlagsANode8PercentBelowItsPeersAboveTheFloor) {
  std::vector<double> values = {480, 482, 478, 481, 479, 483, 477, 480, 481, 479, 480};
  values[6] = 480 * 0.92;  // 441.6: 8% below its peers
  const Evidence e = node_scope_fleet(values);
  const Baseline b = busbw_baseline("{floor: 400}");
  EXPECT_TRUE(fixtures::run_rule("rule.floor", e, b).empty());
  const auto findings = fixtures::run_rule("rule.fleet_outlier", e, b);
  ASSERT_THAT(found(e, findings), ElementsAre("n6:perf.fleet_outlier"));
  const FleetVerdict v = fixtures::certify(e, b);
  EXPECT_THAT(fixtures::node(v, "n6").first_reason()->message,
              HasSubstr("441.6 GB/s is 8% below the fleet median 480 GB/s"));
}

TEST(FleetOutlierRule, HealthyNoiseSmallFleetsAndDisabledFleetsAreNotFlagged) {
  // A few % of spread: nobody is an outlier.
  const Evidence noisy = node_scope_fleet({480, 470, 490, 465, 495, 475, 485, 468, 492, 479});
  EXPECT_TRUE(
      fixtures::run_rule("rule.fleet_outlier", noisy, busbw_baseline("{floor: 400}")).empty());
  // Fewer nodes than min_nodes (8 by default): the median means little.
  const Evidence small = node_scope_fleet({480, 480, 480, 400});
  EXPECT_TRUE(
      fixtures::run_rule("rule.fleet_outlier", small, busbw_baseline("{floor: 300}")).empty());
  // Explicitly off.
  const Evidence slow = node_scope_fleet({480, 480, 480, 480, 480, 480, 480, 480, 480, 400});
  EXPECT_TRUE(
      fixtures::run_rule("rule.fleet_outlier", slow, busbw_baseline("{floor: 300, fleet: false}"))
          .empty());
  // MAD 0 (identical peers): the % test alone decides, and the reason says z is infinite.
  EXPECT_THAT(
      found(slow, fixtures::run_rule("rule.fleet_outlier", slow, busbw_baseline("{floor: 300}"))),
      ElementsAre("n9:perf.fleet_outlier"));
  EXPECT_EQ(fixtures::node(fixtures::certify(slow, busbw_baseline("{floor: 300}")), "n9")
                .first_reason()
                ->message,
            "allreduce busbw (node scope, 1 GiB) 400 GB/s is 16.67% below the fleet median 480 "
            "GB/s (robust z inf, 10 nodes)");
  // Two outliers: both named.
  const Evidence two = node_scope_fleet({480, 480, 480, 480, 480, 480, 480, 480, 400, 400});
  EXPECT_THAT(
      found(two, fixtures::run_rule("rule.fleet_outlier", two, busbw_baseline("{floor: 300}"))),
      ElementsAre("n8:perf.fleet_outlier", "n9:perf.fleet_outlier"));
}

TEST(FleetOutlierRule, AFigureSharedByManyNodesIsNoPeerOfANodesOwnFigure) {
  // One node measured alone at 300 GB/s; one job over eight other nodes at 480 GB/s, a figure
  // none of them owns. The fleet has one node's own figure, fewer than min_nodes: counting the
  // shared figure as eight peers would make 300 an outlier 37.5% below a "median" of 480.
  const std::vector<std::string> wide = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
  const Evidence e = fixtures::evidence_of(
      {fixtures::run_record({"n9", "n9"}, "solo"),
       fixtures::collective(std::uint64_t{1} << 30, 300, "cluster", "n9", {}, "solo"),
       fixtures::run_record(wide, "wide"),
       fixtures::collective(std::uint64_t{1} << 30, 480, "cluster", "n0", {}, "wide")});
  const Baseline b = busbw_baseline("{floor: 100}");
  EXPECT_TRUE(fixtures::run_rule("rule.fleet_outlier", e, b).empty());
  // Eight nodes measured alone at 480 make a fleet; a job over two more at 300 is neither node's
  // own figure, so neither is an outlier for it (their verdict comes from the shortfall rules).
  std::vector<Json> records;
  for (int n = 0; n < 8; ++n) {
    const std::string node = "n" + std::to_string(n);
    records.push_back(fixtures::run_record({node, node}, "solo" + node));
    records.push_back(
        fixtures::collective(std::uint64_t{1} << 30, 480, "cluster", node, {}, "solo" + node));
  }
  records.push_back(fixtures::run_record({"n8", "n9"}, "pair"));
  records.push_back(fixtures::collective(std::uint64_t{1} << 30, 300, "cluster", "n8", {}, "pair"));
  EXPECT_TRUE(fixtures::run_rule("rule.fleet_outlier", fixtures::evidence_of(records), b).empty());
}

TEST(FleetOutlierRule, ALowerIsBetterFigureIsAnOutlierAboveTheMedian) {
  // Nine GPUs at 40 C and one at 60 C, all under the ceiling: the hot one is 50 % worse than
  // its fleet; a cool one would be better, never an outlier.
  std::vector<Json> records;
  for (int n = 0; n < 10; ++n) {
    Json r = fixtures::gpu_health("n" + std::to_string(n), 0);
    r["temperature_c"] = n == 4 ? 60.0 : (n == 7 ? 20.0 : 40.0);
    records.push_back(r);
  }
  const Evidence e = fixtures::evidence_of(records);
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\nchecks:\n  health.gpu:\n"
      "    temperature_c: {ceiling: 90}\n");
  EXPECT_THAT(found(e, fixtures::run_rule("rule.fleet_outlier", e, b)),
              ElementsAre("n4:perf.fleet_outlier"));
}

TEST(FleetOutlierRule, JudgesEachGpuAgainstAllGpusOfTheFleet) {
  std::vector<Json> records;
  for (int n = 0; n < 8; ++n) {
    for (int g = 0; g < 8; ++g) {
      records.push_back(
          fixtures::burn(fmt::format("n{}", n), g, n == 3 && g == 5 ? 660 : 730 + (g % 3)));
    }
  }
  const Evidence e = fixtures::evidence_of(records);
  const Baseline b = fixtures::baseline_of(
      "required: [burn]\nchecks:\n  burn:\n    tflops:\n      gemm_bf16: {floor: 600}\n");
  const auto findings = fixtures::run_rule("rule.fleet_outlier", e, b);
  ASSERT_THAT(found(e, findings), ElementsAre("n3:perf.fleet_outlier"));
  EXPECT_EQ(findings[0].gpu.index, 5);
}

// Only a node's own figures are judged against its peers: a faster figure it shares with
// another node (a two-node communicator) does not hide its own slow one, and a slow shared
// figure is not pinned on it. At the limit (max_deficit_pct set to 470's shortfall from 500 as
// the rule computes it, about 6 %) is an outlier, 0.1 % less is not, 0.1 % more is.
TEST(FleetOutlierRule, OnlyANodesOwnFiguresAreJudgedAgainstItsPeers) {
  const double limit = shortfall_pct(470e9 * 1e-9, 500e9 * 1e-9, true);
  const Baseline b =
      busbw_baseline(fmt::format("{{floor: 100, fleet: {{max_deficit_pct: {:.17g}}}}}", limit));
  for (const auto& [own, flagged] :
       std::vector<std::pair<double, bool>>{{470.5, false}, {470, true}, {469.5, true}}) {
    SCOPED_TRACE(own);
    std::vector<Json> records;
    for (int n = 0; n < 10; ++n) {
      records.push_back(fixtures::collective(std::uint64_t{1} << 30, n == 6 ? own : 500, "node",
                                             fmt::format("n{}", n)));
    }
    Json shared = fixtures::collective(std::uint64_t{1} << 30, 520, "node", "n6");
    shared["group_nodes"] = {"n6", "n7"};
    records.push_back(shared);
    const Evidence e = fixtures::evidence_of(records);
    EXPECT_EQ(
        found(e, fixtures::run_rule("rule.fleet_outlier", e, b)),
        flagged ? std::vector<std::string>{"n6:perf.fleet_outlier"} : std::vector<std::string>{});
    const FleetVerdict v = fixtures::certify(e, b);
    EXPECT_EQ(fixtures::node(v, "n6").state,
              flagged ? NodeState::kQuarantined : NodeState::kCertified);
    EXPECT_EQ(fixtures::node(v, "n7").state, NodeState::kCertified);
  }
  // A slow shared figure as a node's only one: n7 has no figure of its own to judge.
  std::vector<Json> records;
  for (int n = 0; n < 9; ++n) {
    records.push_back(
        fixtures::collective(std::uint64_t{1} << 30, 500, "node", fmt::format("n{}", n)));
  }
  Json shared = fixtures::collective(std::uint64_t{1} << 30, 400, "node", "n8");
  shared["group_nodes"] = {"n8", "n9"};
  records.push_back(shared);
  const Evidence e = fixtures::evidence_of(records);
  EXPECT_TRUE(fixtures::run_rule("rule.fleet_outlier", e, b).empty());
}

}  // namespace
}  // namespace commcert
