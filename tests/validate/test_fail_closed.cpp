// Verdicts fail closed (docs/validator.md, "The rule"): a node is certified only when every
// required check has a finished, well-formed record attributed to that node with positive
// evidence. The named tests are the regressions of issue 10 ("Certified without evidence",
// items 1-6), each with the excluded record as the node's only evidence and a control that
// certifies when the record is well-formed; test_fail_closed_property.cpp tries to break the
// rule with generated record sets.

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support.hpp"
#include "validate/inputs.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using fixtures::codes;
using fixtures::collective;
using fixtures::evidence_of;
using fixtures::has_code;
using fixtures::node;
using fixtures::run_record;

Baseline allreduce_only() {
  return fixtures::baseline_of("required: [collective.allreduce]\n");
}

FleetVerdict certify(const std::vector<Json>& records) {
  return fixtures::certify(evidence_of(records), allreduce_only());
}

// A cluster-wide allreduce over `members`, as the sweep writes it.
Json cluster_allreduce(const std::vector<std::string>& members) {
  Json c = collective(1 << 20, 1.0, "cluster", members.front());
  c["group_nodes"] = members;
  c["nranks"] = members.size();
  c["nodes"] = members.size();
  return c;
}

// --- 1. A collective record that lost its scope (or, for scope node, its node) ----------------

TEST(FailClosedRegression, CollectiveWithoutScopeOrGroupIsNoEvidence) {
  const std::vector<std::string> nodes{"n0", "n1", "n2", "n3"};
  Json stripped = cluster_allreduce(nodes);
  stripped.erase("scope");
  stripped.erase("group_nodes");
  const FleetVerdict verdict = certify({run_record(nodes), stripped});
  for (const auto& name : nodes) {
    EXPECT_EQ(node(verdict, name).state, NodeState::kInconclusive) << name;
    EXPECT_TRUE(has_code(node(verdict, name), "input.unparsable")) << name;
  }
  EXPECT_NE(fixtures::reason(node(verdict, "n1"), "input.unparsable").message.find("scope"),
            std::string::npos);
  // Control: the same record with its fields certifies every node.
  const FleetVerdict control = certify({run_record(nodes), cluster_allreduce(nodes)});
  EXPECT_EQ(fixtures::nodes_in(control, NodeState::kCertified), nodes);
}

TEST(FailClosedRegression, CollectiveWithoutScopeButWithGroupIsNoEvidence) {
  Json stripped = cluster_allreduce({"n0", "n1"});
  stripped.erase("scope");
  const FleetVerdict verdict = certify({run_record({"n0", "n1"}), stripped});
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kCertified).empty());
}

TEST(FailClosedRegression, NodeScopeRecordWithoutItsNodeIsNoEvidence) {
  // Process 0 (on n0) writes every node's node-scope record: without group_nodes it says
  // nothing about which node it measured, not even n0.
  Json stripped = collective(1 << 20, 1.0, "node", "n0");
  stripped.erase("group_nodes");
  const FleetVerdict verdict = certify({run_record({"n0", "n1"}), stripped});
  EXPECT_EQ(node(verdict, "n0").state, NodeState::kInconclusive);
  EXPECT_EQ(node(verdict, "n1").state, NodeState::kInconclusive);
  const FleetVerdict control =
      certify({run_record({"n0"}), collective(1 << 20, 1.0, "node", "n0")});
  EXPECT_EQ(node(control, "n0").state, NodeState::kCertified);
}

// --- 2. A node named only in another record's group_nodes ----------------------------------

TEST(FailClosedRegression, NodeNamedOnlyInGroupNodesIsNotCertified) {
  const FleetVerdict verdict =
      certify({run_record({"n0", "n1", "n2"}), cluster_allreduce({"n0", "n1", "n2", "ghost"})});
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified),
            (std::vector<std::string>{"n0", "n1", "n2"}));
  const NodeVerdict& ghost = node(verdict, "ghost");
  EXPECT_EQ(ghost.state, NodeState::kInconclusive);
  EXPECT_EQ(codes(ghost), std::vector<std::string>{"evidence.missing"});
  EXPECT_NE(ghost.reasons.front().message.find("no rank map of their run lists it"),
            std::string::npos);
}

