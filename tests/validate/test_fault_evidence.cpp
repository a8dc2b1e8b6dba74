// Evidence of a fault always counts (docs/validator.md, "Evidence of a fault"): a record whose
// status is fail, error or timeout weighs on the nodes it names, whatever else passed, with a
// reason that cites the record's file and line.
#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/inputs.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

const Baseline& h100() {
  static const Baseline b = fixtures::shipped_baseline("h100-sxm-8gpu-ndr400");
  return b;
}

// Lines of a records file, counting the last one even without a newline.
std::size_t line_count(const fs::path& file) {
  std::ifstream in(file);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);)
    ++lines;
  return lines;
}

void append(const fs::path& file, const Json& record) {
  std::ofstream(file, std::ios::app) << record.dump() << '\n';
}

FleetVerdict judge_dir(const fs::path& dir, const Baseline& baseline) {
  LoadedInputs inputs = load_inputs({dir.string()});
  return judge(inputs.evidence, baseline, nullptr, std::move(inputs.notes));
}

// The reported case: a finished run of a four-node cluster, every node certified; one error
// record appended for cc-h2 (same run id, same schema). cc-h2 is inconclusive with a reason
// that points at the appended line; the other nodes stay certified. With or without the
// record's `collective`.
TEST(FaultEvidence, AnErrorAppendedToAPassingRunLeavesItsNodeInconclusive) {
  for (const bool named_collective : {true, false}) {
    SCOPED_TRACE(named_collective ? "with collective" : "without collective");
    fixtures::TempDir dir;
    fixtures::FleetSpec spec;
    spec.nodes = 4;
    spec.prefix = "cc-h";
    fixtures::write_fleet(spec, dir.path());
    ASSERT_EQ(judge_dir(dir.path(), h100()).count(NodeState::kCertified), 4u);

    const fs::path records = dir.path() / "collectives-cluster" / "records.jsonl";
    Json error = fixtures::record("collective", "cc-h2", "error", -1, "collectives-cluster");
    error["rank"] = 2 * spec.gpus_per_node;  // cc-h2's first rank
    error["backend"] = "nccl";
    if (named_collective) error["collective"] = "allreduce";
    error["reason"] = "MPI_ERR_TRUNCATE: message truncated";
    append(records, error);
    const std::size_t line = line_count(records);

    const FleetVerdict v = judge_dir(dir.path(), h100());
    EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified),
              (std::vector<std::string>{"cc-h0", "cc-h1", "cc-h3"}));
    const NodeVerdict& n = fixtures::node(v, "cc-h2");
    EXPECT_EQ(n.state, NodeState::kInconclusive);
    const Reason& r = fixtures::reason(n, "evidence.error");
    EXPECT_THAT(r.message, HasSubstr("MPI_ERR_TRUNCATE: message truncated"));
    EXPECT_THAT(r.message, HasSubstr(fmt::format("records.jsonl:{}", line)));
    EXPECT_EQ(r.check, named_collective ? "collective.allreduce" : "collective");
    ASSERT_EQ(r.evidence.size(), 1u);
    EXPECT_EQ(r.evidence[0].file, records.string());
    EXPECT_EQ(r.evidence[0].line, line);
  }
}

// --- One record beside passing ones, and as a node's only evidence --------------------------

const Baseline& allreduce_baseline() {
  static const Baseline b = fixtures::baseline_of("required: [collective.allreduce]\n");
  return b;
}

// A passing cluster-wide allreduce of n0, n1 and n2, with its rank map (one rank per node).
std::vector<Json> passing_cluster() {
  Json c = fixtures::collective(1 << 20, 10.0);
  c["group_nodes"] = {"n0", "n1", "n2"};
  c["nranks"] = 3;
  return {fixtures::run_record({"n0", "n1", "n2"}), c};
}

Json collective_error(const std::string& host, int rank) {
  Json e = fixtures::record("collective", host, "error");
  e["rank"] = rank;
  e["backend"] = "mpi";
  e["collective"] = "allreduce";
  e["reason"] = "MPI_ERR_TRUNCATE: message truncated";
  return e;
}

// Where a reason points: the lines it cites in the one records file of evidence_of().
std::vector<std::uint32_t> cited_lines(const Reason& r) {
  std::vector<std::uint32_t> lines;
  for (const auto& e : r.evidence)
    lines.push_back(e.line);
  return lines;
}

