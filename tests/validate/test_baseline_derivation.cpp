#include <algorithm>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support.hpp"
#include "validate/baseline_derivation.hpp"
#include "validate/inputs.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using fixtures::FaultKind;
using ::testing::HasSubstr;

Evidence fleet_evidence(const fixtures::FleetSpec& spec, const fixtures::TempDir& dir) {
  fixtures::write_fleet(spec, dir.path());
  return std::move(load_inputs({dir.path().string()}).evidence);
}

TEST(BaselineDerivation, DropsOutliersIterativelyAndSetsFloorsBelowTheMean) {
  fixtures::TempDir dir;
  fixtures::FleetSpec spec;
  spec.nodes = 16;
  spec.noise_pct = 1.0;
  spec.faults = {{FaultKind::kBurnSlow, 5, 2, 0, 0.30},
                 {FaultKind::kSlowCollective, 9, 0, 0, 0.20}};
  const Evidence evidence = fleet_evidence(spec, dir);
  DerivationOptions options;
  options.sku = "h100-derived";
  const Derivation d = derive_baseline(evidence, Baseline{}, options);

  const Bound* tflops = d.baseline.bound("burn.tflops.gemm_bf16");
  ASSERT_NE(tflops, nullptr);
  EXPECT_NEAR(*tflops->expected, 730, 730 * 0.01);  // the slow GPU did not pull the mean down
  EXPECT_NEAR(*tflops->floor, *tflops->expected * 0.9, 0.5);
  EXPECT_EQ(tflops->warn_band_pct, 5);
  const auto burn = std::find_if(d.metrics.begin(), d.metrics.end(), [](const DerivedMetric& m) {
    return m.metric == "burn.tflops.gemm_bf16";
  });
  ASSERT_NE(burn, d.metrics.end());
  EXPECT_EQ(burn->subjects, 128u);
  EXPECT_EQ(burn->dropped, std::vector<std::string>{"node5 gpu 2"});
  EXPECT_GE(burn->iterations, 2u);

  const Bound* busbw = d.baseline.bound("collective.allreduce.busbw.node");
  ASSERT_NE(busbw, nullptr);
  EXPECT_NEAR(*busbw->expected, 480, 480 * 0.01);

  // Without a template: the fleet's shape and the checks it ran.
  EXPECT_EQ(d.baseline.sku, "h100-derived");
  EXPECT_EQ(d.baseline.gpus_per_node, 8);
  EXPECT_EQ(d.baseline.ib_ports_per_node, 8);
  EXPECT_EQ(d.baseline.required,
            (std::vector<std::string>{"health.node", "health.gpu", "health.ib", "burn", "membw",
                                      "collective.allreduce"}));
  EXPECT_THAT(d.yaml, HasSubstr("SuperBench's fix_threshold"));
  EXPECT_THAT(d.yaml, HasSubstr("dropped node5 gpu 2"));
}

TEST(BaselineDerivation, TheDerivedBaselineCertifiesItsOwnFleetAndCatchesAFault) {
  fixtures::TempDir dir;
  fixtures::FleetSpec spec;
  spec.nodes = 16;
  spec.noise_pct = 1.0;
  const Derivation d = derive_baseline(fleet_evidence(spec, dir), Baseline{}, {});
  const Baseline reread = parse_baseline(d.yaml, "derived.yaml");

  fixtures::FleetSpec next = spec;
  next.seed = 99;
  next.faults = {{FaultKind::kMembwSlow, 4, 3, 0, 0.25}};
  const FleetVerdict v = fixtures::certify_fleet(next, reread);
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined), std::vector<std::string>{"node4"});
  EXPECT_EQ(v.count(NodeState::kCertified), 15u);
}

TEST(BaselineDerivation, NodesThatFailHardwareChecksAreNotPeers) {
  fixtures::TempDir dir;
  fixtures::FleetSpec spec;
  spec.nodes = 8;
  spec.faults = {{FaultKind::kEcc, 2, 0, 0, 4}};
  const Derivation d = derive_baseline(fleet_evidence(spec, dir),
                                       fixtures::shipped_baseline("h100-sxm-8gpu-ndr400"), {});
  EXPECT_EQ(d.excluded_nodes, std::vector<std::string>{"node2"});
  EXPECT_EQ(d.baseline.sku, "h100-sxm-8gpu-ndr400");  // from the template
  EXPECT_EQ(d.baseline.gpu_health, fixtures::shipped_baseline("h100-sxm-8gpu-ndr400").gpu_health);
  const auto burn = std::find_if(d.metrics.begin(), d.metrics.end(), [](const DerivedMetric& m) {
    return m.metric == "burn.tflops.gemm_bf16";
  });
  EXPECT_EQ(burn->subjects, 56u);  // 7 nodes x 8 GPUs
}