TEST(FailClosedRegression, ANameThatIsNoNodeNameIsNoEvidence) {
  // Markup, a space, a line break or 65 characters where a record names a node (records.md): the
  // record is refused, so no node is certified by it and none is named so in the verdict.
  const std::vector<std::string> nodes{"n0", "n1", "n2", "n3"};
  for (const std::string& bad : {std::string("<img src=x onerror=alert(1)>"), std::string("n 3"),
                                 std::string("n3\n"), std::string(65, 'n')}) {
    std::vector<std::string> named = nodes;
    named.back() = bad;
    Json straggler = cluster_allreduce(nodes);
    straggler["straggler"] = {{"rank", 3}, {"host", bad}, {"time_s", 0.1}, {"lead_s", 0.0}};
    for (const auto& records : {std::vector<Json>{run_record(named), cluster_allreduce(named)},
                                std::vector<Json>{run_record(nodes), straggler}}) {
      const FleetVerdict verdict = certify(records);
      EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kCertified).empty()) << bad;
      for (const auto& judged : verdict.nodes)
        EXPECT_NE(judged.node, bad);
    }
  }
  // Control: the same records with valid names certify every node.
  EXPECT_EQ(fixtures::nodes_in(certify({run_record(nodes), cluster_allreduce(nodes)}),
                               NodeState::kCertified),
            nodes);
}

TEST(FailClosedRegression, NodeOutsideTheRunsRankMapGetsNoEvidenceFromIt) {
  // The ghost wrote a record of its own elsewhere, but run1's rank map does not list it:
  // run1's measurements are not its evidence.
  Json own = fixtures::record("health", "ghost");
  own["component"] = "node";
  const FleetVerdict verdict =
      certify({run_record({"n0", "n1"}), cluster_allreduce({"n0", "n1", "ghost"}), own});
  EXPECT_EQ(node(verdict, "ghost").state, NodeState::kInconclusive);
  EXPECT_EQ(node(verdict, "n1").state, NodeState::kCertified);
}

TEST(FailClosedRegression, WithoutRankMapOnlyNodesThatWroteRecordsAreAttributed) {
  // No run record: n0 wrote the record and is attributed; n1 is named only by it.
  const FleetVerdict verdict = certify({cluster_allreduce({"n0", "n1"})});
  EXPECT_EQ(node(verdict, "n0").state, NodeState::kCertified);
  EXPECT_EQ(node(verdict, "n1").state, NodeState::kInconclusive);
}

// --- 3. Failed records that name no node, one per communicator ------------------------------

TEST(FailClosedRegression, EveryUnattributedFailureCountsForItsOwnNodes) {
  // Node-scope records of one run: n1's and n2's failed without naming a rank. Both count,
  // not just the first failure of (run, allreduce).
  Json n1 = collective(1 << 20, 1.0, "node", "n1");
  n1["status"] = "fail";
  n1["reason"] = "a rank failed";
  Json n2 = n1;
  n2["host"] = "n2";
  n2["group_nodes"] = Json::array({"n2"});
  const FleetVerdict verdict =
      certify({run_record({"n0", "n1", "n2"}), collective(1 << 20, 1.0, "node", "n0"), n1, n2});
  EXPECT_EQ(node(verdict, "n0").state, NodeState::kCertified);
  for (const auto& name : {"n1", "n2"}) {
    EXPECT_EQ(node(verdict, name).state, NodeState::kInconclusive) << name;
    EXPECT_TRUE(has_code(node(verdict, name), "collective.fail_unattributed")) << name;
  }
}

// --- 4. wrong_elements is consulted ---------------------------------------------------------

