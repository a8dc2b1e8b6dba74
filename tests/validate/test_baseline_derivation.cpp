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

}  // namespace
}  // namespace commcert
