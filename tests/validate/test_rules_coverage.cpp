#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/record_reader.hpp"

namespace commcert {
namespace {

using fixtures::collective;
using fixtures::run_record;
using ::testing::HasSubstr;

const Baseline& sweep_baseline() {
  static const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\n"
      "checks:\n  collective.allreduce:\n    busbw_gb_per_s:\n      cluster: {floor: 0.001}\n");
  return b;
}

const Reason& first(const FleetVerdict& v, const std::string& node) {
  const Reason* r = fixtures::node(v, node).first_reason();
  if (!r) throw std::logic_error(node + " is certified");
  return *r;
}

TEST(RequiredEvidenceRule, ANodeNoRecordSpeaksForIsInconclusive) {
  // n9 wrote a burn record only; the sweep ran on n0 and n1.
  const Evidence e =
      fixtures::evidence_of({run_record({"n0", "n1"}), collective(std::uint64_t{1} << 30, 1),
                             fixtures::burn("n9", 0, 1)});
  const FleetVerdict v = fixtures::certify(e, sweep_baseline());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified), (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(first(v, "n9").code, "evidence.missing");
  EXPECT_EQ(first(v, "n9").message,
            "collective.allreduce: no evidence (no allreduce record names this node)");
  EXPECT_EQ(v.exit_status(), 3);
}

TEST(RequiredEvidenceRule, SizesTheBaselineDoesNotJudgeAreNotEvidence) {
  const Evidence e = fixtures::evidence_of({run_record({"n0", "n1"}), collective(1 << 20, 1)});
  const FleetVerdict v = fixtures::certify(e, sweep_baseline());
  EXPECT_EQ(v.count(NodeState::kInconclusive), 2u);
  EXPECT_EQ(first(v, "n0").code, "evidence.not_judgeable");
  EXPECT_THAT(
      first(v, "n0").message,
      HasSubstr(">= 1 GiB in scope cluster; the largest checked measurement there is 1 MiB"));
}

// Why a checked measurement could not be judged is said as the user must act on it: one rank
// (a one-GPU node run by itself), the wrong scope, or too small. A one-rank 1 GiB record used to
// read "judges busbw at >= 1 GiB ...; the largest checked measurement here is 1 GiB".
TEST(RequiredEvidenceRule, ANotJudgeableMeasurementSaysWhatKeptItFromBeingJudged) {
  const auto reason_for = [](const Json& only) {
    const FleetVerdict v =
        fixtures::certify(fixtures::evidence_of({run_record({"n0"}), only}), sweep_baseline());
    return first(v, "n0");
  };
  Json one_rank = collective(std::uint64_t{1} << 30, 1);
  one_rank["nranks"] = 1;
  one_rank["nodes"] = 1;
  EXPECT_EQ(reason_for(one_rank).code, "evidence.not_judgeable");
  EXPECT_THAT(reason_for(one_rank).message,
              HasSubstr(": its measurements at >= 1 GiB in scope cluster ran on a one-rank "
                        "communicator, which has no bus bandwidth"));
  // One rank and too small: the size is what to change first.
  Json one_rank_small = collective(1 << 20, 1);
  one_rank_small["nranks"] = 1;
  EXPECT_THAT(reason_for(one_rank_small).message,
              HasSubstr("the largest checked measurement there is 1 MiB"));
  // Large enough, but only in a scope the baseline does not judge (node; it judges cluster).
  const Json node_only = collective(std::uint64_t{2} << 30, 1, "node");
  EXPECT_THAT(reason_for(node_only).message,
              HasSubstr("judges busbw in scope cluster; no checked measurement here is in that "
                        "scope"));
  // The largest is the largest in the judged scope, not a larger one elsewhere.
  const FleetVerdict mixed = fixtures::certify(
      fixtures::evidence_of({run_record({"n0"}), collective(std::uint64_t{2} << 30, 1, "node"),
                             collective(1 << 20, 1)}),
      sweep_baseline());
  EXPECT_THAT(first(mixed, "n0").message,
              HasSubstr("the largest checked measurement there is 1 MiB"));
}

TEST(RequiredEvidenceRule, ALargestOfZeroBytesIsSaidAsZero) {
  // The size the reason gives is measured, not a floor: a 0-byte record says 0 B.
  const FleetVerdict v = fixtures::certify(
      fixtures::evidence_of({run_record({"n0"}), collective(0, 1)}), sweep_baseline());
  EXPECT_THAT(first(v, "n0").message, HasSubstr("the largest checked measurement there is 0 B"));
}

TEST(RequiredEvidenceRule, ASkippedCollectiveAloneGivesItsReason) {
  // As the sweep writes it: the measurement's fields absent, the reason given.
  Json skipped = fixtures::record("collective", "n0", "skipped", -1, "run1");
  const Json measured = collective(std::uint64_t{1} << 30, 1);
  for (const char* key :
       {"backend", "collective", "dtype", "bytes", "count", "nranks", "nodes", "scope"}) {
    skipped[key] = measured[key];
  }
  skipped["reason"] = "ncclAlltoAll needs NCCL 2.28";
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({run_record({"n0"}), skipped}), sweep_baseline());
  EXPECT_EQ(first(v, "n0").code, "evidence.skipped");
  EXPECT_THAT(first(v, "n0").message, HasSubstr(": ncclAlltoAll needs NCCL 2.28"));
}

