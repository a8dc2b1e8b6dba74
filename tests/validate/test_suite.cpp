#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support.hpp"
#include "validate/suite.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

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
