#include <set>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support.hpp"
#include "validate/baseline.hpp"
#include "validate/metrics.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

// The error text a user sees for `yaml`: it must name the file and line.
std::string error_of(const std::string& yaml) {
  try {
    (void)parse_baseline(yaml, "bad.yaml");
  } catch (const UsageError& error) {
    return error.what();
  }
  return "(accepted)";
}

constexpr const char* kHead = "schema: 1\nsku: x\nrequired: [collective.allreduce]\n";

TEST(Baseline, ShippedBaselinesLoadWithTheirFloors) {
  for (const char* name :
       {"h100-sxm-8gpu-ndr400", "h200-sxm-8gpu-ndr400", "a100-sxm-8gpu-hdr200", "cpu-mpi-ci"}) {
    SCOPED_TRACE(name);
    const Baseline b = fixtures::shipped_baseline(name);
    EXPECT_EQ(b.sku, name);
    EXPECT_FALSE(b.required.empty());
    const Bound* busbw = b.bound(b.sku == "cpu-mpi-ci" ? "collective.allreduce.busbw.cluster"
                                                       : "collective.allreduce.busbw.node");
    ASSERT_NE(busbw, nullptr);
    EXPECT_TRUE(busbw->floor.has_value());
  }
  const Baseline h100 = fixtures::shipped_baseline("h100-sxm-8gpu-ndr400");
  EXPECT_EQ(*h100.bound("collective.allreduce.busbw.node")->floor, 460);  // AzNHC
  EXPECT_EQ(*h100.bound("membw.copy")->floor, 1905);                      // DCGM diag-skus
  EXPECT_EQ(*h100.bound("health.ib.rate")->equals, 400);
  EXPECT_EQ(h100.gpus_per_node, 8);
  EXPECT_EQ(h100.collective("collective.allreduce")->min_bytes, std::uint64_t{1} << 30);
}

TEST(Baseline, ReadsBoundsLimitsAndFleetSettings) {
  const Baseline b = parse_baseline(std::string(kHead) +
                                        "fleet: {min_nodes: 4, max_deficit_pct: 7}\n"
                                        "node: {gpus: 8, ib_ports: 4}\n"
                                        "checks:\n"
                                        "  collective.allreduce:\n"
                                        "    min_bytes: 64M\n"
                                        "    straggler: true\n"
                                        "    busbw_gb_per_s:\n"
                                        "      node: {floor: 10, expected: 12, fleet: false}\n"
                                        "  burn:\n"
                                        "    tflops:\n"
                                        "      gemm_fp8: {floor: 1000}\n"
                                        "  health.gpu:\n"
                                        "    xid_fatal: [79]\n"
                                        "    max_correctable_ecc: 100\n",
                                    "b.yaml");
  EXPECT_EQ(b.fleet.min_nodes, 4);
  EXPECT_DOUBLE_EQ(b.fleet.max_deficit_pct, 7);
  EXPECT_EQ(b.ib_ports_per_node, 4);
  EXPECT_EQ(b.collective("collective.allreduce")->min_bytes, std::uint64_t{64} << 20);
  EXPECT_TRUE(b.collective("collective.allreduce")->straggler.has_value());
  const Bound* node = b.bound("collective.allreduce.busbw.node");
  ASSERT_NE(node, nullptr);
  EXPECT_FALSE(node->fleet.enabled);
  EXPECT_EQ(node->source, "b.yaml:11");
  ASSERT_NE(b.bound("burn.tflops.gemm_fp8"), nullptr);
  EXPECT_TRUE(b.bound("burn.tflops.gemm_fp8")->fleet.enabled);  // inherits the top-level fleet
  EXPECT_EQ(b.bound("burn.tflops.gemm_fp8")->fleet.min_nodes, 4);
  EXPECT_EQ(b.gpu_health.xid_fatal, std::vector<int>{79});
  EXPECT_EQ(b.gpu_health.max_correctable_ecc, 100);
  EXPECT_EQ(b.gpu_health.remapped_rows_warn, 512);  // DCGM default kept
}