TEST(RequiredEvidenceRule, UncheckedOutputsAreNotEvidence) {
  Json c = collective(std::uint64_t{1} << 30, 1);
  c["check"] = false;
  c["wrong_elements"] = nullptr;
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({run_record({"n0"}), c}), sweep_baseline());
  EXPECT_EQ(first(v, "n0").code, "evidence.unchecked");
  EXPECT_THAT(first(v, "n0").message, HasSubstr("(the sweep ran with -c 0)"));
}

TEST(RequiredEvidenceRule, AStageErrorExplainsTheGap) {
  Json error = fixtures::record("collective", "n1", "error");
  error["backend"] = "mpi";
  error["reason"] = "MPI_ERR_TRUNCATE on rank 1";
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({run_record({"n0", "n1"}), error}), sweep_baseline());
  EXPECT_EQ(first(v, "n0").code, "evidence.error");
  EXPECT_THAT(first(v, "n0").message, HasSubstr("MPI_ERR_TRUNCATE on rank 1"));
  EXPECT_EQ(first(v, "n1").code, "evidence.error");
}

const Baseline& gpu_baseline() {
  static const Baseline b = fixtures::baseline_of(
      "required: [burn, health.ib, health.node]\nnode: {gpus: 4, ib_ports: 2}\n"
      "checks:\n  burn:\n    tflops:\n      gemm_bf16: {floor: 100}\n");
  return b;
}

std::vector<Json> healthy_node(const std::string& host) {
  std::vector<Json> records;
  for (int g = 0; g < 4; ++g)
    records.push_back(fixtures::burn(host, g, 700));
  for (int p = 0; p < 2; ++p) {
    Json port = fixtures::record("health", host);
    port["component"] = "ib_port";
    port["device"] = "mlx5_" + std::to_string(p);
    port["port"] = 1;
    port["state"] = "ACTIVE";
    port["phys_state"] = "LinkUp";
    port["rate_gbps"] = 400;
    port["counters"] = Json::object();
    records.push_back(port);
  }
  Json node = fixtures::record("health", host);
  node["component"] = "node";
  node["gpu_count"] = 4;
  node["ib_port_count"] = 2;
  records.push_back(node);
  return records;
}

TEST(RequiredEvidenceRule, EveryGpuNeedsItsOwnEvidence) {
  auto records = healthy_node("n0");
  records.erase(records.begin() + 3);  // burn of gpu 3
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), gpu_baseline());
  EXPECT_EQ(first(v, "n0").code, "evidence.missing");
  EXPECT_EQ(first(v, "n0").message, "burn: no evidence for gpu 3 (of 4)");
}

TEST(RequiredEvidenceRule, ASkippedStageSaysWhy) {
  auto records = healthy_node("n0");
  records.erase(records.begin(), records.begin() + 4);
  Json skipped = fixtures::record("burn", "n0", "skipped");
  skipped["reason"] = "no NVIDIA driver: libnvidia-ml.so.1 not found";
  records.push_back(skipped);
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), gpu_baseline());
  EXPECT_EQ(first(v, "n0").code, "evidence.skipped");
  EXPECT_EQ(first(v, "n0").message,
            "burn: skipped for all 4 GPUs: no NVIDIA driver: libnvidia-ml.so.1 not found");
}

TEST(RequiredEvidenceRule, ABoundedFigureMustBePresent) {
  auto records = healthy_node("n0");
  records[1]["tflops"] = nullptr;
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), gpu_baseline());
  EXPECT_EQ(first(v, "n0").code, "evidence.no_figure");
  EXPECT_EQ(first(v, "n0").message, "burn: no burn gemm_bf16 figure for gpu 1");
}

TEST(RequiredEvidenceRule, PortsAndTheNodeRecordAreCounted) {
  auto records = healthy_node("n0");
  records.pop_back();  // the node record
  records.pop_back();  // one port
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), gpu_baseline());
  const auto& n0 = fixtures::node(v, "n0");
  ASSERT_EQ(n0.reasons.size(), 2u);
  EXPECT_EQ(n0.reasons[0].message, "health.node: no evidence (no node health record)");
  EXPECT_EQ(n0.reasons[1].message, "health.ib: no evidence (1 of 2 ports reported)");
  const FleetVerdict healthy =
      fixtures::certify(fixtures::evidence_of(healthy_node("n1")), gpu_baseline());
  EXPECT_EQ(healthy.count(NodeState::kCertified), 1u);
}

