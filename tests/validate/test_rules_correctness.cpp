#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

using fixtures::collective;
using fixtures::run_record;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Baseline& cpu_like() {
  static const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nfleet: {enabled: false}\n"
      "checks:\n  collective.allreduce:\n    min_bytes: 1M\n"
      "    straggler: {min_lead_pct: 25, min_share_pct: 80, min_records: 4}\n"
      "    busbw_gb_per_s:\n      cluster: {floor: 0.001}\n");
  return b;
}

std::vector<std::string> finding_nodes(const Evidence& e, const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings)
    out.push_back(e.node_name(f.node) + ":" + f.code.str());
  return out;
}

TEST(CollectiveWrongDataRule, QuarantinesExactlyTheNodeOfTheWrongRank) {
  const Evidence e = fixtures::evidence_of(
      {run_record({"n0", "n1", "n2", "n3"}), collective(1 << 20, 1.0, "cluster", "n0", {{2, "n2"}}),
       collective(2 << 20, 1.0, "cluster", "n0", {{2, "n2"}})});
  const auto findings = fixtures::run_rule("rule.collective_wrong_data", e, cpu_like());
  ASSERT_THAT(finding_nodes(e, findings), ElementsAre("n2:collective.wrong_data"));
  const auto& f = findings[0];
  EXPECT_EQ(f.check, "collective.allreduce");
  EXPECT_EQ(f.measured, 200);  // summed over both records
  EXPECT_EQ(f.evidence.size(), 2u);
  const FleetVerdict v = fixtures::certify(e, cpu_like());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined), std::vector<std::string>{"n2"});
  EXPECT_EQ(fixtures::node(v, "n2").severity, Severity::kIsolate);
  EXPECT_THAT(
      fixtures::node(v, "n2").first_reason()->message,
      HasSubstr(
          "allreduce: 200 wrong elements from rank 2 in 2 record(s), first at 1 MiB out-of-place"));
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified),
            (std::vector<std::string>{"n0", "n1", "n3"}));
  EXPECT_EQ(v.exit_status(), 1);
}

TEST(CollectiveWrongDataRule, SeveralWrongRanksOfOneNodeInOneRecordAreOneRecord) {
  // Ranks 2 and 3 both run on n2: one record, one node, both ranks named; no wrong element is
  // allowed (the limit verdict.json shows is 0).
  const Evidence e =
      fixtures::evidence_of({run_record({"n0", "n1", "n2", "n2"}),
                             collective(1 << 20, 1.0, "cluster", "n0", {{2, "n2"}, {3, "n2"}})});
  const auto findings = fixtures::run_rule("rule.collective_wrong_data", e, cpu_like());
  ASSERT_THAT(finding_nodes(e, findings), ElementsAre("n2:collective.wrong_data"));
  EXPECT_EQ(findings[0].measured, 200);
  EXPECT_EQ(findings[0].limit, std::optional<double>(0));
  const FleetVerdict v = fixtures::certify(e, cpu_like());
  EXPECT_THAT(fixtures::node(v, "n2").first_reason()->message,
              HasSubstr("200 wrong elements from rank 2, 3 in 1 record(s)"));
}

TEST(CollectiveWrongDataRule, WrongDataOnEveryNodeCannotBeBlamedOnOne) {
  const Evidence e =
      fixtures::evidence_of({run_record({"n0", "n1"}),
                             collective(1 << 20, 1.0, "cluster", "n0", {{0, "n0"}, {1, "n1"}})});
  const auto findings = fixtures::run_rule("rule.collective_wrong_data", e, cpu_like());
  EXPECT_THAT(finding_nodes(e, findings), ElementsAre("n0:collective.wrong_data_everywhere",
                                                      "n1:collective.wrong_data_everywhere"));
  const FleetVerdict v = fixtures::certify(e, cpu_like());
  EXPECT_EQ(v.count(NodeState::kInconclusive), 2u);
  EXPECT_EQ(v.exit_status(), 3);
}

