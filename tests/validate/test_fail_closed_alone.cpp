// Each fail-closed exclusion alone (issue 16 item 2): the excluded record is the node's only
// evidence, so nothing else can carry the verdict, and the node must be inconclusive. Each test
// first certifies the same fleet with the exclusion lifted, so it is the exclusion, not some
// other defect of the fixture, that keeps the node from being certified.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

// allreduce busbw judged from 1 GiB up, floor 100 GB/s: the fixtures' 400 GB/s passes it.
Baseline allreduce_with_floor() {
  return fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    min_bytes: 1073741824\n    busbw_gb_per_s:\n      node: {floor: 100}\n"
      "      cluster: {floor: 100}\n");
}

// n0's one node-scope allreduce of 1 GiB at 400 GB/s, changed by `exclude`.
Json only_record(const std::function<void(Json&)>& exclude) {
  Json r = fixtures::collective(std::uint64_t{1} << 30, 400, "node", "n0");
  exclude(r);
  return r;
}

NodeState state_of(const std::vector<Json>& records, const std::string& node = "n0") {
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_with_floor());
  return fixtures::node(v, node).state;
}

TEST(FailClosedAlone, TheUnchangedRecordCertifiesTheNode) {
  EXPECT_EQ(state_of({only_record([](Json&) {})}), NodeState::kCertified);
}

TEST(FailClosedAlone, AOneRankCommunicatorHasNoBusBandwidth) {
  // nranks 1 (node scope, one GPU per node): busbw is 0 by definition and is not judged.
  Json two_ranks = only_record([](Json& r) { r["nranks"] = 2; });
  EXPECT_EQ(state_of({two_ranks}), NodeState::kCertified);
  EXPECT_EQ(state_of({only_record([](Json& r) { r["nranks"] = 1; })}), NodeState::kInconclusive);
}

TEST(FailClosedAlone, UncheckedOutputsAreNoEvidence) {
  EXPECT_EQ(state_of({only_record([](Json& r) { r["check"] = false; })}), NodeState::kInconclusive);
}

TEST(FailClosedAlone, SizesBelowTheBaselinesRangeAreNoEvidence) {
  // The same figure at 1 GiB - 4 bytes, one element below min_bytes.
  const auto below = [](Json& r) {
    r["bytes"] = (std::uint64_t{1} << 30) - 4;
    r["count"] = r["bytes"].get<std::uint64_t>() / 4;
  };
  EXPECT_EQ(state_of({only_record(below)}), NodeState::kInconclusive);
}

TEST(FailClosedAlone, ARecordFromAnotherRunIsNoEvidenceForANodeOutsideThatRun) {
  // run1 holds n0 and n1; run2 holds n1 and n2. A cluster allreduce that claims run2 names n0
  // among its group: n0 took no part in run2, so the record says nothing about n0.
  const auto cluster = [](const std::string& run) {
    Json c = fixtures::collective(std::uint64_t{1} << 30, 400, "cluster", "n1", {}, run);
    c["group_nodes"] = {"n0", "n1"};
    c["nranks"] = 2;
    c["nodes"] = 2;
    return c;
  };
  const Json run1 = fixtures::run_record({"n0", "n1"}, "run1");
  const Json run2 = fixtures::run_record({"n1", "n2"}, "run2");
  EXPECT_EQ(state_of({run1, run2, cluster("run1")}), NodeState::kCertified);
  EXPECT_EQ(state_of({run1, run2, cluster("run2")}), NodeState::kInconclusive);
  EXPECT_EQ(state_of({run1, run2, cluster("run2")}, "n1"), NodeState::kCertified);
}

// --- Exclusions of other kinds of evidence ------------------------------------------------------
// Each: the record alone with the exclusion lifted certifies n0; the excluded record alone
// leaves it inconclusive.

NodeState judged_alone(const Json& record, const std::string& baseline) {
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({record}), fixtures::baseline_of(baseline));
  return fixtures::node(v, "n0").state;
}