TEST(RequiredEvidenceRule, AHealthStageThatTimedOutExplainsItsGaps) {
  auto records = healthy_node("n0");
  records.pop_back();  // the node record
  Json timeout = fixtures::record("health", "n0", "timeout");
  timeout["reason"] = "process 3 (n0) never arrived";
  timeout["operation"] = "health";
  timeout["timeout_s"] = 60;
  records.push_back(timeout);
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), gpu_baseline());
  EXPECT_EQ(first(v, "n0").code, "evidence.timeout");
  EXPECT_EQ(first(v, "n0").message,
            "health.node: no complete measurement: process 3 (n0) never arrived");
}

TEST(RequiredEvidenceRule, ChecksNobodyRequiresAreNotDemanded) {
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of({fixtures::burn("n0", 0, 700)}),
                                           fixtures::baseline_of("required: [burn]\n"));
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kCertified);
}

TEST(InputIntegrityRule, ALostRecordMakesItsNodeInconclusive) {
  fixtures::TempDir dir;
  std::string text;
  for (const auto& r : healthy_node("n0"))
    text += r.dump() + "\n";
  for (const auto& r : healthy_node("n1"))
    text += r.dump() + "\n";
  const std::string cut = fixtures::burn("n1", 2, 700).dump();
  text += cut.substr(0, cut.size() - 10);  // n1 crashed mid-write
  dir.write("run/records.jsonl", text);
  const Evidence e = [&] {
    Evidence out;
    RecordReader reader(out);
    reader.read_file(dir.path() / "run/records.jsonl");
    out.finish();
    return out;
  }();
  const FleetVerdict v = fixtures::certify(e, gpu_baseline());
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kCertified);
  EXPECT_EQ(fixtures::node(v, "n1").state, NodeState::kInconclusive);
  EXPECT_EQ(first(v, "n1").code, "input.truncated");
  EXPECT_EQ(first(v, "n1").check, "input");  // verdict.json's check of the reason
  EXPECT_THAT(first(v, "n1").message, HasSubstr("records.jsonl:15: truncated last record"));
}

TEST(InputIntegrityRule, ALostCollectiveRecordTouchesEveryNodeOfItsRun) {
  fixtures::TempDir dir;
  const std::string good = collective(std::uint64_t{1} << 30, 1).dump();
  dir.write("records.jsonl", run_record({"n0", "n1"}).dump() + "\n" + good + "\n" +
                                 good.substr(0, 40) + "\n" + fixtures::burn("n2", 0, 1).dump() +
                                 "\n");
  Evidence e;
  RecordReader reader(e);
  reader.read_file(dir.path() / "records.jsonl");
  e.finish();
  const FleetVerdict v = fixtures::certify(e, sweep_baseline());
  EXPECT_EQ(first(v, "n0").code, "input.unparsable");
  EXPECT_EQ(first(v, "n1").code, "input.unparsable");
  EXPECT_FALSE(fixtures::has_code(fixtures::node(v, "n2"), "input.unparsable"));
}

TEST(InputIntegrityRule, ALostLineOfAPairsFileHoldsBackThePairsNodesNotTheWholeRun) {
  // The run's records (n0..n3, certified by the cluster allreduce) in one file; the pairwise
  // round of n0 and n1 in another, whose last line was cut. That file only ever spoke of n0 and
  // n1: the cut line holds them back, and n2 and n3 keep their verdict.
  fixtures::TempDir dir;
  Json pair = collective(std::uint64_t{1} << 30, 48, "pairs", "n0");
  pair["nranks"] = 2;
  pair["nodes"] = 2;
  pair["group_nodes"] = {"n0", "n1"};
  pair["round"] = 0;
  pair["group"] = 0;
  const std::string cut = pair.dump();
  dir.write("run/records.jsonl", run_record({"n0", "n1", "n2", "n3"}).dump() + "\n" +
                                     collective(std::uint64_t{1} << 30, 400).dump() + "\n");
  // Cut before the run id (a readable one would hold back its whole run): only the file tells
  // whose the line was.
  ASSERT_EQ(cut.find("\"run_id\""), 12u);
  dir.write("pairs/records.jsonl", cut + "\n" + cut.substr(0, 12));
  Evidence e;
  RecordReader reader(e);
  reader.read_file(dir.path() / "run/records.jsonl");
  reader.read_file(dir.path() / "pairs/records.jsonl");
  e.finish();
  const FleetVerdict v = fixtures::certify(e, fixtures::cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kInconclusive),
            (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(first(v, "n1").code, "input.truncated");
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kCertified), (std::vector<std::string>{"n2", "n3"}));
}

}  // namespace
}  // namespace commcert