TEST(CollectiveWrongDataRule, NodeScopeRecordsBlameTheirOwnNode) {
  const Evidence e = fixtures::evidence_of({collective(1 << 20, 1.0, "node", "n5", {{40, "n5"}})});
  EXPECT_THAT(finding_nodes(e, fixtures::run_rule("rule.collective_wrong_data", e, cpu_like())),
              ElementsAre("n5:collective.wrong_data"));
}

TEST(CollectiveWrongDataRule, AFailWithoutAWrongRankIsInconclusiveForTheRun) {
  Json c = collective(1 << 20, 1.0);
  c["status"] = "fail";
  c["reason"] = "mysterious";
  const Evidence e = fixtures::evidence_of({run_record({"n0", "n1"}), c});
  EXPECT_THAT(finding_nodes(e, fixtures::run_rule("rule.collective_wrong_data", e, cpu_like())),
              ElementsAre("n0:collective.fail_unattributed", "n1:collective.fail_unattributed"));
}

// Each reason as the report prints it, with its check, rule, unit and record; every record of
// a run is judged after one with wrong data everywhere, and every wrong node is a reason. A
// failure that names no wrong rank and gives no reason says so.
TEST(CollectiveWrongDataRule, EveryReasonSaysWhatHappenedWhereAndWhichRecordShowsIt) {
  Json silent_fail = collective(4 << 20, 1.0);
  silent_fail["status"] = "fail";
  silent_fail.erase("reason");
  const Evidence e = fixtures::evidence_of(
      {run_record({"n0", "n1", "n2", "n3"}),
       collective(1 << 20, 1.0, "cluster", "n0", {{0, "n0"}, {1, "n1"}, {2, "n2"}, {3, "n3"}}),
       collective(2 << 20, 1.0, "cluster", "n0", {{2, "n2"}}),
       collective(2 << 20, 1.0, "cluster", "n0", {{3, "n3"}}), silent_fail});
  const FleetVerdict v = fixtures::certify(e, cpu_like());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined), (std::vector<std::string>{"n2", "n3"}));
  const Reason& wrong = fixtures::reason(fixtures::node(v, "n2"), "collective.wrong_data");
  EXPECT_EQ(wrong.message,
            "allreduce: 100 wrong elements from rank 2 in 1 record(s), first at 2 MiB out-of-place "
            "(run run1)");
  EXPECT_EQ(wrong.check, "collective.allreduce");
  EXPECT_EQ(wrong.rule, "rule.collective_wrong_data");
  EXPECT_EQ(wrong.unit, "elements");
  EXPECT_EQ(wrong.evidence.size(), 1u);
  const Reason& everywhere =
      fixtures::reason(fixtures::node(v, "n0"), "collective.wrong_data_everywhere");
  EXPECT_EQ(everywhere.message,
            "allreduce: every node of the 4-node run run1 returned wrong data; the fault spread "
            "through the reduction and cannot be pinned on one node");
  EXPECT_EQ(everywhere.check, "collective.allreduce");
  EXPECT_EQ(everywhere.rule, "rule.collective_wrong_data");
  EXPECT_EQ(everywhere.evidence.size(), 1u);
  const FleetVerdict failed =
      fixtures::certify(fixtures::evidence_of({run_record({"n0", "n1"}), silent_fail}), cpu_like());
  EXPECT_EQ(
      fixtures::reason(fixtures::node(failed, "n1"), "collective.fail_unattributed").message,
      "allreduce: run run1 reported a failure without naming a rank: a failure with no wrong rank "
      "named");
}

// The reason keeps the first three records (a node wrong in five records of a run).
TEST(CollectiveWrongDataRule, TheReasonKeepsTheFirstThreeRecords) {
  std::vector<Json> records = {run_record({"n0", "n1", "n2", "n3"})};
  for (int i = 0; i < 5; ++i)
    records.push_back(collective(std::uint64_t{1} << (20 + i), 1.0, "cluster", "n0", {{2, "n2"}}));
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), cpu_like());
  const Reason& r = fixtures::reason(fixtures::node(v, "n2"), "collective.wrong_data");
  EXPECT_EQ(r.evidence.size(), 3u);
  EXPECT_THAT(r.message, HasSubstr("in 5 record(s), first at 1 MiB"));
}