FleetVerdict with_wrong_elements(const Json& value) {
  Json c = cluster_allreduce({"n0", "n1"});
  c["wrong_elements"] = value;
  return certify({run_record({"n0", "n1"}), c});
}

TEST(FailClosedRegression, WrongElementsAtTheLimitAndOneStepEitherSide) {
  // 0 is the limit (no wrong element): certified. One wrong element, even in a record that
  // says ok, is a failure; -1 is not a count at all.
  EXPECT_EQ(fixtures::nodes_in(with_wrong_elements(0), NodeState::kCertified),
            (std::vector<std::string>{"n0", "n1"}));
  const FleetVerdict one = with_wrong_elements(1);
  EXPECT_TRUE(fixtures::nodes_in(one, NodeState::kCertified).empty());
  EXPECT_TRUE(has_code(node(one, "n1"), "collective.fail_unattributed"));
  EXPECT_NE(fixtures::reason(node(one, "n1"), "collective.fail_unattributed")
                .message.find("status ok but 1 wrong elements"),
            std::string::npos);
  const FleetVerdict negative = with_wrong_elements(-1);
  EXPECT_TRUE(fixtures::nodes_in(negative, NodeState::kCertified).empty());
  EXPECT_TRUE(has_code(node(negative, "n1"), "input.unparsable"));
}

TEST(FailClosedRegression, StatusOkWithWrongElementsIsNotCertified) {
  EXPECT_TRUE(fixtures::nodes_in(with_wrong_elements(5), NodeState::kCertified).empty());
}

TEST(FailClosedRegression, WrongElementsThatAreNotACountAreNotCertified) {
  for (const Json& value : {Json("NaN"), Json(2.5), Json(nullptr), Json(true)}) {
    const FleetVerdict verdict = with_wrong_elements(value);
    EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kCertified).empty()) << value.dump();
    EXPECT_TRUE(has_code(node(verdict, "n1"), "input.unparsable")) << value.dump();
  }
  Json missing = cluster_allreduce({"n0", "n1"});
  missing.erase("wrong_elements");
  EXPECT_TRUE(
      fixtures::nodes_in(certify({run_record({"n0", "n1"}), missing}), NodeState::kCertified)
          .empty());
}

TEST(FailClosedRegression, LiteralNanWrongElementsIsNotCertified) {
  fixtures::TempDir dir;
  std::string line = cluster_allreduce({"n0", "n1"}).dump();
  const std::string zero = "\"wrong_elements\":0";
  line.replace(line.find(zero), zero.size(), "\"wrong_elements\":NaN");
  dir.write("run/records.jsonl", run_record({"n0", "n1"}).dump() + "\n" + line + "\n");
  LoadedInputs inputs = load_inputs({(dir.path() / "run").string()});
  const FleetVerdict verdict = judge(inputs.evidence, allreduce_only(), nullptr);
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kCertified).empty());
}

// --- 5. Runs that never finished ------------------------------------------------------------

struct RunDir {
  fixtures::TempDir dir;
  std::string path() const { return (dir.path() / "run").string(); }
};

void write_run(const RunDir& run, const std::string& meta_status,
               const std::string& suite_status = "") {
  const std::vector<std::string> nodes{"n0", "n1"};
  run.dir.write("run/records.jsonl",
                run_record(nodes).dump() + "\n" + cluster_allreduce(nodes).dump() + "\n");
  run.dir.write(
      "run/meta.json",
      Json({{"run_id", "run1"}, {"status", meta_status}, {"fault_injection", nullptr}}).dump());
  if (!suite_status.empty()) {
    run.dir.write("run/suite.json", Json({{"run_id", "run1"}, {"status", suite_status}}).dump());
  }
}

FleetVerdict certify_dir(const RunDir& run, InputOptions options = {}) {
  LoadedInputs inputs = load_inputs({run.path()}, options);
  return judge(inputs.evidence, allreduce_only(), nullptr, std::move(inputs.notes));
}