TEST(FailClosedAlone, PairsAreLocalizationEvidenceNotCollectiveEvidence) {
  // A pair's figure (sweep --scope pairs) localizes a shortfall; it does not show the node
  // passes the collective check.
  const auto scoped = [](const std::string& scope) {
    return only_record([&](Json& r) {
      r["scope"] = scope;
      r["group_nodes"] = {"n0"};
    });
  };
  EXPECT_EQ(state_of({scoped("node")}), NodeState::kCertified);
  EXPECT_EQ(state_of({scoped("pairs")}), NodeState::kInconclusive);
  EXPECT_EQ(state_of({scoped("rack")}), NodeState::kInconclusive);  // a scope not judged
}

TEST(FailClosedAlone, AScopeTheBaselineDoesNotBoundIsNoEvidence) {
  // The node-scope record alone, against a baseline that bounds only the cluster scope.
  const std::string cluster_only =
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    busbw_gb_per_s:\n      cluster: {floor: 100}\n";
  const std::string both = cluster_only + "      node: {floor: 100}\n";
  const Json record = only_record([](Json&) {});
  EXPECT_EQ(judged_alone(record, both), NodeState::kCertified);
  EXPECT_EQ(judged_alone(record, cluster_only), NodeState::kInconclusive);
}

TEST(FailClosedAlone, AGpuHealthRecordThatIsNotOkIsNoEvidence) {
  const std::string baseline = "required: [health.gpu]\nnode: {gpus: 1}\n";
  EXPECT_EQ(judged_alone(fixtures::gpu_health("n0", 0), baseline), NodeState::kCertified);
  for (const char* status : {"skipped", "error", "timeout"}) {
    Json r = fixtures::gpu_health("n0", 0);
    r["status"] = status;
    r["reason"] = std::string("health said ") + status;
    EXPECT_EQ(judged_alone(r, baseline), NodeState::kInconclusive) << status;
  }
}

TEST(FailClosedAlone, TheFiguresOfAGpuHealthRecordThatIsNotOkAreNotJudged) {
  // A record that did not finish says nothing about the GPU, whatever partial figures it
  // carries: a degraded PCIe link in it neither certifies nor quarantines the node.
  const std::string baseline = "required: [health.gpu]\nnode: {gpus: 1}\n";
  Json degraded = fixtures::gpu_health("n0", 0);
  degraded["pcie"]["width_current"] = 8;
  EXPECT_EQ(judged_alone(degraded, baseline), NodeState::kQuarantined);
  for (const char* status : {"skipped", "error", "timeout"}) {
    Json r = degraded;
    r["status"] = status;
    r["reason"] = std::string("health said ") + status;
    EXPECT_EQ(judged_alone(r, baseline), NodeState::kInconclusive) << status;
  }
}

TEST(FailClosedAlone, AGpuWhosePcieLinkWasNotReadIsNotCertifiedOnIt) {
  // The baseline asks for gen5 x16; the node's one health record could not read the current
  // generation or width (null, or 0 / -1, which the reader treats as unread). Nothing else can
  // certify the GPU, and nothing shows a degraded link: inconclusive, never certified or
  // quarantined. Where the baseline asks nothing of the link, a figure not given (null)
  // certifies; one given as 0 or -1 is no reading whatever it is held to: inconclusive.
  const std::string asks =
      "required: [health.gpu]\nnode: {gpus: 1}\n"
      "checks:\n  health.gpu: {pcie_at_max: false, pcie_min_gen: 5, pcie_min_width: 16}\n";
  const std::string asks_nothing =
      "required: [health.gpu]\nnode: {gpus: 1}\nchecks:\n  health.gpu: {pcie_at_max: false}\n";
  EXPECT_EQ(judged_alone(fixtures::gpu_health("n0", 0), asks), NodeState::kCertified);
  for (const char* field : {"gen_current", "width_current"}) {
    for (const Json& unread : {Json(nullptr), Json(0), Json(-1)}) {
      SCOPED_TRACE(std::string(field) + " " + unread.dump());
      Json r = fixtures::gpu_health("n0", 0);
      r["pcie"][field] = unread;
      EXPECT_EQ(judged_alone(r, asks), NodeState::kInconclusive);
      EXPECT_EQ(judged_alone(r, asks_nothing),
                unread.is_null() ? NodeState::kCertified : NodeState::kInconclusive);
    }
  }
}