Json timeout(const std::vector<std::pair<int, std::string>>& not_arrived, bool attributed = true) {
  Json t = fixtures::record("collective", "n0", "timeout");
  t["backend"] = "mpi";
  t["scope"] = "cluster";
  t["operation"] = "allreduce float sum 64 KiB out-of-place";
  t["timeout_s"] = 30;
  t["nranks"] = 3;
  Json na = Json::array();
  for (const auto& [rank, host] : not_arrived)
    na.push_back({{"rank", rank}, {"host", host}});
  t["not_arrived"] = na;
  t["attributed"] = attributed;
  t["rank_states"] = Json::array();
  for (int r = 0; r < 3; ++r) {
    t["rank_states"].push_back({{"rank", r},
                                {"host", "n" + std::to_string(r)},
                                {"responded", true},
                                {"operations_begun", 3},
                                {"inside_operation", true}});
  }
  return t;
}

TEST(CollectiveTimeoutRule, RanksThatDidNotArriveQuarantineTheirNode) {
  const Evidence e = fixtures::evidence_of({run_record({"n0", "n1", "n2"}), timeout({{1, "n1"}})});
  const auto findings = fixtures::run_rule("rule.collective_timeout", e, cpu_like());
  ASSERT_THAT(finding_nodes(e, findings), ElementsAre("n1:collective.not_arrived"));
  EXPECT_EQ(findings[0].check, "collective.allreduce");
  const FleetVerdict v = fixtures::certify(e, cpu_like());
  EXPECT_EQ(fixtures::node(v, "n1").state, NodeState::kQuarantined);
  EXPECT_EQ(fixtures::node(v, "n1").severity, Severity::kTriage);
  // The others lost their measurement to the hang: inconclusive, with the timeout as the reason.
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kInconclusive);
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->code, "evidence.timeout");
  EXPECT_THAT(fixtures::node(v, "n0").first_reason()->message, HasSubstr("timed out"));
  EXPECT_EQ(v.exit_status(), 1);
}

TEST(CollectiveTimeoutRule, ATimeoutNobodyCanBeBlamedForIsInconclusiveForAll) {
  // Every rank inside the operation; peers not asked; and peers not asked yet a rank listed as
  // missing (a hand-made record, or another tool's): that list is a guess, nobody is blamed.
  for (const auto& [attributed, not_arrived] :
       std::vector<std::pair<bool, std::vector<std::pair<int, std::string>>>>{
           {true, {}}, {false, {}}, {false, {{1, "n1"}}}}) {
    SCOPED_TRACE(::testing::PrintToString(not_arrived));
    const Evidence e =
        fixtures::evidence_of({run_record({"n0", "n1", "n2"}), timeout(not_arrived, attributed)});
    EXPECT_THAT(
        finding_nodes(e, fixtures::run_rule("rule.collective_timeout", e, cpu_like())),
        ElementsAre("n0:collective.timeout_unattributed", "n1:collective.timeout_unattributed",
                    "n2:collective.timeout_unattributed"));
    const FleetVerdict v = fixtures::certify(e, cpu_like());
    EXPECT_EQ(v.count(NodeState::kInconclusive), 3u);
    EXPECT_EQ(v.count(NodeState::kQuarantined), 0u);
  }
}

TEST(CollectiveTimeoutRule, ABlamedRankIsNamedWithTheOperationTimeoutAndRunOnItsOwnNode) {
  // Ranks 1 and 2 both run on n1: one reason for n1 naming both, none for n0 or n2.
  Json t = timeout({{1, "n1"}, {2, "n1"}});
  const Evidence e = fixtures::evidence_of({run_record({"n0", "n1", "n1"}), t});
  const FleetVerdict v = fixtures::certify(e, cpu_like());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined), std::vector<std::string>{"n1"});
  const Reason& r = fixtures::reason(fixtures::node(v, "n1"), "collective.not_arrived");
  EXPECT_EQ(r.message,
            "rank 1, 2 did not arrive at allreduce float sum 64 KiB out-of-place within 30 s "
            "(run run1)");
  EXPECT_EQ(r.rule, "rule.collective_timeout");
  EXPECT_EQ(r.evidence.size(), 1u);
}