TEST(BaselineDerivation, NothingToDeriveIsAnError) {
  fixtures::TempDir dir;
  fixtures::FleetSpec spec;
  spec.burn = spec.membw = spec.health = false;
  spec.sizes = {1 << 20};  // below the default 1 GiB
  const Evidence evidence = fleet_evidence(spec, dir);
  EXPECT_THROW((void)derive_baseline(evidence, Baseline{}, {}), UsageError);
  DerivationOptions options;
  options.min_bytes = 1 << 20;
  EXPECT_NO_THROW((void)derive_baseline(evidence, Baseline{}, options));
}

// Node-scope allreduce figures of four nodes, one run per entry of `run_means` (GB/s), each node
// within +-2 of its run's mean.
Evidence runs_of(const std::vector<double>& run_means) {
  const std::vector<std::string> nodes = {"n0", "n1", "n2", "n3"};
  const double offsets[] = {-2, -1, 1, 2};
  std::vector<Json> records;
  for (std::size_t r = 0; r < run_means.size(); ++r) {
    const std::string run = fmt::format("run{}", r + 1);
    records.push_back(fixtures::run_record(nodes, run));
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      records.push_back(fixtures::collective(std::uint64_t{1} << 30, run_means[r] + offsets[n],
                                             "node", nodes[n], {}, run));
    }
  }
  return fixtures::evidence_of(records);
}

const DerivedMetric& node_busbw(const Derivation& d) {
  const auto found = std::find_if(d.metrics.begin(), d.metrics.end(), [](const DerivedMetric& m) {
    return m.metric == "collective.allreduce.busbw.node";
  });
  EXPECT_NE(found, d.metrics.end());
  return *found;
}

TEST(BaselineDerivation, OneRunIsWarnedAboutAndItsFloorIsTheMargin) {
  const Derivation d = derive_baseline(runs_of({400}), Baseline{}, {});
  const DerivedMetric& m = node_busbw(d);
  EXPECT_EQ(m.runs, 1u);
  EXPECT_FALSE(m.run_spread);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_THAT(m.warnings[0], HasSubstr("derived from one run"));
  EXPECT_DOUBLE_EQ(*d.baseline.bound(m.metric)->floor, 360);  // 400 - 10 %
  EXPECT_THAT(d.yaml, HasSubstr("mean of 4 of 4 figures from 1 run"));
  EXPECT_THAT(d.yaml, HasSubstr("warning: derived from one run"));
}

TEST(BaselineDerivation, SeveralRunsSetTheFloorThreeRunStandardDeviationsBelowWhenThatIsFurther) {
  // Run means 390, 400, 410: sd 10, 3 sd = 30 is less than the 10 % margin (40): the margin.
  Derivation d = derive_baseline(runs_of({390, 400, 410}), Baseline{}, {});
  const DerivedMetric& close = node_busbw(d);
  EXPECT_EQ(close.runs, 3u);
  ASSERT_TRUE(close.run_spread);
  EXPECT_DOUBLE_EQ(*close.run_spread, 10);
  EXPECT_TRUE(close.warnings.empty());
  EXPECT_DOUBLE_EQ(*d.baseline.bound(close.metric)->floor, 360);
  EXPECT_THAT(d.yaml, HasSubstr("from 3 runs"));
  EXPECT_THAT(d.yaml, HasSubstr("run-to-run sd 10 GB/s, limit from the margin"));

  // Run means 385, 400, 415 (each figure within 5 % of the mean, none dropped): sd 15, 3 sd =
  // 45 is further than the margin: the floor is 355.
  d = derive_baseline(runs_of({385, 400, 415}), Baseline{}, {});
  const DerivedMetric& spread = node_busbw(d);
  EXPECT_TRUE(spread.dropped.empty());
  EXPECT_DOUBLE_EQ(*spread.run_spread, 15);
  EXPECT_DOUBLE_EQ(*d.baseline.bound(spread.metric)->floor, 355);
  EXPECT_THAT(d.yaml, HasSubstr("run-to-run sd 15 GB/s, limit from 3 sd"));
  EXPECT_TRUE(spread.warnings.empty());  // cv 3.75 %: not high
}

TEST(BaselineDerivation, HighSpreadIsWarnedAboutFromTenPercentOn) {
  // Run-to-run cv just above and at 10 % (outliers are kept: --outlier-pct 50).
  DerivationOptions options;
  options.outlier_pct = 50;
  const DerivedMetric above = node_busbw(derive_baseline(runs_of({355, 400, 445}), {}, options));
  EXPECT_GT(*above.run_spread / above.expected, kHighSpreadCv);
  ASSERT_EQ(above.warnings.size(), 1u);
  EXPECT_THAT(above.warnings[0], HasSubstr("high spread"));
  const DerivedMetric at = node_busbw(derive_baseline(runs_of({360, 400, 440}), {}, options));
  EXPECT_DOUBLE_EQ(*at.run_spread / at.expected, kHighSpreadCv);
  EXPECT_TRUE(at.warnings.empty());
}

}  // namespace
}  // namespace commcert
