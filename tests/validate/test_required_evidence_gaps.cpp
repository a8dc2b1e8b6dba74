// The required-evidence rule (docs/validator.md, "The rule") case by case: each kind of check
// with the record it needs missing, failed or skipped as the node's only evidence, what counts as
// a node speaking for itself, and which record's reason a gap is explained by. Each case fails on
// a plausible slip in required_evidence_rule.cpp that no other test sees.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/inputs.hpp"

namespace commcert {
namespace {

using fixtures::codes;
using fixtures::collective;
using fixtures::ib_port;
using fixtures::run_record;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

FleetVerdict certify(const std::vector<Json>& records, const std::string& baseline_yaml) {
  return fixtures::certify(fixtures::evidence_of(records), fixtures::baseline_of(baseline_yaml));
}

// The messages of this rule's reasons about a node's `check`, in order.
std::vector<std::string> gaps(const FleetVerdict& verdict, const std::string& node,
                              const std::string& check) {
  std::vector<std::string> out;
  for (const auto& r : fixtures::node(verdict, node).reasons) {
    if (r.check == check && r.rule == "rule.required_evidence") out.push_back(r.message);
  }
  return out;
}

Json node_health(const std::string& host, const std::string& status = "ok") {
  Json node = fixtures::record("health", host, status);
  node["component"] = "node";
  node["gpu_count"] = 1;
  node["ib_port_count"] = 1;
  return node;
}

// A health stage that timed out before it looked at any component.
Json health_stage_timeout(const std::string& host) {
  Json timeout = fixtures::record("health", host, "timeout");
  timeout["reason"] = "health stage on " + host + " never answered";
  timeout["operation"] = "health";
  timeout["timeout_s"] = 60;
  return timeout;
}

Json with_status(Json record, const std::string& status, const std::string& reason) {
  record["status"] = status;
  record["reason"] = reason;
  return record;
}

// --- Per-GPU checks -------------------------------------------------------------------------

struct PerGpuCheck {
  std::string check;
  Json (*good_record)(const std::string& host, int gpu);
};

const std::vector<PerGpuCheck>& per_gpu_checks() {
  static const std::vector<PerGpuCheck> checks = {
      {"burn", [](const std::string& h, int g) { return fixtures::burn(h, g, 700); }},
      {"membw", [](const std::string& h, int g) { return fixtures::membw(h, g, 3000); }},
      {"health.gpu", [](const std::string& h, int g) { return fixtures::gpu_health(h, g); }},
  };
  return checks;
}

// The node is known from a record of another check; the required one has no record at all.
TEST(RequiredEvidenceRule, EachPerGpuCheckWithoutItsRecordIsAGap) {
  for (const auto& [check, good_record] : per_gpu_checks()) {
    SCOPED_TRACE(check);
    const std::string required = "required: [" + check + "]\n";
    // No GPU count in the baseline: one record of any GPU is the least it takes.
    const FleetVerdict uncounted = certify({ib_port("n0", "mlx5_0")}, required);
    EXPECT_THAT(gaps(uncounted, "n0", check),
                ElementsAre(check + ": no evidence (no record for this node)"));
    const FleetVerdict uncounted_good = certify({good_record("n0", 0)}, required);
    EXPECT_THAT(gaps(uncounted_good, "n0", check), ElementsAre());
    // One GPU per node: its own record, at the count's lower limit.
    const std::string one_gpu = required + "node: {gpus: 1}\n";
    const FleetVerdict counted = certify({ib_port("n0", "mlx5_0")}, one_gpu);
    EXPECT_THAT(gaps(counted, "n0", check), ElementsAre(check + ": no evidence for all 1 GPUs"));
    const FleetVerdict counted_good = certify({good_record("n0", 0)}, one_gpu);
    EXPECT_THAT(gaps(counted_good, "n0", check), ElementsAre());
  }
}

// A burn or memory test that ran and failed measured the GPU (its own rule quarantines it); a
// health record that failed says nothing of the GPU's health, so health.gpu has no evidence.
TEST(RequiredEvidenceRule, AFailedMeasurementIsEvidenceAFailedHealthReadIsNot) {
  Json burn = fixtures::burn("n0", 0, 700);
  burn["miscompares"] = 3;
  const FleetVerdict burnt =
      certify({with_status(burn, "fail", "3 miscompares")}, "required: [burn]\nnode: {gpus: 1}\n");
  EXPECT_EQ(fixtures::node(burnt, "n0").state, NodeState::kQuarantined);
  EXPECT_THAT(gaps(burnt, "n0", "burn"), ElementsAre());
  const FleetVerdict unread =
      certify({with_status(fixtures::gpu_health("n0", 0), "fail", "NVML: GPU is lost")},
              "required: [health.gpu]\nnode: {gpus: 1}\n");
  EXPECT_THAT(gaps(unread, "n0", "health.gpu"),
              ElementsAre("health.gpu: no evidence for all 1 GPUs"));
  // A GPU record naming no GPU that says why explains the failed read.
  Json node_wide =
      with_status(fixtures::record("health", "n0", "error"), "error", "NVML init failed");
  node_wide["component"] = "gpu";
  const FleetVerdict explained =
      certify({with_status(fixtures::gpu_health("n0", 0), "fail", "NVML: GPU is lost"), node_wide},
              "required: [health.gpu]\nnode: {gpus: 1}\n");
  EXPECT_THAT(gaps(explained, "n0", "health.gpu"),
              ElementsAre("health.gpu: the stage could not measure for all 1 GPUs: NVML init "
                          "failed"));
}

// A GPU's own record explains its gap before a record that names no GPU, and the first missing
// GPU's reason is the one given even when a later GPU's says something else.
TEST(RequiredEvidenceRule, AMissingGpuIsExplainedByItsOwnRecordFirst) {
  Json node_wide = fixtures::record("burn", "n0", "skipped");
  node_wide["reason"] = "burn stage skipped on this node";
  const std::vector<Json> records = {
      with_status(fixtures::burn("n0", 0, 700), "error", "cuBLAS init failed on gpu 0"),
      with_status(fixtures::burn("n0", 1, 700), "skipped", "gemm_fp8 unsupported on gpu 1"),
      node_wide};
  const FleetVerdict v = certify(records, "required: [burn]\nnode: {gpus: 2}\n");
  EXPECT_THAT(gaps(v, "n0", "burn"),
              ElementsAre("burn: the stage could not measure for all 2 GPUs: cuBLAS init failed "
                          "on gpu 0"));
  // Without a GPU count, any GPU's record says why the node has no evidence.
  const FleetVerdict uncounted = certify(
      {with_status(fixtures::burn("n0", 1, 700), "skipped", "gemm_fp8 unsupported on gpu 1")},
      "required: [burn]\n");
  EXPECT_THAT(gaps(uncounted, "n0", "burn"),
              ElementsAre("burn: skipped: gemm_fp8 unsupported on gpu 1"));
}

// Every bounded figure group is demanded, each named by its label (a group of several metrics,
// the burn kernels, by all of them).
TEST(RequiredEvidenceRule, EveryBoundedFigureGroupIsDemanded) {
  Json membw = fixtures::membw("n0", 0, 3000);
  membw["bandwidth"]["read_bytes_per_s"] = nullptr;
  const FleetVerdict no_read =
      certify({membw},
              "required: [membw]\nnode: {gpus: 1}\nchecks:\n  membw:\n"
              "    copy_gb_per_s: {floor: 1}\n    read_gb_per_s: {floor: 1}\n");
  EXPECT_THAT(gaps(no_read, "n0", "membw"),
              ElementsAre("membw: no memory read bandwidth figure for gpu 0"));
  Json burn = fixtures::burn("n0", 0, 700);
  burn["tflops"] = nullptr;
  const FleetVerdict no_tflops =
      certify({burn},
              "required: [burn]\nnode: {gpus: 1}\nchecks:\n  burn:\n    tflops:\n"
              "      gemm_bf16: {floor: 1}\n      gemm_fp16: {floor: 1}\n");
  EXPECT_THAT(gaps(no_tflops, "n0", "burn"),
              ElementsAre("burn: no one of: burn gemm_bf16, burn gemm_fp16 figure for gpu 0"));
}

// --- Collectives ----------------------------------------------------------------------------

// Only records of the required collective in a node or cluster scope are its evidence, even where
// the baseline bounds no size or scope.
TEST(RequiredEvidenceRule, AnotherCollectiveOrAnUnknownScopeIsNoEvidence) {
  const std::string required = "required: [collective.allreduce]\n";
  const Json allgather = collective(kGiB, 1, "cluster", "n0", {}, "run1", "allgather");
  const Json rack = collective(kGiB, 1, "rack");
  for (const Json& only : {allgather, rack}) {
    const FleetVerdict v = certify({run_record({"n0", "n1"}), only}, required);
    EXPECT_THAT(gaps(v, "n0", "collective.allreduce"),
                ElementsAre("collective.allreduce: no evidence (no allreduce record names this "
                            "node)"));
  }
  const FleetVerdict control = certify({run_record({"n0", "n1"}), collective(kGiB, 1)}, required);
  EXPECT_EQ(control.count(NodeState::kCertified), 2u);
}

// The reason names the scopes the baseline judges, as the user must configure the sweep.
TEST(RequiredEvidenceRule, ANotJudgeableReasonNamesTheJudgedScopes) {
  const std::string node_only =
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    busbw_gb_per_s:\n      node: {floor: 0.001}\n";
  const FleetVerdict cluster = certify({run_record({"n0"}), collective(kGiB, 1)}, node_only);
  EXPECT_THAT(gaps(cluster, "n0", "collective.allreduce"),
              ElementsAre(HasSubstr("judges busbw in scope node; no checked measurement here")));
  const std::string both =
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    busbw_gb_per_s:\n      node: {floor: 0.001}\n      cluster: {floor: 0.001}\n";
  Json one_rank = collective(kGiB, 1);
  one_rank["nranks"] = 1;
  one_rank["nodes"] = 1;
  const FleetVerdict lonely = certify({run_record({"n0"}), one_rank}, both);
  EXPECT_THAT(gaps(lonely, "n0", "collective.allreduce"),
              ElementsAre(HasSubstr("at >= 1 GiB in scope cluster or node ran on a one-rank")));
}

// Of a communicator's skipped records, the first reason is the one given.
TEST(RequiredEvidenceRule, TheFirstSkippedReasonOfACommunicatorIsGiven) {
  std::vector<Json> records = {run_record({"n0"})};
  for (const std::string reason : {"first reason", "second reason"}) {
    Json skipped = collective(kGiB, 1);
    skipped["status"] = "skipped";
    skipped["reason"] = reason;
    records.push_back(skipped);
  }
  const FleetVerdict v = certify(records, "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(v, "n0", "collective.allreduce"),
              ElementsAre("collective.allreduce: skipped: first reason"));
}

Json collective_timeout(const std::string& operation) {
  Json t = fixtures::record("collective", "n0", "timeout");
  t["backend"] = "mpi";
  t["scope"] = "cluster";
  t["operation"] = operation;
  t["timeout_s"] = 30;
  t["nranks"] = 2;
  t["not_arrived"] = Json::array({{{"rank", 1}, {"host", "n1"}}});
  t["attributed"] = true;
  t["rank_states"] = Json::array();
  return t;
}

// In a run without a rank map, a node named only as another node's straggler took part only if
// it speaks for itself elsewhere: a rank map of a finished run that lists it, or any record it
// wrote. Run 1 has a rank map but no allreduce; run 2's only allreduce record is n0's.
TEST(RequiredEvidenceRule, ANodeSpeaksForItselfByAnyRecordItWroteOrARankMapListingIt) {
  Json straggling = collective(kGiB, 1, "cluster", "n0", {}, "run2");
  straggling["straggler"]["host"] = "n1";
  const std::vector<std::pair<std::string, Json>> own_evidence = {
      {"rank map", run_record({"n0", "n1"})},
      {"burn", fixtures::burn("n1", 0, 700)},
      {"membw", fixtures::membw("n1", 0, 3000)},
      {"gpu health", fixtures::gpu_health("n1", 0)},
      {"ib port", ib_port("n1", "mlx5_0")},
      {"node health", node_health("n1")},
      {"p2p", fixtures::p2p("n1", "host_gpu", -1, 0, 50)},
      {"link", fixtures::link("n1", "n0", 20)},
      {"collective error", with_status(fixtures::record("collective", "n1", "error", -1, "run3"),
                                       "error", "communicator init failed")},
      {"failed health stage", health_stage_timeout("n1")},
      {"timeout of another collective",
       [] {
         Json t = collective_timeout("allgather float 64 KiB out-of-place");
         t["host"] = "n1";
         t["run_id"] = "run4";
         t["not_arrived"] = Json::array({{{"rank", 1}, {"host", "n0"}}});
         return t;
       }()},
  };
  for (const auto& [what, record] : own_evidence) {
    SCOPED_TRACE(what);
    const FleetVerdict v = certify({run_record({"n0", "n2"}), straggling, record},
                                   "required: [collective.allreduce]\n");
    EXPECT_THAT(gaps(v, "n1", "collective.allreduce"), ElementsAre());
  }
  // Named only as the straggler: no evidence of its own.
  const FleetVerdict named_only = certify({run_record({"n0", "n2"}), straggling, node_health("n2")},
                                          "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(named_only, "n1", "collective.allreduce"),
              ElementsAre(HasSubstr("records name this node only inside other nodes' records")));
}

// A timeout in one of a node's runs explains its gap even where a later run measured something
// the baseline cannot judge.
TEST(RequiredEvidenceRule, ATimeoutInAnyOfTheNodesRunsExplainsItsGap) {
  Json small = collective(1 << 20, 150, "cluster", "n0", {}, "run2");
  const FleetVerdict v = certify(
      {run_record({"n0", "n1"}, "run1"),
       collective_timeout("allreduce float sum 64 KiB out-of-place"),
       run_record({"n0", "n1"}, "run2"), small},
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n    min_bytes: 1G\n"
      "    busbw_gb_per_s:\n      cluster: {floor: 100}\n");
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->code, "evidence.timeout");
}

// A timeout explains the gaps of its own check (or of an unnamed collective), not another's.
TEST(RequiredEvidenceRule, OnlyATimeoutOfTheCheckExplainsItsGap) {
  const std::string required = "required: [collective.allreduce]\n";
  const FleetVerdict other =
      certify({run_record({"n0", "n1"}), collective_timeout("allgather float 64 KiB out-of-place")},
              required);
  EXPECT_EQ(fixtures::node(other, "n0").first_reason()->code, "evidence.missing");
  const FleetVerdict own = certify(
      {run_record({"n0", "n1"}), collective_timeout("allreduce float sum 64 KiB out-of-place")},
      required);
  EXPECT_EQ(fixtures::node(own, "n0").first_reason()->code, "evidence.timeout");
}

Json collective_error(const std::string& host, const std::string& run, const std::string& why) {
  Json error = fixtures::record("collective", host, "error", -1, run);
  error["backend"] = "mpi";
  error["reason"] = why;
  return error;
}

// A stage error explains the gap of the node that wrote it, listed in the run's rank map or not;
// of two runs' errors, the first run's is given.
TEST(RequiredEvidenceRule, AStageErrorExplainsTheGapsOfItsRun) {
  const std::string required = "required: [collective.allreduce]\n";
  const FleetVerdict outsider = certify(
      {run_record({"n0", "n1"}), collective_error("n2", "run1", "MPI_ERR_OTHER")}, required);
  EXPECT_EQ(fixtures::node(outsider, "n2").first_reason()->code, "evidence.error");

  const FleetVerdict two_runs =
      certify({run_record({"n0"}, "run1"), collective_error("n0", "run1", "first run's error"),
               run_record({"n0"}, "run2"), collective_error("n0", "run2", "second run's error")},
              required);
  EXPECT_THAT(fixtures::node(two_runs, "n0").first_reason()->message,
              HasSubstr("first run's error"));
}

// --- Runs that never finished ---------------------------------------------------------------

// Every unfinished run holds back its own nodes, each reason naming the input check, this rule
// and the run's file.
TEST(RequiredEvidenceRule, EveryUnfinishedRunHoldsBackItsNodes) {
  fixtures::TempDir dir;
  std::vector<std::string> paths;
  for (const std::string name : {"a", "b"}) {
    const std::string host = "n" + name;
    dir.write(name + "/records.jsonl", fixtures::burn(host, 0, 700).dump() + "\n");
    dir.write(name + "/meta.json", Json({{"run_id", "run1"}, {"status", "running"}}).dump());
    paths.push_back((dir.path() / name).string());
  }
  LoadedInputs inputs = load_inputs(paths, {});
  const FleetVerdict v =
      fixtures::certify(inputs.evidence, fixtures::baseline_of("required: [burn]\n"));
  for (const std::string node : {"na", "nb"}) {
    SCOPED_TRACE(node);
    EXPECT_THAT(codes(fixtures::node(v, node)), ElementsAre("input.run_unfinished"));
    const Reason& reason = *fixtures::node(v, node).first_reason();
    EXPECT_EQ(reason.check, "input");
    EXPECT_EQ(reason.rule, "rule.required_evidence");
    ASSERT_EQ(reason.evidence.size(), 1u);
    EXPECT_EQ(reason.evidence[0].line, 0u);
    EXPECT_THAT(reason.message, HasSubstr((dir.path() / node.substr(1)).string()));
  }
}

// --- Health: ports, node record, stage failures ---------------------------------------------

// A port that could not be read gives its reason; of two, the first one's.
TEST(RequiredEvidenceRule, APortThatCouldNotBeReadGivesItsReason) {
  const auto unreadable = [](const std::string& port) {
    return with_status(ib_port("n0", port), "error", port + ": query failed");
  };
  const std::string two_ports = "required: [health.ib]\nnode: {ib_ports: 2}\n";
  EXPECT_THAT(
      gaps(certify({ib_port("n0", "mlx5_0"), unreadable("mlx5_1")}, two_ports), "n0", "health.ib"),
      ElementsAre("health.ib: the stage could not measure (1 of 2 ports reported): "
                  "mlx5_1: query failed"));
  EXPECT_THAT(
      gaps(certify({unreadable("mlx5_0"), unreadable("mlx5_1")}, two_ports), "n0", "health.ib"),
      ElementsAre("health.ib: the stage could not measure (0 of 2 ports reported): "
                  "mlx5_0: query failed"));
}

TEST(RequiredEvidenceRule, WithoutAPortCountOnePortIsTheLeast) {
  const FleetVerdict none = certify({node_health("n0")}, "required: [health.ib]\n");
  EXPECT_THAT(gaps(none, "n0", "health.ib"),
              ElementsAre("health.ib: no evidence (0 of 1 ports reported)"));
  const FleetVerdict one = certify({ib_port("n0", "mlx5_0")}, "required: [health.ib]\n");
  EXPECT_THAT(gaps(one, "n0", "health.ib"), ElementsAre());
  // More good ports than the baseline counts leave no port without evidence.
  const FleetVerdict more = certify({ib_port("n0", "mlx5_0"), ib_port("n0", "mlx5_1")},
                                    "required: [health.ib]\nnode: {ib_ports: 1}\n");
  EXPECT_THAT(gaps(more, "n0", "health.ib"), ElementsAre());
}

// A health stage that failed before it read anything explains every health gap of its node,
// each node by its own failure.
TEST(RequiredEvidenceRule, AHealthStageFailureExplainsEachNodesGaps) {
  const FleetVerdict v = certify({health_stage_timeout("n0"), health_stage_timeout("n1")},
                                 "required: [health.ib, health.node]\nnode: {ib_ports: 1}\n");
  for (const std::string node : {"n0", "n1"}) {
    SCOPED_TRACE(node);
    EXPECT_THAT(gaps(v, node, "health.ib"),
                ElementsAre("health.ib: no complete measurement (0 of 1 ports reported): health "
                            "stage on " +
                            node + " never answered"));
    EXPECT_THAT(gaps(v, node, "health.node"),
                ElementsAre("health.node: no complete measurement: health stage on " + node +
                            " never answered"));
  }
  // A GPU's or the node record's own reason comes first.
  const FleetVerdict gpu_skipped =
      certify({with_status(fixtures::gpu_health("n0", 0), "skipped", "NVML not loaded"),
               health_stage_timeout("n0")},
              "required: [health.gpu]\nnode: {gpus: 1}\n");
  EXPECT_THAT(gaps(gpu_skipped, "n0", "health.gpu"),
              ElementsAre("health.gpu: skipped for all 1 GPUs: NVML not loaded"));
  const FleetVerdict skipped = certify(
      {with_status(node_health("n0"), "skipped", "no DMI table"), health_stage_timeout("n0")},
      "required: [health.node]\n");
  EXPECT_THAT(gaps(skipped, "n0", "health.node"),
              ElementsAre("health.node: skipped: no DMI table"));
}

// A bounded port rate needs every good port's figure, node by node; an unbounded one does not.
TEST(RequiredEvidenceRule, ABoundedPortRateNeedsEachPortsFigure) {
  const std::string required = "required: [health.ib]\nnode: {ib_ports: 1}\n";
  const std::string rate_bounded =
      required + "checks:\n  health.ib:\n    rate_gbit_per_s: {floor: 100}\n";
  std::vector<Json> records;
  for (const std::string host : {"n0", "n1"}) {
    Json port = ib_port(host, "mlx5_0");
    port["rate_gbps"] = nullptr;
    records.push_back(port);
  }
  const FleetVerdict bounded = certify(records, rate_bounded);
  for (const std::string node : {"n0", "n1"}) {
    SCOPED_TRACE(node);
    EXPECT_THAT(gaps(bounded, node, "health.ib"),
                ElementsAre("health.ib: no port rate figure for mlx5_0 port 1"));
  }
  const FleetVerdict unbounded = certify(records, required);
  EXPECT_EQ(unbounded.count(NodeState::kCertified), 2u);
}

// --- Links and p2p --------------------------------------------------------------------------

Json verbs_link(int rail, const std::string& status = "ok", const std::string& reason = "") {
  Json r = fixtures::link("n0", "n1", 20);
  r["transport"] = "verbs";
  r["rail"] = rail;
  if (status != "ok") {
    r = with_status(r, status, reason);
    r["bytes_per_s"] = nullptr;
    r["samples_s"] = Json::array();
  }
  return r;
}

// Over verbs each RDMA port the baseline counts is a rail that needs its own measurement, at a
// count of one as at more; a record of the untested rail says why.
TEST(RequiredEvidenceRule, EachVerbsRailTheBaselineCountsNeedsAMeasurement) {
  const FleetVerdict wrong_rail = certify({run_record({"n0", "n1"}), verbs_link(1)},
                                          "required: [links]\nnode: {ib_ports: 1}\n");
  EXPECT_THAT(gaps(wrong_rail, "n0", "links"),
              ElementsAre("links: no evidence over verbs for rail 0 (of 1): run one process per "
                          "NIC (one per GPU)"));
  const FleetVerdict one_rail = certify({run_record({"n0", "n1"}), verbs_link(0)},
                                        "required: [links]\nnode: {ib_ports: 1}\n");
  EXPECT_EQ(one_rail.count(NodeState::kCertified), 2u);
  const FleetVerdict errored =
      certify({run_record({"n0", "n1"}), verbs_link(0), verbs_link(1, "error", "mlx5_1: QP error")},
              "required: [links]\nnode: {ib_ports: 2}\n");
  EXPECT_THAT(gaps(errored, "n1", "links"), ElementsAre(HasSubstr(": mlx5_1: QP error")));
  const FleetVerdict said_why =
      certify({run_record({"n0", "n1"}), verbs_link(0), verbs_link(1, "skipped", "mlx5_1 is down")},
              "required: [links]\nnode: {ib_ports: 2}\n");
  EXPECT_THAT(gaps(said_why, "n1", "links"),
              ElementsAre("links: skipped over verbs for rail 1 (of 2): run one process per NIC "
                          "(one per GPU): mlx5_1 is down"));
}

// Every node is judged: one with no p2p record, one with host copies only (its baseline counts
// no GPUs, so pairs are demanded), and another with none.
TEST(RequiredEvidenceRule, EveryNodeNeedsP2pAndGpuPairsUnlessItHasOneGpu) {
  const std::vector<Json> records = {node_health("n0"), fixtures::p2p("n1", "host_gpu", -1, 0, 50),
                                     node_health("n2")};
  const FleetVerdict v = certify(records, "required: [p2p]\n");
  EXPECT_THAT(gaps(v, "n0", "p2p"), ElementsAre("p2p: no evidence"));
  EXPECT_THAT(gaps(v, "n1", "p2p"),
              ElementsAre("p2p: no evidence for GPU pairs (no gpu_gpu record)"));
  EXPECT_THAT(gaps(v, "n2", "p2p"), ElementsAre("p2p: no evidence"));
  const FleetVerdict one_gpu = certify(records, "required: [p2p]\nnode: {gpus: 1}\n");
  EXPECT_THAT(gaps(one_gpu, "n1", "p2p"), ElementsAre());
}

TEST(RequiredEvidenceRule, EveryNodeWithoutANodeRecordIsAGap) {
  const FleetVerdict v =
      certify({ib_port("n0", "mlx5_0"), ib_port("n1", "mlx5_0")}, "required: [health.node]\n");
  for (const std::string node : {"n0", "n1"}) {
    EXPECT_THAT(gaps(v, node, "health.node"),
                ElementsAre("health.node: no evidence (no node health record)"))
        << node;
  }
}

// --- What counts, and whose reason is given ---------------------------------------------------

// A bisection round (groups scope) is localization evidence, judged against other groups only:
// it is no evidence for the collective's check.
TEST(RequiredEvidenceRule, ABisectionRoundIsNoEvidenceForTheCheck) {
  Json groups_round = collective(kGiB, 100, "groups");
  groups_round["group_nodes"] = Json::array({"n0", "n1"});
  groups_round["round"] = 0;
  const FleetVerdict v =
      certify({run_record({"n0", "n1"}), groups_round}, "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(v, "n0", "collective.allreduce"),
              ElementsAre("collective.allreduce: no evidence (no allreduce record names this "
                          "node)"));
}

// A skipped record's reason points at that record.
TEST(RequiredEvidenceRule, ASkippedReasonNamesItsRecord) {
  Json skipped = collective(kGiB, 1);
  skipped["status"] = "skipped";
  skipped["reason"] = "no GPU";
  const FleetVerdict v = certify({run_record({"n0"}), node_health("n0"), skipped},
                                 "required: [collective.allreduce]\n");
  const Reason& reason = fixtures::reason(fixtures::node(v, "n0"), "evidence.skipped");
  ASSERT_EQ(reason.evidence.size(), 1u);
  EXPECT_EQ(reason.evidence[0].line, 3u);
}

// A membw record whose figures fail their bound is evidence (the membw rules judge it); a burn
// or membw record naming no GPU is no GPU's evidence.
TEST(RequiredEvidenceRule, AFailedMeasurementIsEvidenceARecordOfNoGpuIsNot) {
  const FleetVerdict failed = certify({with_status(fixtures::membw("n0", 0, 3000), "fail", "slow")},
                                      "required: [membw]\nnode: {gpus: 1}\n");
  EXPECT_THAT(gaps(failed, "n0", "membw"), ElementsAre());
  for (const auto& [check, good_record] : per_gpu_checks()) {
    SCOPED_TRACE(check);
    Json no_gpu = good_record("n0", 0);
    no_gpu["gpu"] = nullptr;
    const FleetVerdict v = certify({no_gpu}, "required: [" + check + "]\n");
    EXPECT_THAT(gaps(v, "n0", check),
                ElementsAre(check + ": no evidence (no record for this node)"));
  }
}

// Only a bounded figure is the figure a bounded group needs: a GPU measured with another kernel
// than the one the baseline bounds has no figure to judge.
TEST(RequiredEvidenceRule, AnUnboundedKernelsFigureIsNotTheBoundedOne) {
  Json fp8 = fixtures::burn("n0", 0, 700);
  fp8["kernel"] = "gemm_fp8";
  const FleetVerdict v =
      certify({fp8},
              "required: [burn]\nnode: {gpus: 1}\nchecks:\n  burn:\n    tflops:\n"
              "      gemm_bf16: {floor: 1}\n");
  EXPECT_THAT(gaps(v, "n0", "burn"), ElementsAre("burn: no burn gemm_bf16 figure for gpu 0"));
}

// Each node's own unmeasured record explains its gap, not only the first such record read.
TEST(RequiredEvidenceRule, EachNodesOwnRecordExplainsItsLinkAndPairGaps) {
  Json down = fixtures::link("n0", "n1", 20);
  down = with_status(down, "error", "n0 and n1: mlx5_0 down");
  down["bytes_per_s"] = nullptr;
  Json lonely = fixtures::record("link", "n2", "skipped");
  lonely["nodes"] = Json::array({"n2"});
  lonely["reason"] = "n2: no partner";
  const FleetVerdict links = certify({down, lonely}, "required: [links]\n");
  EXPECT_THAT(gaps(links, "n2", "links"), ElementsAre("links: skipped: n2: no partner"));

  std::vector<Json> records;
  for (const std::string host : {"n0", "n1"}) {
    records.push_back(fixtures::p2p(host, "host_gpu", -1, 0, 50));
    Json pair =
        with_status(fixtures::p2p(host, "gpu_gpu", 0, 1, 50), "skipped", host + ": no peer access");
    pair["bytes_per_s"] = nullptr;
    records.push_back(pair);
  }
  const FleetVerdict p2p = certify(records, "required: [p2p]\n");
  EXPECT_THAT(gaps(p2p, "n1", "p2p"),
              ElementsAre("p2p: skipped for GPU pairs: n1: no peer access"));
}

// A port's own record explains a port gap before a failed health stage does, whatever its
// status; and a node short of ports is still asked for each good port's rate.
TEST(RequiredEvidenceRule, APortsOwnRecordComesBeforeAStageFailureAndRatesAreStillAsked) {
  for (const std::string status : {"error", "skipped"}) {
    SCOPED_TRACE(status);
    const FleetVerdict v =
        certify({with_status(ib_port("n0", "mlx5_0"), status, "mlx5_0: unreadable"),
                 health_stage_timeout("n0")},
                "required: [health.ib]\n");
    EXPECT_THAT(gaps(v, "n0", "health.ib"),
                ElementsAre(HasSubstr("(0 of 1 ports reported): mlx5_0: unreadable")));
  }
  Json unrated = ib_port("n0", "mlx5_0");
  unrated["rate_gbps"] = nullptr;
  const FleetVerdict short_and_unrated =
      certify({unrated},
              "required: [health.ib]\nnode: {ib_ports: 2}\n"
              "checks:\n  health.ib:\n    rate_gbit_per_s: {floor: 100}\n");
  EXPECT_THAT(gaps(short_and_unrated, "n0", "health.ib"),
              ElementsAre("health.ib: no evidence (1 of 2 ports reported)",
                          "health.ib: no port rate figure for mlx5_0 port 1"));
}

// A run without a rank map: the writer of a node-scope record that ran nothing took part in the
// run, so the run's timeout explains its gap (the record names no group, and a node-scope
// writer is not otherwise counted among the run's nodes).
TEST(RequiredEvidenceRule, ATimeoutExplainsTheGapOfANodeScopeRecordsWriter) {
  Json skipped = collective(kGiB, 1, "node", "n0");
  skipped["status"] = "skipped";
  skipped["reason"] = "not run on n0";
  skipped.erase("group_nodes");
  Json timeout = collective_timeout("allreduce float sum 1 GiB out-of-place");
  timeout["host"] = "n1";
  timeout["rank_states"] = Json::array({{{"rank", 1}, {"host", "n1"}}});
  const FleetVerdict v = certify({skipped, timeout}, "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(v, "n0", "collective.allreduce"), ElementsAre(HasSubstr("run run1 timed out")));
}

// With no busbw bound, a one-rank communicator's measurement is evidence enough: nothing asks
// for a bus bandwidth.
TEST(RequiredEvidenceRule, WithNothingBoundedAOneRankMeasurementIsEvidence) {
  Json one_rank = collective(kGiB, 1);
  one_rank["nranks"] = 1;
  const FleetVerdict v =
      certify({run_record({"n0"}), one_rank}, "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(v, "n0", "collective.allreduce"), ElementsAre());
}

// The rank map of a run that never finished confirms nobody: a node it lists, named elsewhere
// only inside another node's record, has no evidence of its own.
TEST(RequiredEvidenceRule, AnUnfinishedRunsRankMapConfirmsNobody) {
  fixtures::TempDir dir;
  Json straggling = collective(kGiB, 1, "cluster", "n0", {}, "run2");
  straggling["straggler"]["host"] = "n1";
  dir.write("done/records.jsonl", straggling.dump() + "\n");
  dir.write("running/records.jsonl", run_record({"n1", "n2"}, "run3").dump() + "\n");
  dir.write("running/meta.json", Json({{"run_id", "run3"}, {"status", "running"}}).dump());
  LoadedInputs inputs =
      load_inputs({(dir.path() / "done").string(), (dir.path() / "running").string()}, {});
  const FleetVerdict v = fixtures::certify(
      inputs.evidence, fixtures::baseline_of("required: [collective.allreduce]\n"));
  EXPECT_THAT(gaps(v, "n1", "collective.allreduce"),
              ElementsAre(HasSubstr("name this node only inside other nodes' records")));
}

// Timeouts: the first of a node's timed-out runs is named, a later run's timeout explains a gap
// too, and a run's timeout explains the gap of every node of the run.
TEST(RequiredEvidenceRule, WhichTimeoutExplainsAGap) {
  const std::string required = "required: [collective.allreduce]\n";
  const auto timeout_of = [](const std::string& run, const std::string& reason) {
    Json t = collective_timeout("allreduce float sum 64 KiB out-of-place");
    t["run_id"] = run;
    t["reason"] = reason;
    return t;
  };
  const FleetVerdict both =
      certify({run_record({"n0", "n1"}, "run1"), timeout_of("run1", "first"),
               run_record({"n0", "n1"}, "run2"), timeout_of("run2", "second")},
              required);
  for (const std::string node : {"n0", "n1"}) {
    EXPECT_THAT(gaps(both, node, "collective.allreduce"),
                ElementsAre(HasSubstr("run run1 timed out: first")))
        << node;
  }
  Json skipped = collective(kGiB, 1, "cluster", "n0", {}, "run1");
  skipped["status"] = "skipped";
  skipped["reason"] = "not this time";
  const FleetVerdict later = certify({run_record({"n0", "n1"}, "run1"), skipped,
                                      run_record({"n0", "n1"}, "run2"), timeout_of("run2", "late")},
                                     required);
  EXPECT_THAT(gaps(later, "n0", "collective.allreduce"),
              ElementsAre(HasSubstr("run run2 timed out: late")));
  // Another collective's timeout read first explains nothing of this one; the next does.
  Json broadcast = timeout_of("run1", "a broadcast");
  broadcast["operation"] = "broadcast float root 0 64 KiB out-of-place";
  const FleetVerdict other_first =
      certify({run_record({"n0", "n1"}, "run1"), broadcast, run_record({"n0", "n1"}, "run2"),
               timeout_of("run2", "the allreduce")},
              required);
  EXPECT_THAT(gaps(other_first, "n0", "collective.allreduce"),
              ElementsAre(HasSubstr("run run2 timed out: the allreduce")));
  // A timeout outside any collective (setting the communicator up) explains every one.
  Json setup = timeout_of("run1", "communicator setup never returned");
  setup["operation"] = "communicator init";
  const FleetVerdict no_collective = certify({run_record({"n0", "n1"}, "run1"), setup}, required);
  EXPECT_THAT(gaps(no_collective, "n0", "collective.allreduce"),
              ElementsAre(HasSubstr("run run1 timed out: communicator setup never returned")));
}

// Another collective's record is no evidence, whichever was read first.
TEST(RequiredEvidenceRule, AnotherCollectivesRecordIsNoEvidenceWhateverItsOrder) {
  const Json allreduce = collective(kGiB, 1, "node", "n0");
  const Json allgather = collective(kGiB, 1, "node", "n1", {}, "run1", "allgather");
  for (const bool allgather_first : {false, true}) {
    const std::vector<Json> records =
        allgather_first ? std::vector<Json>{run_record({"n0", "n1"}), allgather, allreduce}
                        : std::vector<Json>{run_record({"n0", "n1"}), allreduce, allgather};
    const FleetVerdict v = certify(records, "required: [collective.allreduce]\n");
    EXPECT_THAT(gaps(v, "n1", "collective.allreduce"), ElementsAre(HasSubstr("no evidence")))
        << allgather_first;
    EXPECT_THAT(gaps(v, "n0", "collective.allreduce"), ElementsAre()) << allgather_first;
  }
}

// A per-GPU gap: a later missing GPU's own record explains it when the first has none; a GPU's
// own error comes before a failed health stage; a failed stage explains a GPU with no record.
TEST(RequiredEvidenceRule, WhichRecordExplainsAPerGpuGap) {
  const FleetVerdict second = certify(
      {node_health("n0"), with_status(fixtures::burn("n0", 1, 700), "skipped", "no fp8 on gpu 1")},
      "required: [burn]\nnode: {gpus: 2}\n");
  EXPECT_THAT(gaps(second, "n0", "burn"), ElementsAre(HasSubstr("no fp8 on gpu 1")));
  const FleetVerdict own_error =
      certify({with_status(fixtures::gpu_health("n0", 0), "error", "NVML: GPU is lost"),
               health_stage_timeout("n0")},
              "required: [health.gpu]\nnode: {gpus: 1}\n");
  EXPECT_THAT(gaps(own_error, "n0", "health.gpu"), ElementsAre(HasSubstr("NVML: GPU is lost")));
  const FleetVerdict stage = certify({node_health("n0"), health_stage_timeout("n0")},
                                     "required: [health.gpu]\nnode: {gpus: 1}\n");
  EXPECT_THAT(gaps(stage, "n0", "health.gpu"),
              ElementsAre(HasSubstr("health stage on n0 never answered")));
}

// Without a port count nothing asks for a verbs rail: one measured rail is enough.
TEST(RequiredEvidenceRule, WithoutAPortCountAnyVerbsRailIsEnough) {
  const FleetVerdict v = certify({run_record({"n0", "n1"}), verbs_link(1)}, "required: [links]\n");
  EXPECT_EQ(v.count(NodeState::kCertified), 2u);
}

// Each bounded figure group a GPU lacks is its own gap; each node's port records and each run's
// error are read, not only the first.
TEST(RequiredEvidenceRule, EveryLackingFigureEveryPortRecordAndEveryRunErrorIsRead) {
  Json membw = fixtures::membw("n0", 0, 3000);
  membw["bandwidth"]["copy_bytes_per_s"] = nullptr;
  membw["bandwidth"]["read_bytes_per_s"] = nullptr;
  const FleetVerdict figures =
      certify({membw},
              "required: [membw]\nnode: {gpus: 1}\nchecks:\n  membw:\n"
              "    copy_gb_per_s: {floor: 1}\n    read_gb_per_s: {floor: 1}\n");
  EXPECT_EQ(gaps(figures, "n0", "membw").size(), 2u);
  const FleetVerdict ports =
      certify({with_status(ib_port("n0", "mlx5_0"), "error", "mlx5_0: unreadable"),
               ib_port("n1", "mlx5_0")},
              "required: [health.ib]\n");
  EXPECT_THAT(gaps(ports, "n1", "health.ib"), ElementsAre());
  const auto error_in = [](const std::string& host, const std::string& run) {
    return with_status(fixtures::record("collective", host, "error", -1, run), "error",
                       host + ": communicator init failed");
  };
  const FleetVerdict errors = certify({run_record({"n0"}, "run1"), error_in("n0", "run1"),
                                       run_record({"n1"}, "run2"), error_in("n1", "run2")},
                                      "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(errors, "n1", "collective.allreduce"),
              ElementsAre(HasSubstr("n1: communicator init failed")));
}

// --- Which record counts and whose reason is given -------------------------------------------

const std::string kClusterBusbw =
    "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n    min_bytes: 1G\n"
    "    busbw_gb_per_s:\n      cluster: {floor: 1}\n";

// The judged size is the least one: a byte below it is not judged, the size and anything larger is.
TEST(RequiredEvidenceRule, AMeasurementAtOrAboveTheJudgedSizeIsEvidence) {
  for (const auto& [bytes, judged] : std::vector<std::pair<std::uint64_t, bool>>{
           {kGiB - 1, false}, {kGiB, true}, {kGiB + 1, true}, {2 * kGiB, true}}) {
    SCOPED_TRACE(bytes);
    const FleetVerdict v = certify({run_record({"n0"}), collective(bytes, 150)}, kClusterBusbw);
    EXPECT_EQ(gaps(v, "n0", "collective.allreduce").empty(), judged);
  }
}

// With both scopes judged, a measurement too small for either names both and its own size.
TEST(RequiredEvidenceRule, ATooSmallMeasurementsReasonNamesEveryJudgedScope) {
  const FleetVerdict v = certify({run_record({"n0"}), collective(1 << 20, 150)},
                                 "required: [collective.allreduce]\nchecks:\n"
                                 "  collective.allreduce:\n    min_bytes: 1G\n"
                                 "    busbw_gb_per_s:\n      node: {floor: 1}\n"
                                 "      cluster: {floor: 1}\n");
  EXPECT_THAT(gaps(v, "n0", "collective.allreduce"),
              ElementsAre(HasSubstr("the baseline judges busbw at >= 1 GiB in scope cluster or "
                                    "node; the largest checked measurement there is 1 MiB")));
}

// Only a one-rank communicator is known to have no bus bandwidth: a record that does not say
// how many ranks it ran on is judged by its figure.
TEST(RequiredEvidenceRule, AMeasurementWithoutARankCountIsJudged) {
  Json unsaid = collective(kGiB, 150);
  unsaid.erase("nranks");
  const FleetVerdict v = certify({run_record({"n0"}), unsaid}, kClusterBusbw);
  EXPECT_THAT(gaps(v, "n0", "collective.allreduce"), ElementsAre());
}

// A skipped record with a reason read first does not end the reading: another node's
// measurement after it is still its evidence.
TEST(RequiredEvidenceRule, RecordsAfterASkippedOneAreStillRead) {
  Json skipped = with_status(collective(kGiB, 1, "node", "n1"), "skipped", "n1: no GPU");
  const FleetVerdict v =
      certify({run_record({"n0", "n1"}), skipped, collective(kGiB, 150, "node", "n0")},
              "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(v, "n0", "collective.allreduce"), ElementsAre());
  EXPECT_THAT(gaps(v, "n1", "collective.allreduce"),
              ElementsAre("collective.allreduce: skipped: n1: no GPU"));
}

// A node skipped in two runs is explained by the first run's reason.
TEST(RequiredEvidenceRule, ANodeSkippedInTwoRunsIsExplainedByTheFirst) {
  std::vector<Json> records;
  for (const std::string run : {"run1", "run2"}) {
    records.push_back(run_record({"n0"}, run));
    records.push_back(
        with_status(collective(kGiB, 1, "cluster", "n0", {}, run), "skipped", "skipped in " + run));
  }
  const FleetVerdict v = certify(records, "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(v, "n0", "collective.allreduce"),
              ElementsAre("collective.allreduce: skipped: skipped in run1"));
}

// A node named only inside another node's record of one run (a rank map that does not list
// it), but with a record of its own in another run, is explained by its own record.
TEST(RequiredEvidenceRule, ANodesOwnRecordComesBeforeBeingNamedOnlyElsewhere) {
  Json about_n1 = collective(kGiB, 1, "node", "n0", {}, "run1");
  about_n1["group_nodes"] = Json::array({"n1"});
  const FleetVerdict v = certify(
      {run_record({"n0", "n2"}, "run1"), about_n1, run_record({"n1"}, "run3"),
       with_status(collective(kGiB, 1, "cluster", "n1", {}, "run3"), "skipped", "n1: no GPU")},
      "required: [collective.allreduce]\n");
  EXPECT_THAT(gaps(v, "n1", "collective.allreduce"),
              ElementsAre("collective.allreduce: skipped: n1: no GPU"));
}

// Two GPUs each skipped with a reason: the first GPU's is given.
TEST(RequiredEvidenceRule, OfTwoGpusReasonsTheFirstGpusIsGiven) {
  const FleetVerdict v =
      certify({with_status(fixtures::burn("n0", 0, 700), "skipped", "gpu 0 busy"),
               with_status(fixtures::burn("n0", 1, 700), "skipped", "gpu 1 busy")},
              "required: [burn]\nnode: {gpus: 2}\n");
  EXPECT_THAT(gaps(v, "n0", "burn"), ElementsAre("burn: skipped for all 2 GPUs: gpu 0 busy"));
}

// Where the baseline counts no GPUs, the node's first GPU record explains the gap, even a
// failed health read (which gives no reason): not a later GPU's, nor GPU 0's when a record
// naming no GPU comes first.
TEST(RequiredEvidenceRule, WithoutAGpuCountTheFirstGpuRecordExplainsTheGap) {
  const auto health = [](int gpu, const std::string& status, const std::string& reason) {
    Json r = with_status(fixtures::gpu_health("n0", gpu), status, reason);
    if (gpu < 0) r["gpu"] = nullptr;
    return r;
  };
  const FleetVerdict later_gpu =
      certify({health(0, "fail", "ECC errors"), health(1, "skipped", "gpu 1 busy")},
              "required: [health.gpu]\n");
  EXPECT_THAT(gaps(later_gpu, "n0", "health.gpu"), ElementsAre("health.gpu: no evidence"));
  const FleetVerdict no_gpu_first =
      certify({health(-1, "fail", "NVML count failed"), health(0, "skipped", "gpu 0 busy")},
              "required: [health.gpu]\n");
  EXPECT_THAT(gaps(no_gpu_first, "n0", "health.gpu"), ElementsAre("health.gpu: no evidence"));
}

// A node short of a GPU is still asked for the figures of the GPUs it has.
TEST(RequiredEvidenceRule, ANodeShortOfAGpuIsStillAskedForItsGpusFigures) {
  Json membw = fixtures::membw("n0", 0, 3000);
  membw["bandwidth"]["copy_bytes_per_s"] = nullptr;
  const FleetVerdict v = certify(
      {membw},
      "required: [membw]\nnode: {gpus: 2}\nchecks:\n  membw:\n    copy_gb_per_s: {floor: 1}\n");
  EXPECT_THAT(gaps(v, "n0", "membw"),
              ElementsAre(HasSubstr("for gpu 1 (of 2)"), HasSubstr("figure for gpu 0")));
}

// A host copy's skipped record explains no GPU-pair gap: only a gpu_gpu record does.
TEST(RequiredEvidenceRule, OnlyAPairRecordExplainsAPairGap) {
  Json host_skipped =
      with_status(fixtures::p2p("n0", "host_gpu", -1, 1, 50), "skipped", "gpu 1: no pinned memory");
  host_skipped["bytes_per_s"] = nullptr;
  const FleetVerdict v =
      certify({fixtures::p2p("n0", "host_gpu", -1, 0, 50), host_skipped}, "required: [p2p]\n");
  EXPECT_THAT(gaps(v, "n0", "p2p"),
              ElementsAre("p2p: no evidence for GPU pairs (no gpu_gpu record)"));
}

// A node record's own error comes before a failed health stage, with its own reason.
TEST(RequiredEvidenceRule, ANodeRecordsOwnErrorComesBeforeAStageFailure) {
  const FleetVerdict v = certify(
      {with_status(node_health("n0"), "error", "DMI read failed"), health_stage_timeout("n0")},
      "required: [health.node]\n");
  EXPECT_THAT(gaps(v, "n0", "health.node"),
              ElementsAre("health.node: the stage could not measure: DMI read failed"));
}

// A verbs record without a rail (-1 or null) counts for no rail: as a node's only evidence, or
// beside a measured rail, the rails it could have been stay untested, and the reason names it.
// At the limit: rails 0 and N-1 of N count; rail N (no such port) counts for none either.
TEST(RequiredEvidenceRule, AVerbsRecordWithoutARailCountsForNoRail) {
  const std::string two_ports = "required: [links]\nnode: {ib_ports: 2}\n";
  for (const Json& rail : {Json(-1), Json(nullptr)}) {
    SCOPED_TRACE(rail.dump());
    Json railless = verbs_link(0);
    railless["rail"] = rail;
    const FleetVerdict alone = certify({run_record({"n0", "n1"}), railless}, two_ports);
    for (const std::string node : {"n0", "n1"}) {
      EXPECT_EQ(fixtures::node(alone, node).state, NodeState::kInconclusive);
      EXPECT_THAT(gaps(alone, node, "links"),
                  ElementsAre(::testing::MatchesRegex(
                      "links: no evidence over verbs for rail 0, 1 \\(of 2\\): a verbs record "
                      "without a rail \\(.*records.jsonl:2\\) counts for none; run one process "
                      "per NIC \\(one per GPU\\)")));
      const Reason& r = fixtures::reason(fixtures::node(alone, node), "evidence.missing");
      ASSERT_EQ(r.evidence.size(), 1u);
      EXPECT_EQ(r.evidence[0].line, 2u);
    }
    const FleetVerdict beside =
        certify({run_record({"n0", "n1"}), verbs_link(0), railless}, two_ports);
    EXPECT_EQ(beside.count(NodeState::kCertified), 0u);
    EXPECT_THAT(gaps(beside, "n1", "links"),
                ElementsAre(::testing::MatchesRegex(
                    "links: no evidence over verbs for rail 1 \\(of 2\\): a verbs record "
                    "without a rail \\(.*records.jsonl:3\\) counts for none; .*")));
  }
  EXPECT_EQ(certify({run_record({"n0", "n1"}), verbs_link(0), verbs_link(1)}, two_ports)
                .count(NodeState::kCertified),
            2u);
  const FleetVerdict beyond =
      certify({run_record({"n0", "n1"}), verbs_link(0), verbs_link(2)}, two_ports);
  EXPECT_THAT(gaps(beyond, "n0", "links"),
              ElementsAre("links: no evidence over verbs for rail 1 (of 2): run one process per "
                          "NIC (one per GPU)"));
}

// --- DCGM diagnostics and the run level a baseline requires ---------------------------------

Json dcgm_gpu(const std::string& host, int gpu, const std::string& status,
              std::optional<int> level) {
  Json record = fixtures::gpu_health(host, gpu);
  record["status"] = status;
  if (status == "fail") record["reason"] = "DCGM Memory failed (Fail)";
  record["source"] = "dcgm";
  if (level) record["dcgm_level"] = *level;
  return record;
}

std::string dcgm_baseline(int min_level) {
  return fmt::format(
      "required: [health.gpu]\nnode: {{gpus: 1}}\n"
      "checks:\n  health.gpu: {{dcgm_min_level: {}}}\n",
      min_level);
}

// A DCGM pass is the GPU's health evidence from the level the baseline requires up, and none
// below it: at the limit and one step either side, each record the node's only evidence.
TEST(RequiredEvidenceRule, ADcgmPassCountsFromTheRequiredLevelUp) {
  for (const int min_level : {2, 3, 4}) {
    SCOPED_TRACE(min_level);
    const FleetVerdict below =
        certify({dcgm_gpu("n0", 0, "ok", min_level - 1)}, dcgm_baseline(min_level));
    EXPECT_EQ(fixtures::node(below, "n0").state, NodeState::kInconclusive);
    EXPECT_THAT(codes(fixtures::node(below, "n0")), ElementsAre("evidence.dcgm_level"));
    EXPECT_THAT(gaps(below, "n0", "health.gpu"),
                ElementsAre(fmt::format(
                    "health.gpu: a DCGM diagnostic below the level the baseline requires for all "
                    "1 GPUs: DCGM passed it at level {}, the baseline requires level {} "
                    "(checks.health.gpu.dcgm_min_level)",
                    min_level - 1, min_level)));
    for (const int level : {min_level, min_level + 1}) {
      const FleetVerdict at = certify({dcgm_gpu("n0", 0, "ok", level)}, dcgm_baseline(min_level));
      EXPECT_EQ(fixtures::node(at, "n0").state, NodeState::kCertified) << level;
    }
  }
}

// Without a baseline key the long run (level 3) is required; a record that does not state its
// level is below every level but 0, which takes any DCGM pass.
TEST(RequiredEvidenceRule, ADcgmPassWithoutItsLevelIsBelowEveryRequiredLevel) {
  const std::string defaults = "required: [health.gpu]\nnode: {gpus: 1}\n";
  EXPECT_EQ(fixtures::node(certify({dcgm_gpu("n0", 0, "ok", 2)}, defaults), "n0").state,
            NodeState::kInconclusive);
  EXPECT_EQ(fixtures::node(certify({dcgm_gpu("n0", 0, "ok", 3)}, defaults), "n0").state,
            NodeState::kCertified);
  const FleetVerdict unstated = certify({dcgm_gpu("n0", 0, "ok", std::nullopt)}, dcgm_baseline(1));
  EXPECT_THAT(gaps(unstated, "n0", "health.gpu"),
              ElementsAre(HasSubstr("DCGM passed it at no stated level, the baseline requires "
                                    "level 1")));
  EXPECT_EQ(fixtures::node(certify({dcgm_gpu("n0", 0, "ok", std::nullopt)}, dcgm_baseline(0)), "n0")
                .state,
            NodeState::kCertified);
}

// A DCGM failure is a failure at any level, and commcert's own health record (no `source`) is
// not held to a DCGM level.
TEST(RequiredEvidenceRule, ADcgmFailureCountsAtAnyLevelAndOwnRecordsNeedNone) {
  const FleetVerdict failed = certify({dcgm_gpu("n0", 0, "fail", 1)}, dcgm_baseline(3));
  EXPECT_EQ(fixtures::node(failed, "n0").state, NodeState::kQuarantined);
  EXPECT_EQ(fixtures::node(certify({fixtures::gpu_health("n0", 0)}, dcgm_baseline(4)), "n0").state,
            NodeState::kCertified);
  // Beside a low-level DCGM pass, the node's own health record is the evidence.
  EXPECT_EQ(fixtures::node(certify({dcgm_gpu("n0", 0, "ok", 1), fixtures::gpu_health("n0", 0)},
                                   dcgm_baseline(3)),
                           "n0")
                .state,
            NodeState::kCertified);
}

}  // namespace
}  // namespace commcert