TEST(CollectiveTimeoutRule, AnUnblamedTimeoutSaysWhyAndReachesEveryMember) {
  const auto message = [](const std::vector<Json>& records, const std::string& node) {
    const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), cpu_like());
    return fixtures::reason(fixtures::node(v, node), "collective.timeout_unattributed").message;
  };
  EXPECT_EQ(message({run_record({"n0", "n1", "n2"}), timeout({}, true)}, "n0"),
            "allreduce float sum 64 KiB out-of-place did not complete within 30 s in run run1 "
            "with every rank inside it; no node can be blamed");
  EXPECT_EQ(message({run_record({"n0", "n1", "n2"}), timeout({}, false)}, "n0"),
            "allreduce float sum 64 KiB out-of-place did not complete within 30 s in run run1 "
            "and peers could not be asked who was missing; no node can be blamed");
  // Timed out before any operation began (the set-up).
  Json setup = timeout({}, true);
  setup.erase("operation");
  EXPECT_THAT(message({run_record({"n0", "n1", "n2"}), setup}, "n1"),
              HasSubstr("set-up did not complete within 30 s"));
  // An operation that names no collective this validator knows is the collective check's.
  Json unknown = timeout({}, true);
  unknown["operation"] = "warm-up barrier";
  const FleetVerdict warmup = fixtures::certify(
      fixtures::evidence_of({run_record({"n0", "n1", "n2"}), unknown}), cpu_like());
  EXPECT_EQ(fixtures::reason(fixtures::node(warmup, "n0"), "collective.timeout_unattributed").check,
            "collective");
  // Without a run record, the members are the ranks the record lists (n0..n2); with one, its
  // nodes too (n3 ran no rank the record lists).
  for (const std::string node : {"n0", "n1", "n2"}) {
    EXPECT_THAT(message({timeout({}, true)}, node), HasSubstr("no node can be blamed"));
  }
  EXPECT_THAT(message({run_record({"n0", "n1", "n2", "n3"}), timeout({}, true)}, "n3"),
              HasSubstr("no node can be blamed"));
  // A rank the record lists on a node the run's rank map lacks is still a member.
  EXPECT_THAT(message({run_record({"n0", "n1"}), timeout({}, true)}, "n2"),
              HasSubstr("no node can be blamed"));
}

TEST(CollectiveTimeoutRule, EveryTimeoutIsJudgedAndEveryBlamedNodeNamed) {
  // run2's timeout nobody can be blamed for, then run1's, whose missing ranks are on two nodes.
  Json unblamed = timeout({}, true);
  unblamed["run_id"] = "run2";
  const Evidence e =
      fixtures::evidence_of({run_record({"n0", "n1", "n2"}, "run2"), unblamed,
                             run_record({"n0", "n1", "n2"}), timeout({{1, "n1"}, {2, "n2"}})});
  EXPECT_THAT(
      finding_nodes(e, fixtures::run_rule("rule.collective_timeout", e, cpu_like())),
      ElementsAre("n0:collective.timeout_unattributed", "n1:collective.timeout_unattributed",
                  "n2:collective.timeout_unattributed", "n1:collective.not_arrived",
                  "n2:collective.not_arrived"));
}

std::vector<Json> sweep_with_straggler(const std::vector<int>& straggler_per_size, double lead) {
  std::vector<Json> records = {run_record({"n0", "n1", "n2", "n3"})};
  std::uint64_t bytes = 1 << 20;
  for (const int s : straggler_per_size) {
    Json c = collective(bytes, 1.0);
    c["straggler"] = {
        {"rank", s}, {"host", "n" + std::to_string(s)}, {"time_s", 1.0 - lead}, {"lead_s", lead}};
    records.push_back(c);
    bytes *= 2;
  }
  return records;
}

TEST(StragglerRule, FlagsARankThatIsTheStragglerAcrossSizes) {
  const Evidence e = fixtures::evidence_of(sweep_with_straggler({1, 1, 1, 1, 1, 2}, 0.5));
  const auto findings = fixtures::run_rule("rule.collective_straggler", e, cpu_like());
  ASSERT_THAT(finding_nodes(e, findings), ElementsAre("n1:collective.straggler"));
  EXPECT_NEAR(*findings[0].measured, 50, 1e-3);  // median lead in %
}