TEST(FaultEvidence, AnErrorBesidePassingRecordsOfItsCheckCounts) {
  std::vector<Json> records = passing_cluster();
  records.push_back(collective_error("n1", 1));
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_baseline());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified), (std::vector<std::string>{"n0", "n2"}));
  const NodeVerdict& n1 = fixtures::node(v, "n1");
  EXPECT_EQ(n1.state, NodeState::kInconclusive);
  ASSERT_EQ(fixtures::codes(n1), std::vector<std::string>{"evidence.error"});
  const Reason& r = *n1.first_reason();
  EXPECT_EQ(r.rule, "rule.fault_evidence");
  EXPECT_EQ(cited_lines(r), std::vector<std::uint32_t>{3});
  EXPECT_THAT(r.message,
              ::testing::MatchesRegex(
                  "collective.allreduce: the stage could not measure \\(.*records.jsonl:3, "
                  "run run1\\): MPI_ERR_TRUNCATE: message truncated"));
}

// As the only evidence, the gap the error explains is the one reason: not said twice.
TEST(FaultEvidence, AnErrorAsTheOnlyEvidenceIsOneReason) {
  const FleetVerdict v = fixtures::certify(
      fixtures::evidence_of({fixtures::run_record({"n0", "n1"}), collective_error("n1", 1)}),
      allreduce_baseline());
  const NodeVerdict& n1 = fixtures::node(v, "n1");
  EXPECT_EQ(fixtures::codes(n1), std::vector<std::string>{"evidence.error"});
  EXPECT_EQ(n1.first_reason()->rule, "rule.required_evidence");
  EXPECT_EQ(cited_lines(*n1.first_reason()), std::vector<std::uint32_t>{2});
}

// Its rank names a node through the run's rank map, beside the host that wrote it; without a
// rank map the rank names nobody.
TEST(FaultEvidence, ARankNamesItsNodeThroughTheRunsRankMap) {
  std::vector<Json> records = passing_cluster();
  records.push_back(collective_error("n0", 2));
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_baseline());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified), std::vector<std::string>{"n1"});
  EXPECT_EQ(fixtures::node(v, "n2").first_reason()->code, "evidence.error");

  std::vector<Json> unmapped = {records[1], records[2]};
  unmapped[0]["group_nodes"] = {"n0", "n1", "n2"};
  for (const auto& node : {"n1", "n2"}) {
    Json health = fixtures::record("health", node);
    health["component"] = "node";
    unmapped.push_back(health);  // n1 and n2 speak for themselves
  }
  const FleetVerdict without =
      fixtures::certify(fixtures::evidence_of(unmapped), allreduce_baseline());
  EXPECT_EQ(fixtures::nodes_in(without, NodeState::kCertified),
            (std::vector<std::string>{"n1", "n2"}));
}

// An error's group_nodes are named too.
TEST(FaultEvidence, AnErrorNamesItsGroup) {
  std::vector<Json> records = passing_cluster();
  Json error = collective_error("n0", 0);
  error["group_nodes"] = {"n2"};
  records.push_back(error);
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_baseline());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified), std::vector<std::string>{"n1"});
}

// Several errors of one node and check are one reason citing each of them.
TEST(FaultEvidence, ErrorsOfOneCheckAreOneReasonCitingEach) {
  std::vector<Json> records = passing_cluster();
  records.push_back(collective_error("n1", 1));
  records.push_back(collective_error("n1", 1));
  records.back()["reason"] = "a second error";
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_baseline());
  const NodeVerdict& n1 = fixtures::node(v, "n1");
  ASSERT_EQ(fixtures::codes(n1), std::vector<std::string>{"evidence.error"});
  EXPECT_EQ(cited_lines(*n1.first_reason()), (std::vector<std::uint32_t>{3, 4}));
  EXPECT_THAT(n1.first_reason()->message, HasSubstr("and 1 more such record(s)"));
}

