#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support.hpp"
#include "validate/suite.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(Suite, ReadsNameAndRequiredChecks) {
  const Suite suite =
      parse_suite("schema: 1\nname: ci\nrequired: [collective.allreduce, burn]\n", "ci.yaml");
  EXPECT_EQ(suite.name, "ci");
  EXPECT_EQ(suite.required, (std::vector<std::string>{"collective.allreduce", "burn"}));
}

TEST(Suite, UnknownCheckNamesFileAndLine) {
  try {
    (void)parse_suite("schema: 1\nname: ci\nrequired:\n  - burn\n  - burnin\n", "ci.yaml");
    FAIL() << "accepted an unknown check";
  } catch (const UsageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("ci.yaml:5:"));
    EXPECT_THAT(error.what(), HasSubstr("unknown check 'burnin'"));
  }
}

TEST(Suite, RejectsUnknownKeysEmptyListsAndOtherSchemas) {
  EXPECT_THROW((void)parse_suite("schema: 1\nname: x\nrequired: [burn]\nstage: []\n", "s"),
               UsageError);
  EXPECT_THROW((void)parse_suite("schema: 1\nname: x\nrequired: []\n", "s"), UsageError);
  EXPECT_THROW((void)parse_suite("schema: 2\nname: x\nrequired: [burn]\n", "s"), UsageError);
  EXPECT_THROW((void)parse_suite("", "s"), UsageError);
}

TEST(Suite, ItsRequiredChecksReplaceTheBaselines) {
  // The baseline wants burn too; the suite only ran the sweep: only the sweep is demanded.
  const Baseline baseline = fixtures::baseline_of(
      "required: [collective.allreduce, burn]\n"
      "checks:\n  collective.allreduce: {min_bytes: 1M}\n");
  const Evidence evidence = fixtures::evidence_of(
      {fixtures::run_record({"n0", "n1"}), fixtures::collective(1 << 20, 1.0)});
  const Suite suite =
      parse_suite("schema: 1\nname: sweep-only\nrequired: [collective.allreduce]\n", "s.yaml");
  const FleetVerdict with_suite = judge(evidence, baseline, &suite);
  EXPECT_EQ(with_suite.count(NodeState::kCertified), 2u);
  EXPECT_EQ(with_suite.suite_name, "sweep-only");
  const FleetVerdict without = judge(evidence, baseline, nullptr);
  EXPECT_EQ(without.count(NodeState::kInconclusive), 2u);
}

}  // namespace
}  // namespace commcert