TEST(StragglerRule, IgnoresOccasionalSmallOrDisabledStragglers) {
  // Different ranks lead: noise.
  Evidence e = fixtures::evidence_of(sweep_with_straggler({0, 1, 2, 3, 0, 1}, 0.5));
  EXPECT_TRUE(fixtures::run_rule("rule.collective_straggler", e, cpu_like()).empty());
  // The same rank, but a lead too small to matter.
  e = fixtures::evidence_of(sweep_with_straggler({1, 1, 1, 1, 1, 1}, 0.05));
  EXPECT_TRUE(fixtures::run_rule("rule.collective_straggler", e, cpu_like()).empty());
  // Too few records to call it consistent.
  e = fixtures::evidence_of(sweep_with_straggler({1, 1, 1}, 0.5));
  EXPECT_TRUE(fixtures::run_rule("rule.collective_straggler", e, cpu_like()).empty());
  // A baseline that does not ask for straggler detection.
  e = fixtures::evidence_of(sweep_with_straggler({1, 1, 1, 1, 1, 1}, 0.5));
  const Baseline plain = fixtures::baseline_of("required: [collective.allreduce]\n");
  EXPECT_TRUE(fixtures::run_rule("rule.collective_straggler", e, plain).empty());
}

TEST(BurnCorrectnessRule, MiscomparesAndPeerMismatchNameTheGpu) {
  Json miscompare = fixtures::burn("n0", 3, 700);
  miscompare["status"] = "fail";
  miscompare["miscompares"] = 12;
  Json peer = fixtures::burn("n1", 5, 700);
  peer["status"] = "fail";
  peer["peer_mismatch"] = true;
  Json other = fixtures::burn("n2", 0, 700);
  other["status"] = "fail";
  other["reason"] = "NaN in results";
  const Evidence e = fixtures::evidence_of({miscompare, peer, other, fixtures::burn("n3", 0, 700)});
  const Baseline b = fixtures::baseline_of("required: [burn]\n");
  const auto findings = fixtures::run_rule("rule.burn_correctness", e, b);
  ASSERT_THAT(finding_nodes(e, findings),
              ElementsAre("n0:burn.miscompare", "n1:burn.peer_mismatch", "n2:stage.fail"));
  EXPECT_EQ(findings[0].gpu.index, 3);
  const FleetVerdict v = fixtures::certify(e, b);
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->message,
            "gpu 3 (GPU-n0-3): burn gemm_bf16: 12 miscompared elements");
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->gpu_uuid, "GPU-n0-3");
  EXPECT_THAT(fixtures::node(v, "n2").first_reason()->message, HasSubstr("NaN in results"));
  EXPECT_EQ(fixtures::node(v, "n3").state, NodeState::kCertified);
}

TEST(MembwIntegrityRule, PatternErrorsQuarantineAndNameTheFirstError) {
  Json bad = fixtures::membw("n0", 2, 2500);
  bad["status"] = "fail";
  bad["integrity"]["errors"] = 3;
  bad["integrity"]["first_errors"] = Json::array(
      {{{"offset", 4096}, {"expected", "0x1"}, {"actual", "0x0"}, {"pattern", "walking_ones"}}});
  const Evidence e = fixtures::evidence_of({bad, fixtures::membw("n1", 0, 2500)});
  const Baseline b = fixtures::baseline_of("required: [membw]\n");
  const FleetVerdict v = fixtures::certify(e, b);
  const Reason& r = fixtures::reason(fixtures::node(v, "n0"), "membw.integrity");
  EXPECT_EQ(r.gpu_index, 2);
  EXPECT_THAT(r.message,
              HasSubstr("3 errors in 1 GiB tested, first at offset 0x1000, pattern walking_ones"));
  EXPECT_EQ(fixtures::node(v, "n1").state, NodeState::kCertified);
}