// A failure a rule of its own kind judges keeps that rule's reason, beside passing records and
// alone: a burn that failed for another reason than a miscompare is stage.fail.
TEST(FaultEvidence, AFailureItsKindsRuleJudgesKeepsThatReason) {
  const Baseline baseline = fixtures::baseline_of("required: [burn]\nnode: {gpus: 2}\n");
  Json failed = fixtures::burn("n0", 1, 700);
  failed["status"] = "fail";
  failed["reason"] = "result check failed";
  for (const bool beside_passing : {true, false}) {
    SCOPED_TRACE(beside_passing ? "beside passing" : "alone");
    std::vector<Json> records = {failed};
    if (beside_passing) {
      records.push_back(fixtures::burn("n0", 0, 700));
      records.push_back(fixtures::burn("n0", 1, 700));
    }
    const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), baseline);
    const NodeVerdict& n0 = fixtures::node(v, "n0");
    EXPECT_EQ(n0.state, NodeState::kQuarantined);
    EXPECT_EQ(n0.first_reason()->code, "stage.fail");
    EXPECT_EQ(n0.first_reason()->rule, "rule.burn_correctness");
    for (const auto& r : n0.reasons)
      EXPECT_NE(r.rule, "rule.fault_evidence") << r.message;
  }
}

// Wrong data that names its rank weighs on that rank's node alone, and a timeout that names the
// ranks that never arrived on theirs: the others of the communicator are not held back (the
// measured record is their positive evidence), with or without other passing records.
TEST(FaultEvidence, ACulpritNamedByTheRecordIsTheOneItWeighsOn) {
  for (const bool beside_passing : {true, false}) {
    SCOPED_TRACE(beside_passing ? "beside passing" : "alone");
    std::vector<Json> records = {fixtures::run_record({"n0", "n1", "n2"})};
    Json wrong = fixtures::collective(1 << 20, 10.0, "cluster", "n0", {{1, "n1"}});
    wrong["group_nodes"] = {"n0", "n1", "n2"};
    records.push_back(wrong);
    Json timeout = fixtures::record("collective", "n0", "timeout");
    timeout["operation"] = "allreduce float sum 1 MiB out-of-place";
    timeout["timeout_s"] = 60;
    timeout["attributed"] = true;
    timeout["not_arrived"] = Json::array({{{"rank", 2}, {"host", "n2"}}});
    records.push_back(timeout);
    if (beside_passing) records.push_back(passing_cluster()[1]);
    const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_baseline());
    EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined),
              (std::vector<std::string>{"n1", "n2"}));
    EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kCertified);
    for (const auto& r : fixtures::node(v, "n0").reasons)
      EXPECT_NE(r.rule, "rule.fault_evidence") << r.message;
  }
}

// A skipped record is no fault (an in-place sendrecv has no form): beside passing records it
// changes nothing; alone it is missing evidence, as before.
TEST(FaultEvidence, ASkippedRecordIsNoFault) {
  Json skipped = fixtures::record("collective", "n1", "skipped");
  skipped["collective"] = "allreduce";
  skipped["scope"] = "node";
  skipped["group_nodes"] = {"n1"};
  std::vector<Json> records = passing_cluster();
  records.push_back(skipped);
  EXPECT_EQ(fixtures::certify(fixtures::evidence_of(records), allreduce_baseline())
                .count(NodeState::kCertified),
            3u);
  const FleetVerdict alone =
      fixtures::certify(fixtures::evidence_of({skipped}), allreduce_baseline());
  EXPECT_EQ(fixtures::codes(fixtures::node(alone, "n1")),
            std::vector<std::string>{"evidence.skipped"});
}

// Every kind's error and timeout, beside passing records of the same node, checks nobody
// requires included; p2p, a link and a kind this validator does not know too.
TEST(FaultEvidence, EveryKindsErrorAndTimeoutCountBesidePassingRecords) {
  struct Case {
    std::string kind, component;
    std::string check;
  };
  for (const auto& c : std::vector<Case>{{"burn", "", "burn"},
                                         {"membw", "", "membw"},
                                         {"health", "gpu", "health.gpu"},
                                         {"health", "ib_port", "health.ib"},
                                         {"health", "node", "health.node"},
                                         {"health", "", "health"},
                                         {"p2p", "", "p2p"},
                                         {"link", "", "links"},
                                         {"nvbandwidth", "", "nvbandwidth"}}) {
    for (const std::string status : {"error", "timeout"}) {
      SCOPED_TRACE(c.kind + " " + c.component + " " + status);
      std::vector<Json> records = passing_cluster();
      Json r = fixtures::record(
          c.kind, "n1", status,
          c.kind == "p2p" || c.component == "gpu" || c.kind == "burn" || c.kind == "membw" ? 0
                                                                                           : -1);
      r["rank"] = 1;
      if (!c.component.empty()) r["component"] = c.component;
      records.push_back(r);
      const FleetVerdict v =
          fixtures::certify(fixtures::evidence_of(records), allreduce_baseline());
      EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified),
                (std::vector<std::string>{"n0", "n2"}));
      const Reason& reason = fixtures::reason(
          fixtures::node(v, "n1"), status == "error" ? "evidence.error" : "evidence.timeout");
      EXPECT_EQ(reason.check, c.check);
      EXPECT_EQ(cited_lines(reason), std::vector<std::uint32_t>{3});
      EXPECT_THAT(reason.message, HasSubstr(c.kind + " said " + status));
    }
  }
}