TEST(FailClosedAlone, TheCountsOfANodeHealthRecordThatIsNotOkAreNotJudged) {
  // A node record that did not finish says nothing about the node: its GPU or port count, one
  // fewer than the SKU's, neither certifies nor quarantines it. The same record `ok` does.
  const std::string baseline = "required: [health.node]\nnode: {gpus: 2, ib_ports: 2}\n";
  for (const auto& [gpus, ports] : std::vector<std::pair<int, int>>{{1, 2}, {2, 1}}) {
    Json node = fixtures::record("health", "n0");
    node["component"] = "node";
    node["gpu_count"] = gpus;
    node["ib_port_count"] = ports;
    EXPECT_EQ(judged_alone(node, baseline), NodeState::kQuarantined) << gpus << " " << ports;
    for (const char* status : {"skipped", "error", "timeout"}) {
      Json r = node;
      r["status"] = status;
      r["reason"] = std::string("health said ") + status;
      EXPECT_EQ(judged_alone(r, baseline), NodeState::kInconclusive)
          << status << " " << gpus << " " << ports;
    }
  }
}

TEST(FailClosedAlone, TheRemapsOfAGpuHealthRecordThatIsNotOkAreNotJudged) {
  // A record that did not finish says nothing about the GPU: a failed or pending remap in it
  // neither certifies nor quarantines the node, and many remapped rows warn of nothing.
  const std::string baseline = "required: [health.gpu]\nnode: {gpus: 1}\n";
  for (const char* field : {"failure", "pending"}) {
    Json remapped = fixtures::gpu_health("n0", 0);
    remapped["remapped_rows"][field] = true;
    EXPECT_EQ(judged_alone(remapped, baseline), NodeState::kQuarantined) << field;
    for (const char* status : {"skipped", "error", "timeout"}) {
      Json r = remapped;
      r["status"] = status;
      r["reason"] = std::string("health said ") + status;
      EXPECT_EQ(judged_alone(r, baseline), NodeState::kInconclusive) << field << " " << status;
    }
  }
}

TEST(FailClosedAlone, TheRetiredPagesOfAGpuHealthRecordThatIsNotOkAreNotJudged) {
  // A record that did not finish says nothing about the GPU: too many retired pages or a
  // pending retirement in it neither certifies nor quarantines the node.
  const std::string baseline = "required: [health.gpu]\nnode: {gpus: 1}\n";
  for (const Json& pages : {Json{{"single_bit", 40}, {"double_bit", 23}, {"pending", false}},
                            Json{{"single_bit", 1}, {"double_bit", 0}, {"pending", true}}}) {
    Json retired = fixtures::gpu_health("n0", 0);
    retired["retired_pages"] = pages;
    EXPECT_EQ(judged_alone(retired, baseline), NodeState::kQuarantined) << pages.dump();
    for (const char* status : {"skipped", "error", "timeout"}) {
      Json r = retired;
      r["status"] = status;
      r["reason"] = std::string("health said ") + status;
      EXPECT_EQ(judged_alone(r, baseline), NodeState::kInconclusive) << pages.dump() << status;
    }
  }
}