namespace commcert {
namespace {

constexpr const char* kStages =
    "schema: 1\n"
    "name: s\n"
    "baseline: cpu-mpi-ci\n"
    "stages:\n"
    "  - run: health\n"
    "    budget: 90s\n"
    "  - name: gemm\n"
    "    run: burn\n"
    "    args: [--duration, 10m]\n"
    "    budget: 12m\n"
    "  - name: fabric\n"
    "    run: sweep\n"
    "    args: [all_reduce_perf, alltoall, -b, 1G]\n"
    "    budget: 5m\n"
    "    localize: pairs\n"
    "  - name: extra\n"
    "    run: sweep\n"
    "    args: [broadcast]\n"
    "    budget: 1m\n"
    "    required: false\n";

TEST(SuiteStages, ReadInOrderWithBudgetsAndWhereTheyWereWritten) {
  const Suite suite = parse_suite(kStages, "s.yaml");
  EXPECT_EQ(suite.baseline, "cpu-mpi-ci");
  ASSERT_EQ(suite.stages.size(), 4u);
  EXPECT_EQ(suite.stages[0].name, "health");  // a stage is named after its command by default
  EXPECT_DOUBLE_EQ(suite.stages[0].budget_s, 90.0);
  EXPECT_TRUE(suite.stages[1].needs_gpu);
  EXPECT_EQ(suite.stages[1].args, (std::vector<std::string>{"--duration", "10m"}));
  EXPECT_EQ(suite.stages[1].args_source, "s.yaml:9");
  EXPECT_EQ(suite.stages[2].localize, "pairs");
  EXPECT_FALSE(suite.stages[3].required);
}

TEST(SuiteStages, RequiredChecksFollowTheStagesAndWhatTheBaselineSaysTheNodeHas) {
  const Suite suite = parse_suite(kStages, "s.yaml");
  // 8 GPUs and IB ports unset: GPU and port evidence is required (an unset count is not zero).
  const Baseline gpu_node = fixtures::baseline_of("node: {gpus: 8}\nrequired: [burn]\n");
  EXPECT_EQ(required_checks(suite, gpu_node),
            (std::vector<std::string>{"health.node", "health.gpu", "health.ib", "burn",
                                      "collective.allreduce", "collective.alltoall"}));
  // A CPU node: no GPU or port evidence; the optional stage's broadcast is never required.
  const Baseline cpu_node =
      fixtures::baseline_of("node: {gpus: 0, ib_ports: 0}\nrequired: [collective.allreduce]\n");
  EXPECT_EQ(
      required_checks(suite, cpu_node),
      (std::vector<std::string>{"health.node", "collective.allreduce", "collective.alltoall"}));
}

TEST(SuiteStages, ALinksStageRequiresTheLinksCheckOnAnyNode) {
  const Suite suite = parse_suite(
      "schema: 1\nname: s\nstages:\n  - run: links\n    args: [--sizes, 4M]\n    budget: 1m\n",
      "s.yaml");
  ASSERT_EQ(suite.stages.size(), 1u);
  EXPECT_EQ(suite.stages[0].command, "links");
  EXPECT_FALSE(suite.stages[0].needs_gpu);
  const Baseline cpu_node =
      fixtures::baseline_of("node: {gpus: 0, ib_ports: 0}\nrequired: [links]\n");
  EXPECT_EQ(required_checks(suite, cpu_node), (std::vector<std::string>{"links"}));
}

// A links stage over verbs needs RDMA ports, one with --mem gpu needs GPUs: under a baseline
// that says the node has none the stage is skipped and requires nothing; over MPI it runs
// anywhere. An unset count is not zero: the stage runs and its check is required (fail closed).
TEST(SuiteStages, ALinksStageIsSkippedOnlyWhereTheBaselineSaysItsPartsAreAbsent) {
  const auto links_stage = [](const std::string& args) {
    return parse_suite("schema: 1\nname: s\nstages:\n  - run: links\n    args: [" + args +
                           "]\n    budget: 1m\n",
                       "s.yaml")
        .stages.at(0);
  };
  const Baseline no_ib =
      fixtures::baseline_of("node: {gpus: 8, ib_ports: 0}\nrequired: [health.node]\n");
  const Baseline no_gpu =
      fixtures::baseline_of("node: {gpus: 0, ib_ports: 8}\nrequired: [health.node]\n");
  const Baseline one_ib =
      fixtures::baseline_of("node: {gpus: 8, ib_ports: 1}\nrequired: [health.node]\n");
  const Baseline unset = fixtures::baseline_of("required: [health.node]\n");
  using Checks = std::vector<std::string>;
  for (const std::string verbs : {"--transport, verbs", "--transport=verbs"}) {
    const SuiteStage stage = links_stage(verbs);
    EXPECT_THAT(stage_skip_reason(stage, no_ib).value_or(""), HasSubstr("no RDMA ports per node"));
    EXPECT_EQ(stage_checks(stage, no_ib), Checks{});
    EXPECT_EQ(stage_skip_reason(stage, one_ib), std::nullopt);
    EXPECT_EQ(stage_checks(stage, one_ib), Checks{"links"});
    EXPECT_EQ(stage_checks(stage, unset), Checks{"links"});
  }
  const SuiteStage gpu_memory = links_stage("--transport, verbs, --mem, gpu");
  EXPECT_THAT(stage_skip_reason(gpu_memory, no_gpu).value_or(""), HasSubstr("no GPUs per node"));
  EXPECT_EQ(stage_checks(gpu_memory, no_gpu), Checks{});
  EXPECT_EQ(stage_checks(gpu_memory, one_ib), Checks{"links"});
  EXPECT_EQ(stage_checks(links_stage("--transport, verbs, --mem, host"), no_gpu), Checks{"links"});
  const SuiteStage over_mpi = links_stage("--transport, mpi");
  EXPECT_EQ(stage_skip_reason(over_mpi, no_ib), std::nullopt);
  EXPECT_EQ(stage_checks(over_mpi, no_ib), Checks{"links"});
}

// What a stage requires under a baseline that counts its parts: a health stage asks for port
// evidence when the node has ports; a GPU stage under 0 GPUs is skipped; a flag given without
// its value (a suite `commcert run` would refuse) is read as no value.
TEST(SuiteStages, StageChecksFollowTheCountsAndReadOnlyFlagsWithValues) {
  const auto stage = [](const std::string& run, const std::string& args) {
    return parse_suite("schema: 1\nname: s\nstages:\n  - run: " + run + "\n    args: [" + args +
                           "]\n    budget: 1m\n",
                       "s.yaml")
        .stages.at(0);
  };
  using Checks = std::vector<std::string>;
  const Baseline ib_node =
      fixtures::baseline_of("node: {gpus: 8, ib_ports: 8}\nrequired: [health.node]\n");
  EXPECT_EQ(stage_checks(stage("health", ""), ib_node),
            (Checks{"health.node", "health.gpu", "health.ib"}));
  const Baseline cpu_node =
      fixtures::baseline_of("node: {gpus: 0, ib_ports: 0}\nrequired: [health.node]\n");
  EXPECT_THAT(stage_skip_reason(stage("burn", ""), cpu_node).value_or(""),
              HasSubstr("no GPUs per node"));
  EXPECT_EQ(stage_skip_reason(stage("burn", ""), ib_node), std::nullopt);
  for (const char* dangling : {"--transport", "--mem"}) {
    EXPECT_EQ(stage_skip_reason(stage("links", dangling), cpu_node), std::nullopt) << dangling;
    EXPECT_EQ(stage_checks(stage("links", dangling), cpu_node), Checks{"links"}) << dangling;
  }
}

TEST(SuiteStages, MistakesNameTheLineAndKey) {
  const auto error_of = [](const std::string& stages) {
    try {
      (void)parse_suite("schema: 1\nname: s\nstages:\n" + stages, "s.yaml");
    } catch (const UsageError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(error_of("  - run: sweep\n    budget: 1m\n    localize: rings\n"),
              AllOf(HasSubstr("s.yaml:6:"), HasSubstr("'pairs' or 'bisect'")));
  EXPECT_EQ(error_of("  - run: sweep\n    budget: 1m\n    localize: bisect\n"), "accepted");
  // One bisecting stage a run; pairs beside it, as often as wanted.
  const std::string bisecting = "  - run: sweep\n    budget: 1m\n    localize: bisect\n";
  const std::string second = "  - name: again\n    run: sweep\n    budget: 1m\n";
  EXPECT_EQ(error_of(bisecting + second + "    localize: pairs\n"), "accepted");
  EXPECT_THAT(error_of(bisecting + second + "    localize: bisect\n"),
              AllOf(HasSubstr("s.yaml:10:"), HasSubstr("stages[1].localize"),
                    HasSubstr("a run bisects once, and stage 'sweep' already does")));
  EXPECT_THAT(error_of("  - run: health\n    budget: 1m\n    localize: bisect\n"),
              HasSubstr("only a sweep stage localizes"));
  EXPECT_THAT(error_of("  - run: health\n    budget: 1m\n    localize: pairs\n"),
              HasSubstr("only a sweep stage localizes"));
  EXPECT_THAT(error_of("  - run: health\n    budget: 0s\n"), HasSubstr("longer than 0 s"));
  EXPECT_THAT(error_of("  - run: health\n    budget: 2600000h\n"),
              AllOf(HasSubstr("s.yaml:5:"), HasSubstr("longer than the limit of 8760h")));
  EXPECT_THAT(error_of("  - run: health\n    budget: 1m\n    required: maybe\n"),
              HasSubstr("s.yaml:6:"));
  EXPECT_THAT(error_of("  - run: health\n    budget: 1m\n    required: false\n"),
              HasSubstr("requires nothing"));
  EXPECT_THAT(error_of("  run: health\n"), HasSubstr("expected a list of stages"));
  // A repeated key used to be accepted (yaml-cpp reads the first): the budget given last lost.
  EXPECT_THAT(error_of("  - run: health\n    budget: 1m\n    budget: 2h\n"),
              HasSubstr("s.yaml:6:5: stages[0].budget: duplicate key"));
}

std::string stages_of(std::size_t count) {
  std::string text = "schema: 1\nname: s\nstages:\n";
  for (std::size_t i = 0; i < count; ++i)
    text += "  - {name: s" + std::to_string(i) + ", run: health, budget: 1s}\n";
  return text;
}

// A 120,000-stage suite took 32 s and 1.1 GB to plan (the duplicate-name check compared every
// stage with every earlier one). Stage names are now checked through a set, and a suite has at
// most kMaxSuiteStages stages.
TEST(SuiteStages, AtMostAThousandStages) {
  ASSERT_EQ(kMaxSuiteStages, 1000u);
  EXPECT_EQ(parse_suite(stages_of(999), "s.yaml").stages.size(), 999u);
  EXPECT_EQ(parse_suite(stages_of(1000), "s.yaml").stages.size(), 1000u);
  try {
    (void)parse_suite(stages_of(1001), "s.yaml");
    ADD_FAILURE() << "a 1001-stage suite was accepted";
  } catch (const UsageError& error) {
    EXPECT_THAT(error.what(),
                HasSubstr("s.yaml:4:3: stages: 1001 stages, more than the 1000 a suite may have"));
  }
  // Two stages of one name are still found, the last of a thousand included.
  std::string twice = stages_of(1000);
  twice.replace(twice.rfind("name: s999"), 10, "name: s000");
  twice.replace(twice.find("name: s0,"), 9, "name: s000,");
  EXPECT_THAT(
      [&] {
        try {
          (void)parse_suite(twice, "s.yaml");
        } catch (const UsageError& error) {
          return std::string(error.what());
        }
        return std::string("accepted");
      }(),
      HasSubstr("'s000' names two stages"));
}

}  // namespace
}  // namespace commcert