// A count with a limit of none, at its limit and one above: `clean` (a count of 0) raises nothing
// from `rule_id` and certifies n0 on `check`; `one` (a count of 1) quarantines n0 with `code`.
// Returns that reason, checked as verdict.json shows it: check, rule, 1 against 0, `unit`.
Reason one_against_none(const std::string& rule_id, const std::string& check, const Json& clean,
                        const Json& one, const std::string& code, const std::string& unit) {
  const Baseline b = fixtures::baseline_of("required: [" + check + "]\n");
  const Evidence none = fixtures::evidence_of({clean});
  EXPECT_TRUE(fixtures::run_rule(rule_id, none, b).empty());
  EXPECT_EQ(fixtures::node(fixtures::certify(none, b), "n0").state, NodeState::kCertified);
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of({one}), b);
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kQuarantined);
  const Reason r = fixtures::reason(fixtures::node(v, "n0"), code);
  EXPECT_EQ(r.check, check);
  EXPECT_EQ(r.rule, rule_id);
  EXPECT_EQ(r.measured, std::optional<double>(1));
  EXPECT_EQ(r.limit, std::optional<double>(0));
  EXPECT_EQ(r.unit, unit);
  return r;
}

// n0's burn of `gpu` with `miscompares` miscompared elements (and `status`).
Json burn_with(int gpu, int miscompares, const std::string& status = "ok") {
  Json r = fixtures::burn("n0", gpu, 700);
  r["status"] = status;
  r["miscompares"] = miscompares;
  return r;
}

TEST(BurnCorrectnessRule, OneMiscompareQuarantinesTheGpuAndNoneCertifiesIt) {
  const Reason r = one_against_none("rule.burn_correctness", "burn", burn_with(0, 0),
                                    burn_with(0, 1, "fail"), "burn.miscompare", "elements");
  ASSERT_EQ(r.evidence.size(), 1u);  // the record it came from
  EXPECT_EQ(r.evidence[0].line, 1u);
}

TEST(BurnCorrectnessRule, MiscomparesAndAPeerMismatchAreBothReportedAndNoStageFailure) {
  Json both = burn_with(0, 4, "fail");
  both["peer_mismatch"] = true;
  const Evidence e = fixtures::evidence_of({both});
  EXPECT_THAT(finding_nodes(e, fixtures::run_rule("rule.burn_correctness", e,
                                                  fixtures::baseline_of("required: [burn]\n"))),
              ElementsAre("n0:burn.miscompare", "n0:burn.peer_mismatch"));
  const FleetVerdict v = fixtures::certify(e, fixtures::baseline_of("required: [burn]\n"));
  EXPECT_EQ(fixtures::reason(fixtures::node(v, "n0"), "burn.peer_mismatch").message,
            "gpu 0 (GPU-n0-0): burn gemm_bf16: result differs from the majority of 7 same-model "
            "GPUs");
}

TEST(BurnCorrectnessRule, AFailureWithoutAWrongResultIsAFailedStageSayingWhy) {
  const Baseline b = fixtures::baseline_of("required: [burn]\n");
  Json why = burn_with(0, 0, "fail");
  why["reason"] = "NaN in results";
  for (const auto& [record, said] : std::vector<std::pair<Json, std::string>>{
           {why, "NaN in results"}, {burn_with(0, 0, "fail"), "no reason given"}}) {
    const FleetVerdict v = fixtures::certify(fixtures::evidence_of({record}), b);
    EXPECT_EQ(fixtures::reason(fixtures::node(v, "n0"), "stage.fail").message,
              "gpu 0 (GPU-n0-0): burn reported a failure: " + said);
  }
  // A failed stage on one GPU does not hide the next GPU's miscompares.
  const Evidence e = fixtures::evidence_of({burn_with(0, 0, "fail"), burn_with(1, 2, "fail")});
  EXPECT_THAT(finding_nodes(e, fixtures::run_rule("rule.burn_correctness", e, b)),
              ElementsAre("n0:stage.fail", "n0:burn.miscompare"));
}

// n0's membw record of `gpu` with `errors` pattern errors (and `status`).
Json membw_with_errors(int gpu, int errors, const std::string& status = "ok") {
  Json r = fixtures::membw("n0", gpu, 2500);
  r["status"] = status;
  r["integrity"]["errors"] = errors;
  return r;
}