// A failure that names one node quarantines it (stage.fail), one shared by a link's two ends
// blames neither: both are inconclusive.
TEST(FaultEvidence, AFailureQuarantinesTheOneNodeItNamesAndNoneOfSeveral) {
  std::vector<Json> records = passing_cluster();
  Json p2p = fixtures::p2p("n1", "gpu_gpu", 0, 1, 400);
  p2p["rank"] = 1;
  p2p["status"] = "fail";
  p2p["reason"] = "copy verification failed";
  records.push_back(p2p);
  Json link = fixtures::link("n0", "n2", 20);
  link["ranks"] = {0, 2};
  link["status"] = "fail";
  link["reason"] = "verification failed";
  records.push_back(link);
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_baseline());
  const NodeVerdict& n1 = fixtures::node(v, "n1");
  EXPECT_EQ(n1.state, NodeState::kQuarantined);
  EXPECT_EQ(n1.first_reason()->code, "stage.fail");
  EXPECT_THAT(n1.first_reason()->message, HasSubstr("p2p reported a failure: copy verification "
                                                    "failed ("));
  for (const std::string node : {"n0", "n2"}) {
    const NodeVerdict& n = fixtures::node(v, node);
    EXPECT_EQ(n.state, NodeState::kInconclusive);
    EXPECT_EQ(n.first_reason()->code, "evidence.fail_unattributed");
    EXPECT_THAT(n.first_reason()->message,
                HasSubstr("links: a failure shared by 2 nodes, none of them named as its cause"));
    EXPECT_EQ(cited_lines(*n.first_reason()), std::vector<std::uint32_t>{4});
  }
}

// A run record of a fault weighs on every node of its rank map.
TEST(FaultEvidence, ARunRecordOfAFaultWeighsOnItsRankMap) {
  std::vector<Json> records = passing_cluster();
  Json run = fixtures::run_record({"n1", "n2"}, "run2");
  run["status"] = "error";
  records.push_back(run);
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_baseline());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified), std::vector<std::string>{"n0"});
  EXPECT_EQ(fixtures::node(v, "n2").first_reason()->check, "run");
}

// --- A run that says it went well ------------------------------------------------------------

// meta.json says ok (its earlier commands too) while a record of a fault is inside: a note,
// and an input reason for the node the record weighs on. A run that owns up to a fault (its
// status or an earlier command's) disagrees with nothing.
TEST(FaultEvidence, ARunThatSaysItWentWellWithAFaultInsideIsAFinding) {
  struct Case {
    Json meta;
    bool disagrees;
  };
  const Json ok = {{"schema", 1}, {"run_id", "run1"}, {"status", "ok"}};
  Json earlier_error = ok;
  earlier_error["earlier"] = Json::array({{{"run_id", "run1"}, {"status", "error"}}});
  Json earlier_ok = ok;
  earlier_ok["earlier"] = Json::array({{{"run_id", "run1"}, {"status", "ok"}}});
  Json failed = ok;
  failed["status"] = "fail";
  for (const auto& [meta, disagrees] :
       std::vector<Case>{{ok, true}, {earlier_ok, true}, {earlier_error, false}, {failed, false}}) {
    for (const bool beside_passing : {true, false}) {
      SCOPED_TRACE(meta.dump() + (beside_passing ? " beside passing" : " alone"));
      fixtures::TempDir dir;
      std::string text;
      std::vector<Json> records = beside_passing ? passing_cluster() : std::vector<Json>{};
      records.push_back(collective_error("n1", 1));
      for (const auto& r : records)
        text += r.dump() + "\n";
      dir.write("run1/records.jsonl", text);
      dir.write("run1/meta.json", meta.dump());
      const FleetVerdict v = judge_dir(dir.path(), allreduce_baseline());
      const NodeVerdict& n1 = fixtures::node(v, "n1");
      EXPECT_EQ(n1.state, NodeState::kInconclusive);
      EXPECT_EQ(fixtures::has_code(n1, "input.meta_disagrees"), disagrees);
      const bool noted = std::any_of(v.notes.begin(), v.notes.end(), [](const InputNote& n) {
        return n.code == "input.meta_disagrees";
      });
      EXPECT_EQ(noted, disagrees);
      if (!disagrees) continue;
      const Reason& r = fixtures::reason(n1, "input.meta_disagrees");
      EXPECT_EQ(r.check, "collective.allreduce");  // the fault's check: it is read first
      EXPECT_THAT(r.message, HasSubstr("meta.json says the run went well, but a collective "
                                       "record says error ("));
      EXPECT_EQ(cited_lines(r),
                std::vector<std::uint32_t>{static_cast<std::uint32_t>(records.size())});
      if (beside_passing) {
        EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified),
                  (std::vector<std::string>{"n0", "n2"}));
      }
    }
  }
}