TEST(FailClosedRegression, RunningRunIsNotCertified) {
  RunDir run;
  write_run(run, "running");
  const FleetVerdict verdict = certify_dir(run);
  for (const auto& name : {"n0", "n1"}) {
    EXPECT_EQ(node(verdict, name).state, NodeState::kInconclusive) << name;
    EXPECT_EQ(codes(node(verdict, name)), std::vector<std::string>{"input.run_unfinished"});
  }
  EXPECT_NE(node(verdict, "n0").reasons.front().message.find("run run1 never finished"),
            std::string::npos);
  // Control: the finished run certifies.
  RunDir finished;
  write_run(finished, "ok", "certified");
  EXPECT_EQ(fixtures::nodes_in(certify_dir(finished), NodeState::kCertified),
            (std::vector<std::string>{"n0", "n1"}));
}

TEST(FailClosedRegression, RunningSuiteIsNotCertified) {
  // Killed between stages: the last stage's meta.json finished, the suite did not.
  RunDir run;
  write_run(run, "ok", "running");
  const FleetVerdict verdict = certify_dir(run);
  EXPECT_EQ(node(verdict, "n1").state, NodeState::kInconclusive);
  EXPECT_TRUE(has_code(node(verdict, "n1"), "input.run_unfinished"));
  // The run judging itself: its suite.json says running until the verdict is written.
  InputOptions own;
  own.own_run = true;
  EXPECT_EQ(node(certify_dir(run, own), "n1").state, NodeState::kCertified);
}

TEST(FailClosedRegression, AllowPartialJudgesAnUnfinishedRunAndSaysSo) {
  RunDir run;
  write_run(run, "running");
  InputOptions partial;
  partial.allow_partial = true;
  const FleetVerdict verdict = certify_dir(run, partial);
  const NodeVerdict& n1 = node(verdict, "n1");
  EXPECT_EQ(n1.state, NodeState::kCertified);
  EXPECT_EQ(n1.severity, Severity::kMonitor);
  EXPECT_EQ(codes(n1), std::vector<std::string>{"input.run_partial"});
  EXPECT_NE(n1.reasons.front().message.find("--allow-partial"), std::string::npos);
  // It relaxes only the unfinished-run rule: missing evidence is still missing.
  fixtures::TempDir dir;
  dir.write("run/records.jsonl", run_record({"n0", "n1"}).dump() + "\n");
  dir.write("run/meta.json", R"({"run_id": "run1", "status": "running"})");
  LoadedInputs inputs = load_inputs({(dir.path() / "run").string()}, partial);
  const FleetVerdict empty = judge(inputs.evidence, allreduce_only(), nullptr);
  EXPECT_EQ(node(empty, "n1").state, NodeState::kInconclusive);
  EXPECT_TRUE(has_code(node(empty, "n1"), "evidence.missing"));
}

// --- 6. meta.json fields of the wrong type --------------------------------------------------

TEST(FailClosedRegression, MetaFieldOfWrongTypeIsOneInputErrorNamingFileAndField) {
  for (const auto& [meta, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"run_id": "run1", "status": 5})", "status"},
           {R"({"run_id": ["run1"], "status": "ok"})", "run_id"},
           {R"({"run_id": "run1", "status": {"state": "running"}})", "status"}}) {
    RunDir run;
    write_run(run, "ok");
    run.dir.write("run/meta.json", meta);
    try {
      (void)load_inputs({run.path()});
      ADD_FAILURE() << "accepted " << meta;
    } catch (const UsageError& error) {
      const std::string what = error.what();
      EXPECT_NE(what.find("meta.json: " + field + ": expected a string"), std::string::npos)
          << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(FailClosedRegression, SuiteFieldOfWrongTypeIsAnInputError) {
  RunDir run;
  write_run(run, "ok", "certified");
  run.dir.write("run/suite.json", R"({"run_id": "run1", "status": 0})");
  EXPECT_THROW((void)load_inputs({run.path()}), UsageError);
}

}  // namespace
}  // namespace commcert
