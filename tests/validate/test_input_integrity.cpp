// Lost input, as the input-integrity rule reports it: which lost lines count (unreadable,
// truncated, too new: never a note such as an unknown kind), whose nodes they hold back, and the
// reason's file, line and count of further lines.

#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/record_reader.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;

const Baseline& burn_baseline() {
  static const Baseline b = fixtures::baseline_of("required: [burn]\n");
  return b;
}

// Certifies records.jsonl holding `lines` as written.
FleetVerdict certify_lines(const std::vector<std::string>& lines) {
  fixtures::TempDir dir;
  std::string text;
  for (const auto& line : lines)
    text += line + "\n";
  const auto file = dir.write("records.jsonl", text);
  Evidence evidence;
  RecordReader reader(evidence);
  reader.read_file(file);
  evidence.finish();
  return fixtures::certify(evidence, burn_baseline());
}

std::string unreadable_burn(const std::string& host, int gpu) {
  Json r = fixtures::burn(host, gpu, 700);
  r["tflops"] = "fast";
  return r.dump();
}

TEST(InputIntegrityRule, TheReasonNamesTheFirstLostLineAndCountsTheRest) {
  const std::string good = fixtures::burn("n0", 0, 700).dump();
  const auto lost_reason = [&](std::size_t lost_lines) {
    std::vector<std::string> lines = {good};
    for (std::size_t i = 0; i < lost_lines; ++i)
      lines.push_back(unreadable_burn("n0", static_cast<int>(i) + 1));
    const FleetVerdict v = certify_lines(lines);
    return fixtures::reason(fixtures::node(v, "n0"), "input.unparsable");
  };
  const Reason one = lost_reason(1);
  EXPECT_THAT(one.message, HasSubstr("records.jsonl:2: unreadable record ("));
  EXPECT_THAT(one.message, ::testing::Not(HasSubstr("more such lines")));
  EXPECT_EQ(one.check, "input");
  EXPECT_EQ(one.rule, "rule.input_integrity");
  ASSERT_EQ(one.evidence.size(), 1u);
  EXPECT_EQ(one.evidence[0].line, 2u);
  EXPECT_THAT(one.evidence[0].file, EndsWith("records.jsonl"));
  const Reason two = lost_reason(2);
  EXPECT_THAT(two.message, HasSubstr("records.jsonl:2: unreadable record ("));
  EXPECT_THAT(two.message, EndsWith("; 1 more such lines); its evidence is lost"));
  EXPECT_THAT(lost_reason(3).message, EndsWith("; 2 more such lines); its evidence is lost"));
}

TEST(InputIntegrityRule, EveryNodeWithALostLineIsHeldBack) {
  const FleetVerdict v = certify_lines(
      {unreadable_burn("n0", 0), unreadable_burn("n1", 0), fixtures::burn("n2", 0, 700).dump()});
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kInconclusive),
            (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified), (std::vector<std::string>{"n2"}));
}

// A record of a newer schema is lost as such; a record of a kind this validator does not judge
// is a note, and holds back nobody.
TEST(InputIntegrityRule, ATooNewRecordIsLostAnUnknownKindIsANote) {
  Json future = fixtures::burn("n0", 1, 700);
  future["schema"] = 99;
  const FleetVerdict too_new = certify_lines({fixtures::burn("n0", 0, 700).dump(), future.dump()});
  EXPECT_THAT(fixtures::codes(fixtures::node(too_new, "n0")),
              ElementsAre("input.unsupported_schema"));
  Json unknown = fixtures::record("frobnicate", "n0");
  const FleetVerdict noted = certify_lines({fixtures::burn("n0", 0, 700).dump(), unknown.dump()});
  EXPECT_EQ(fixtures::node(noted, "n0").state, NodeState::kCertified);
}

// `sweep --target-ci`: a measurement that stopped before the interval asked for is a note per
// run and collective naming the widest interval reached; at the target or inside it, none. The
// note changes no verdict: an interval is about precision, not about the node.
TEST(TargetCi, AMeasurementThatMissedItsTargetIsANoteAndChangesNoVerdict) {
  const auto with_ci = [](std::uint64_t bytes, std::optional<double> achieved) {
    Json r = fixtures::collective(bytes, 480);
    r["adaptive"] = {{"target_ci_pct", 1.0},
                     {"achieved_ci_pct", achieved ? Json(*achieved) : Json(nullptr)},
                     {"stopped_by", achieved && *achieved <= 1.0 ? "ci" : "budget"}};
    return r;
  };
  const auto notes_of = [](const std::vector<Json>& records) {
    const FleetVerdict v =
        fixtures::certify(fixtures::evidence_of(records),
                          fixtures::baseline_of("required: [collective.allreduce]\n"));
    std::vector<std::string> out;
    for (const auto& note : v.notes) {
      if (note.code == "measurement.target_ci_missed") out.push_back(note.message);
    }
    return out;
  };
  EXPECT_THAT(notes_of({fixtures::run_record({"n0"}), with_ci(1 << 20, 0.99)}), ElementsAre());
  EXPECT_THAT(notes_of({fixtures::run_record({"n0"}), with_ci(1 << 20, 1.0)}), ElementsAre());
  EXPECT_THAT(notes_of({fixtures::run_record({"n0"}), with_ci(1 << 20, 1.01)}),
              ElementsAre("run run1: allreduce did not reach its target CI of ±1% in 1 "
                          "measurement(s); the widest: ±1.01% at 1 MiB (stopped by budget)"));
  EXPECT_THAT(notes_of({fixtures::run_record({"n0"}), with_ci(1 << 20, 1.5),
                        with_ci(4 << 20, std::nullopt), with_ci(8 << 20, 0.5)}),
              ElementsAre(HasSubstr("in 2 measurement(s); the widest: no interval (too few "
                                    "samples) at 4 MiB")));
  const FleetVerdict missed = fixtures::certify(
      fixtures::evidence_of({fixtures::run_record({"n0"}), with_ci(1 << 20, 3.0)}),
      fixtures::baseline_of("required: [collective.allreduce]\n"));
  const FleetVerdict met = fixtures::certify(
      fixtures::evidence_of({fixtures::run_record({"n0"}), with_ci(1 << 20, 0.5)}),
      fixtures::baseline_of("required: [collective.allreduce]\n"));
  EXPECT_EQ(fixtures::node(missed, "n0").state, fixtures::node(met, "n0").state);
}

}  // namespace
}  // namespace commcert