TEST(MembwIntegrityRule, OneErrorQuarantinesTheGpuAndNoneCertifiesIt) {
  const Reason r = one_against_none("rule.membw_integrity", "membw", membw_with_errors(0, 0),
                                    membw_with_errors(0, 1, "fail"), "membw.integrity", "errors");
  EXPECT_THAT(r.message, HasSubstr("1 errors in 1 GiB tested"));
}

TEST(MembwIntegrityRule, EveryBadGpuIsNamedOnceAndNotAgainAsAFailedStage) {
  const Evidence e = fixtures::evidence_of(
      {membw_with_errors(0, 2, "fail"), membw_with_errors(1, 5, "fail"), membw_with_errors(2, 0)});
  const auto findings =
      fixtures::run_rule("rule.membw_integrity", e, fixtures::baseline_of("required: [membw]\n"));
  ASSERT_THAT(finding_nodes(e, findings), ElementsAre("n0:membw.integrity", "n0:membw.integrity"));
  EXPECT_EQ(findings[0].gpu.index, 0);
  EXPECT_EQ(findings[1].gpu.index, 1);
  // A failed stage on one GPU does not hide the pattern errors of the next.
  const Evidence both =
      fixtures::evidence_of({membw_with_errors(0, 0, "fail"), membw_with_errors(1, 5, "fail")});
  EXPECT_THAT(finding_nodes(both, fixtures::run_rule("rule.membw_integrity", both,
                                                     fixtures::baseline_of("required: [membw]\n"))),
              ElementsAre("n0:stage.fail", "n0:membw.integrity"));
}

TEST(MembwIntegrityRule, AFailureWithoutPatternErrorsIsAFailedStageSayingWhy) {
  const Baseline b = fixtures::baseline_of("required: [membw]\n");
  Json why = membw_with_errors(0, 0, "fail");
  why["reason"] = "cudaMalloc of the test buffer failed";
  for (const auto& [record, said] : std::vector<std::pair<Json, std::string>>{
           {why, "cudaMalloc of the test buffer failed"},
           {membw_with_errors(0, 0, "fail"), "no reason given"}}) {
    const FleetVerdict v = fixtures::certify(fixtures::evidence_of({record}), b);
    EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kQuarantined);
    EXPECT_EQ(fixtures::reason(fixtures::node(v, "n0"), "stage.fail").message,
              "gpu 0 (GPU-n0-0): membw reported a failure: " + said);
  }
}

TEST(MembwIntegrityRule, ARunThatDidNotFinishIsNoFailureButNoEvidenceEither) {
  const Baseline b = fixtures::baseline_of("required: [membw]\n");
  for (const char* status : {"error", "timeout", "skipped"}) {
    SCOPED_TRACE(status);
    const Evidence e = fixtures::evidence_of({membw_with_errors(0, 0, status)});
    EXPECT_TRUE(fixtures::run_rule("rule.membw_integrity", e, b).empty());
    EXPECT_EQ(fixtures::node(fixtures::certify(e, b), "n0").state, NodeState::kInconclusive);
  }
}

TEST(MembwIntegrityRule, ErrorsInAnUnknownAmountSaySoAndNoTestIsNoPatternError) {
  const Baseline b = fixtures::baseline_of("required: [membw]\n");
  Json unknown = membw_with_errors(0, 3, "fail");
  unknown["integrity"]["bytes_tested"] = nullptr;
  EXPECT_THAT(
      fixtures::reason(fixtures::node(fixtures::certify(fixtures::evidence_of({unknown}), b), "n0"),
                       "membw.integrity")
          .message,
      HasSubstr("3 errors in an unknown amount tested"));
  // membw run without its integrity test (--memtest-fraction 0): no count, no pattern error.
  Json untested = fixtures::membw("n0", 0, 2500);
  untested["integrity"] = nullptr;
  EXPECT_TRUE(
      fixtures::run_rule("rule.membw_integrity", fixtures::evidence_of({untested}), b).empty());
}

}  // namespace
}  // namespace commcert