TEST(FailClosedAlone, ABurnThatDidNotMeasureIsNoEvidence) {
  const std::string baseline = "required: [burn]\nnode: {gpus: 1}\n";
  EXPECT_EQ(judged_alone(fixtures::burn("n0", 0, 700), baseline), NodeState::kCertified);
  for (const char* status : {"skipped", "error", "timeout"}) {
    EXPECT_EQ(judged_alone(fixtures::record("burn", "n0", status, 0), baseline),
              NodeState::kInconclusive)
        << status;
  }
}

TEST(FailClosedAlone, EvidenceForAGpuTheSkuDoesNotHaveIsNotEvidenceForOneItHas) {
  // node.gpus 1: GPU 0 is required; a record of GPU 1 alone leaves GPU 0 without evidence.
  const std::string baseline = "required: [health.gpu]\nnode: {gpus: 1}\n";
  EXPECT_EQ(judged_alone(fixtures::gpu_health("n0", 0), baseline), NodeState::kCertified);
  EXPECT_EQ(judged_alone(fixtures::gpu_health("n0", 1), baseline), NodeState::kInconclusive);
}

TEST(FailClosedAlone, APortOfALinkLayerNotJudgedIsNoEvidence) {
  // health.ib judges InfiniBand ports only; the node's one port is Ethernet (front end).
  const std::string baseline =
      "required: [health.ib]\nnode: {ib_ports: 1}\nchecks:\n"
      "  health.ib: {link_layers: [InfiniBand]}\n";
  const auto port = [](const std::string& link_layer) {
    Json r = fixtures::record("health", "n0");
    r["component"] = "ib_port";
    r["device"] = "mlx5_0";
    r["port"] = 1;
    r["state"] = "ACTIVE";
    r["phys_state"] = "LinkUp";
    r["rate_gbps"] = 400;
    r["link_layer"] = link_layer;
    r["counters"] = {{"symbol_error", 0}, {"link_downed", 0}};
    return r;
  };
  EXPECT_EQ(judged_alone(port("InfiniBand"), baseline), NodeState::kCertified);
  EXPECT_EQ(judged_alone(port("Ethernet"), baseline), NodeState::kInconclusive);
}

TEST(FailClosedAlone, ARecordOfANewerSchemaIsNeverGuessedAt) {
  // A per-node record, so the lost line is still attributed to n0 by its host.
  const std::string baseline = "required: [health.gpu]\nnode: {gpus: 1}\n";
  Json newer = fixtures::gpu_health("n0", 0);
  EXPECT_EQ(judged_alone(newer, baseline), NodeState::kCertified);
  newer["schema"] = 2;
  EXPECT_EQ(judged_alone(newer, baseline), NodeState::kInconclusive);
}

TEST(FailClosedAlone, ALostLineOfARunWithoutRankMapReachesTheNodesItsGroupsName) {
  // run1 (rank map n0, n1) certifies both. run2 has no run record: its participants are the
  // nodes its records name, group_nodes included, so a line of run2 that cannot be read may be
  // about n1 and must hold n1 back, though n1 wrote nothing in run2.
  Json run2 = fixtures::collective(std::uint64_t{1} << 30, 400, "cluster", "n0", {}, "run2");
  run2["group_nodes"] = {"n0", "n1"};
  run2["nranks"] = 2;
  run2["nodes"] = 2;
  Json lost = run2;
  lost["bytes"] = "many";  // JSON, but not a record: lost input of run2
  Json run1 = fixtures::collective(std::uint64_t{1} << 30, 400, "cluster", "n0");
  run1["nranks"] = 2;
  run1["nodes"] = 2;
  const std::vector<Json> fleet = {fixtures::run_record({"n0", "n1"}, "run1"), run1, run2};
  EXPECT_EQ(state_of(fleet, "n1"), NodeState::kCertified);
  std::vector<Json> with_lost = fleet;
  with_lost.push_back(lost);
  EXPECT_EQ(state_of(with_lost, "n1"), NodeState::kInconclusive);
}

}  // namespace
}  // namespace commcert