// A health rule's limit is declared in the rule's own file; the baseline reads, defaults and
// writes it from that declaration alone.
TEST(Baseline, RuleDeclaredLimitsAreReadDefaultedAndWritten) {
  const auto declared = declared_gpu_count_limits();
  ASSERT_FALSE(declared.empty());
  std::set<std::string_view> keys;
  for (const GpuCountLimit& limit : declared)
    EXPECT_TRUE(keys.insert(limit.key).second) << "declared twice: " << limit.key;
  const GpuCountLimit& first = declared.front();

  const Baseline defaults = parse_baseline(kHead, "b.yaml");
  EXPECT_EQ(defaults.gpu_health.count(first), first.default_value);

  const std::string key(first.key);
  const Baseline set =
      parse_baseline(std::string(kHead) + "checks:\n  health.gpu:\n    " + key + ": 7\n", "b.yaml");
  EXPECT_EQ(set.gpu_health.count(first), 7);
  EXPECT_NE(set.gpu_health, defaults.gpu_health);
  EXPECT_THAT(baseline_to_yaml(set), HasSubstr(key + ": 7"));
  EXPECT_THAT(error_of(std::string(kHead) + "checks:\n  health.gpu:\n    " + key + ": -1\n"),
              HasSubstr("bad.yaml:6"));
}

TEST(Baseline, YamlSyntaxErrorNamesFileAndLine) {
  EXPECT_THAT(error_of(std::string(kHead) + "checks:\n  burn: x: y\n"),
              HasSubstr("bad.yaml:5:10: YAML syntax error"));
  // An unclosed bracket is found where the input ends.
  EXPECT_THAT(error_of(std::string(kHead) + "checks:\n  burn: {tflops: [1, 2\n"),
              HasSubstr("bad.yaml:6:"));
  EXPECT_THAT(error_of("schema: 1\nsku: [unclosed\n"), HasSubstr("YAML syntax error"));
}

TEST(Baseline, WrongTypeNamesFileLineAndKey) {
  const std::string e = error_of(
      std::string(kHead) +
      "checks:\n  collective.allreduce:\n    busbw_gb_per_s:\n      node: {floor: fast}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:7:"));
  EXPECT_THAT(e, HasSubstr("checks.collective.allreduce.busbw_gb_per_s.node.floor"));
  EXPECT_THAT(e, HasSubstr("expected a number, got 'fast'"));
  EXPECT_THAT(error_of(std::string(kHead) + "node: {gpus: eight}\n"), HasSubstr("bad.yaml:4:"));
  EXPECT_THAT(error_of(std::string(kHead) + "checks:\n  health.gpu:\n    xid_fatal: 48\n"),
              HasSubstr("bad.yaml:6:"));
}

TEST(Baseline, UnknownCheckNamesFileAndLine) {
  const std::string e =
      error_of(std::string(kHead) + "checks:\n  colective.allreduce: {min_bytes: 1G}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:5:"));
  EXPECT_THAT(e, HasSubstr("unknown check"));
  EXPECT_THAT(error_of("schema: 1\nsku: x\nrequired: [burn, bern]\n"), HasSubstr("bad.yaml:3:"));
}

TEST(Baseline, UnknownKeysKernelsAndScopesAreErrors) {
  EXPECT_THAT(
      error_of(std::string(kHead) + "checks:\n  burn:\n    tflops:\n      gemm_int4: {floor: 1}\n"),
      HasSubstr("bad.yaml:7:"));
  EXPECT_THAT(
      error_of(std::string(kHead) +
               "checks:\n  collective.allreduce:\n    busbw_gb_per_s:\n      rack: {floor: 1}\n"),
      HasSubstr("unknown name"));
  EXPECT_THAT(error_of(std::string(kHead) + "checks:\n  membw:\n    copy_gbps: {floor: 1}\n"),
              HasSubstr("unknown key"));
  EXPECT_THAT(error_of(std::string(kHead) + "flet: {}\n"), HasSubstr("bad.yaml:4:"));
}