// The other way round: meta.json says a stage failed, erred or timed out (now or in an earlier
// command) while every record is ok. What went wrong left no record, so no node of the file is
// certified on it; a run that says ok, or one whose fault is on record, is judged as it is.
// suite.json's status is the verdict's and does not count.
TEST(FaultEvidence, ARunThatOwnsUpToAFaultItDidNotRecordCertifiesNobody) {
  const Json ok = {{"schema", 1}, {"run_id", "run1"}, {"status", "ok"}};
  const auto with_status = [&](const std::string& status, bool earlier) {
    Json meta = ok;
    if (earlier) {
      meta["earlier"] = Json::array({{{"run_id", "run1"}, {"status", status}}});
    } else {
      meta["status"] = status;
    }
    return meta;
  };
  struct Case {
    Json meta;
    bool unrecorded;
  };
  std::vector<Case> cases = {{ok, false}};
  for (const char* status : {"fail", "error", "timeout"}) {
    cases.push_back({with_status(status, false), true});
    cases.push_back({with_status(status, true), true});
  }
  for (const auto& [meta, unrecorded] : cases) {
    SCOPED_TRACE(meta.dump());
    fixtures::TempDir dir;
    std::string text;
    for (const auto& r : passing_cluster())
      text += r.dump() + "\n";
    dir.write("run1/records.jsonl", text);
    dir.write("run1/meta.json", meta.dump());
    const FleetVerdict v = judge_dir(dir.path(), allreduce_baseline());
    for (const char* node : {"n0", "n1", "n2"}) {
      const NodeVerdict& n = fixtures::node(v, node);
      EXPECT_EQ(n.state, unrecorded ? NodeState::kInconclusive : NodeState::kCertified) << node;
      EXPECT_EQ(fixtures::has_code(n, "input.meta_fault_unrecorded"), unrecorded) << node;
    }
    if (unrecorded) {
      EXPECT_THAT(fixtures::reason(fixtures::node(v, "n0"), "input.meta_fault_unrecorded").message,
                  HasSubstr("meta.json says a stage ended with status "));
    }
  }
  // A fault on record answers for the status: that record's reason, not this one.
  fixtures::TempDir dir;
  std::string text;
  for (const auto& r : passing_cluster())
    text += r.dump() + "\n";
  text += collective_error("n1", 1).dump() + "\n";
  dir.write("run1/records.jsonl", text);
  dir.write("run1/meta.json", with_status("error", false).dump());
  const FleetVerdict recorded = judge_dir(dir.path(), allreduce_baseline());
  EXPECT_FALSE(fixtures::has_code(fixtures::node(recorded, "n0"), "input.meta_fault_unrecorded"));
  // suite.json alone saying fail (a verdict that quarantined someone) is not a stage's fault.
  fixtures::TempDir suite_only;
  suite_only.write("run1/records.jsonl", text.substr(0, text.rfind('{')));
  suite_only.write("run1/suite.json", with_status("fail", false).dump());
  const FleetVerdict by_verdict = judge_dir(suite_only.path(), allreduce_baseline());
  EXPECT_FALSE(fixtures::has_code(fixtures::node(by_verdict, "n0"), "input.meta_fault_unrecorded"));
}

}  // namespace
}  // namespace commcert