TEST(Baseline, InconsistentBoundsAreErrors) {
  const std::string prefix = std::string(kHead) + "checks:\n  membw:\n    copy_gb_per_s: ";
  EXPECT_THAT(error_of(prefix + "{floor: 10, ceiling: 5}\n"),
              HasSubstr("floor is above the ceiling"));
  EXPECT_THAT(error_of(prefix + "{floor: 10, expected: 5}\n"),
              HasSubstr("expected is below the floor"));
  EXPECT_THAT(error_of(prefix + "{expected: 10, warn_band_pct: 5}\n"), HasSubstr("needs a floor"));
  EXPECT_THAT(error_of(prefix + "{floor: 10, max_regression_pct: 5}\n"),
              HasSubstr("needs `expected`"));
  EXPECT_THAT(error_of(prefix + "{floor: 10, warn_band_pct: 120}\n"), HasSubstr("percentage"));
  EXPECT_THAT(error_of(prefix + "{}\n"), HasSubstr("empty bound"));
}

// A negative floor passes every value: it was accepted and certified anything.
TEST(Baseline, AFloorIsZeroOrMore) {
  const std::string prefix = std::string(kHead) + "checks:\n  membw:\n    copy_gb_per_s: ";
  EXPECT_EQ(error_of(prefix + "{floor: 0}\n"), "(accepted)");
  EXPECT_EQ(error_of(prefix + "{floor: 0.001}\n"), "(accepted)");
  const std::string e = error_of(prefix + "{floor: -0.001}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:6:"));
  EXPECT_THAT(e, HasSubstr("checks.membw.copy_gb_per_s.floor: must be 0 or more, got -0.001"));
  EXPECT_THAT(error_of(prefix + "{floor: -1}\n"), HasSubstr("must be 0 or more"));
}

// A PCIe minimum past any real link was read into an int: 4294967301 became gen5.
TEST(Baseline, APcieMinimumIsARealGenerationOrWidth) {
  const std::string prefix = std::string(kHead) + "checks:\n  health.gpu:\n    ";
  EXPECT_EQ(error_of(prefix + "pcie_min_gen: 16\n"), "(accepted)");
  EXPECT_THAT(error_of(prefix + "pcie_min_gen: 17\n"),
              HasSubstr("checks.health.gpu.pcie_min_gen: must be 16 or less"));
  EXPECT_THAT(error_of(prefix + "pcie_min_gen: 4294967301\n"), HasSubstr("must be 16 or less"));
  EXPECT_EQ(error_of(prefix + "pcie_min_width: 64\n"), "(accepted)");
  EXPECT_THAT(error_of(prefix + "pcie_min_width: 65\n"),
              HasSubstr("checks.health.gpu.pcie_min_width: must be 64 or less"));
  EXPECT_THAT(error_of(prefix + "pcie_min_width: -1\n"), HasSubstr("must be 0 or more"));
}

// yaml-cpp keeps both entries of a repeated key and reads the first: `floor` given twice judged
// against whichever came first, silently.
TEST(Baseline, ARepeatedKeyIsRefusedWhereItIsRepeated) {
  const std::string e = error_of(std::string(kHead) +
                                 "checks:\n  membw:\n    copy_gb_per_s:\n      floor: 1900\n"
                                 "      floor: 19\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:8:7: checks.membw.copy_gb_per_s.floor: duplicate key"));
  EXPECT_THAT(e, HasSubstr("at bad.yaml:7"));
  EXPECT_THAT(error_of(std::string(kHead) + "sku: y\n"),
              HasSubstr("bad.yaml:4:1: sku: duplicate key"));
  EXPECT_THAT(
      error_of(std::string(kHead) + "checks:\n  membw:\n    copy_gb_per_s: {floor: 1, floor: 2}\n"),
      HasSubstr("duplicate key"));
  // The same key in different mappings is not a repeat.
  EXPECT_EQ(
      error_of(std::string(kHead) +
               "checks:\n  membw:\n    copy_gb_per_s: {floor: 1}\n    read_gb_per_s: {floor: 1}\n"),
      "(accepted)");
}

TEST(Baseline, AliasBombsAreRefusedNotWalkedForever) {
  // Each level doubles the entries a walk sees; 25 levels are 2^25 (33 million) of them.
  std::string yaml = std::string(kHead) + "x0: &a0 [1, 1]\n";
  for (int i = 1; i <= 25; ++i)
    yaml += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) +
            ", *a" + std::to_string(i - 1) + "]\n";
  EXPECT_THAT(error_of(yaml), HasSubstr("more than 1000000 entries"));
}

TEST(Baseline, PairRulesAreReadAndCheckedWithTheirLine) {
  const Baseline b = parse_baseline(
      std::string(kHead) +
          "checks:\n  collective.allreduce:\n    pairs: {max_deficit_pct: 30, floor_gb_per_s: 40, "
          "min_pairs: 4}\n",
      "b.yaml");
  const CollectiveSpec* spec = b.collective("collective.allreduce");
  ASSERT_NE(spec, nullptr);
  EXPECT_DOUBLE_EQ(spec->pairs.max_deficit_pct, 30.0);
  EXPECT_EQ(spec->pairs.floor_gb_per_s, 40.0);
  EXPECT_EQ(spec->pairs.min_pairs, 4);
  const std::string prefix = std::string(kHead) + "checks:\n  collective.allreduce:\n    pairs: ";
  EXPECT_THAT(error_of(prefix + "{max_deficit_pct: 100}\n"), HasSubstr("bad.yaml:6:"));
  EXPECT_THAT(error_of(prefix + "{min_pairs: 1}\n"), HasSubstr("2 or more"));
  EXPECT_THAT(error_of(prefix + "{floor: 3}\n"), HasSubstr("unknown key"));
  EXPECT_THAT(error_of(prefix + "{floor_gb_per_s: -1}\n"), HasSubstr("must be positive"));
}

TEST(Baseline, MissingPartsAreErrors) {
  EXPECT_THAT(error_of("sku: x\nrequired: [burn]\n"), HasSubstr("schema"));
  EXPECT_THAT(error_of("schema: 1\nrequired: [burn]\n"), HasSubstr("sku: missing"));
  EXPECT_THAT(error_of("schema: 1\nsku: x\n"), HasSubstr("required: missing"));
  EXPECT_THAT(error_of("schema: 1\nsku: x\nrequired: []\n"), HasSubstr("certifies nothing"));
  EXPECT_THAT(error_of("schema: 2\nsku: x\nrequired: [burn]\n"), HasSubstr("baseline schema 1"));
  EXPECT_THAT(error_of(""), HasSubstr("empty"));
}

TEST(Baseline, MissingFileIsAUsageError) {
  EXPECT_THROW((void)load_baseline("/nonexistent/baseline.yaml"), UsageError);
}

// `commcert baseline` writes what `certify` reads: the YAML writer and reader agree.
TEST(Baseline, WrittenYamlReadsBackEqual) {
  for (const char* name : {"h100-sxm-8gpu-ndr400", "a100-sxm-8gpu-hdr200", "cpu-mpi-ci"}) {
    SCOPED_TRACE(name);
    Baseline original = fixtures::shipped_baseline(name);
    Baseline reread = parse_baseline(
        baseline_to_yaml(
            original, {{"", "header\nsecond line"}, {"checks.membw.copy_gb_per_s.floor", "note"}}),
        "written.yaml");
    for (auto* b : {&original, &reread}) {
      b->path.clear();
      for (auto& [id, bound] : b->bounds)
        bound.source.clear();
    }
    EXPECT_EQ(reread.sku, original.sku);
    EXPECT_EQ(reread.required, original.required);
    EXPECT_EQ(reread.bounds, original.bounds);
    EXPECT_EQ(reread.collectives, original.collectives);
    EXPECT_EQ(reread.gpu_health, original.gpu_health);
    EXPECT_EQ(reread.ib_health, original.ib_health);
    EXPECT_EQ(reread.gpus_per_node, original.gpus_per_node);
    EXPECT_EQ(reread.fleet, original.fleet);
  }
}

TEST(Metrics, CatalogMapsIdsAndYamlKeys) {
  const auto info = metric_info("collective.allgather.busbw.cluster");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->check, "collective.allgather");
  EXPECT_EQ(info->yaml_path, "busbw_gb_per_s.cluster");
  EXPECT_EQ(info->unit, "GB/s");
  EXPECT_EQ(metric_at("burn", "tflops.gemm_bf16")->id, "burn.tflops.gemm_bf16");
  EXPECT_EQ(metric_at("membw", "h2d_gb_per_s")->id, "membw.h2d");
  EXPECT_FALSE(metric_info("burn.tflops.gemm_int4"));
  EXPECT_FALSE(metric_at("membw", "tflops.gemm_bf16"));
}

}  // namespace
}  // namespace commcert
