// What a reason carries besides its code, as verdict.json shows it (docs/validator.md,
// "verdict.json"): the figures a technician acts on and the link or hosts it is about.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

// The reasons of `node` in verdict.json.
Json reasons_of(const FleetVerdict& verdict, const std::string& node) {
  const Json json = to_json(verdict);
  for (const auto& n : json["nodes"]) {
    if (n["node"] == node) return n["reasons"];
  }
  ADD_FAILURE() << node << " not in the verdict";
  return Json::array();
}

TEST(ReasonFigures, ATimeoutReasonCarriesTheTimeoutInSeconds) {
  Json t = fixtures::record("collective", "n0", "timeout");
  t["backend"] = "mpi";
  t["scope"] = "cluster";
  t["operation"] = "allreduce float sum 64 KiB out-of-place";
  t["timeout_s"] = 30;
  t["nranks"] = 3;
  t["not_arrived"] = {{{"rank", 1}, {"host", "n1"}}};
  t["attributed"] = true;
  t["rank_states"] = Json::array();
  const Baseline b = fixtures::baseline_of("required: [collective.allreduce]\n");
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({fixtures::run_record({"n0", "n1", "n2"}), t}), b);
  const Json reasons = reasons_of(v, "n1");
  ASSERT_FALSE(reasons.empty());
  EXPECT_EQ(reasons[0]["code"], "collective.not_arrived");
  EXPECT_EQ(reasons[0]["measured"], 30.0);
  EXPECT_EQ(reasons[0]["unit"], "s");
}

TEST(ReasonFigures, ASharedFigureBelowTheFloorNamesItsHostsAndNoPort) {
  // A cluster figure below its floor blames nobody: its reason's link is the hosts sharing it,
  // {type: "hosts", hosts}, with no port or link number.
  Json shared = fixtures::collective(std::uint64_t{1} << 30, 90, "cluster", "n0");
  shared["nranks"] = 2;
  shared["nodes"] = 2;
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    busbw_gb_per_s:\n      cluster: {floor: 100}\n");
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({fixtures::run_record({"n0", "n1"}), shared}), b);
  for (const std::string node : {"n0", "n1"}) {
    const Json reasons = reasons_of(v, node);
    ASSERT_EQ(reasons.size(), 1u) << reasons.dump();
    EXPECT_EQ(reasons[0]["code"], "perf.unattributed");
    EXPECT_EQ(reasons[0]["link"], Json({{"type", "hosts"}, {"hosts", {"n0", "n1"}}}));
  }
}

TEST(ReasonFigures, AnEccReasonCarriesTheCountTheLimitAndTheGpu) {
  Json gpu = fixtures::gpu_health("n0", 0);
  gpu["ecc"]["volatile"]["uncorrected"] = 4;
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\nchecks:\n  health.gpu: {max_uncorrectable_ecc: "
      "3}\n");
  const Json reasons = reasons_of(fixtures::certify(fixtures::evidence_of({gpu}), b), "n0");
  ASSERT_EQ(reasons.size(), 1u) << reasons.dump();
  EXPECT_EQ(reasons[0]["code"], "health.ecc_uncorrectable");
  EXPECT_EQ(reasons[0]["measured"], 4.0);
  EXPECT_EQ(reasons[0]["limit"], 3.0);
  EXPECT_EQ(reasons[0]["unit"], "errors");
  EXPECT_EQ(reasons[0]["gpu"]["index"], 0);
}

TEST(ReasonFigures, APcieReplaysWarningCarriesTheCountAndTheLimit) {
  Json gpu = fixtures::gpu_health("n0", 0);
  gpu["pcie"]["replay_count"] = 101;
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\nchecks:\n  health.gpu: {max_pcie_replays: 100}\n");
  const Json reasons = reasons_of(fixtures::certify(fixtures::evidence_of({gpu}), b), "n0");
  ASSERT_EQ(reasons.size(), 1u) << reasons.dump();
  EXPECT_EQ(reasons[0]["code"], "health.pcie_replays");
  EXPECT_EQ(reasons[0]["measured"], 101.0);
  EXPECT_EQ(reasons[0]["limit"], 100.0);
  EXPECT_EQ(reasons[0]["message"], "gpu 0 (GPU-n0-0): 101 PCIe replays (warn above 100)");
  // Without max_pcie_replays in the baseline, replays are not judged at all.
  const Baseline unbounded = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 1}\n");
  const NodeVerdict node =
      fixtures::node(fixtures::certify(fixtures::evidence_of({gpu}), unbounded), "n0");
  EXPECT_EQ(node.state, NodeState::kCertified);
  EXPECT_TRUE(node.reasons.empty());
}

TEST(ReasonFigures, AFailedHealthRecordSaysWhereAndWhy) {
  Json gpu = fixtures::gpu_health("n0", 0);
  gpu["status"] = "fail";
  gpu["reason"] = "NVML: GPU requires reset";
  const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 1}\n");
  const Json reasons = reasons_of(fixtures::certify(fixtures::evidence_of({gpu}), b), "n0");
  ASSERT_FALSE(reasons.empty());
  EXPECT_EQ(reasons[0]["code"], "stage.fail");
  const std::string message = reasons[0]["message"];
  EXPECT_EQ(message.rfind("gpu 0", 0), 0u) << message;
  EXPECT_TRUE(message.ends_with("health.gpu reported a failure: NVML: GPU requires reset"))
      << message;
}

TEST(ReasonFigures, ADownPortStillReportsItsCounters) {
  // The technician needs both: the port is down, and it went down 7 times (limit 4).
  Json port = fixtures::record("health", "n0");
  port["component"] = "ib_port";
  port["device"] = "mlx5_0";
  port["port"] = 1;
  port["state"] = "DOWN";
  port["phys_state"] = "Polling";
  port["rate_gbps"] = 400;
  port["link_layer"] = "InfiniBand";
  port["counters"] = {{"symbol_error", 0}, {"link_downed", 7}};
  const Baseline b = fixtures::baseline_of(
      "required: [health.ib]\nnode: {ib_ports: 1}\nchecks:\n"
      "  health.ib: {fail_counters: {link_downed: 4}}\n");
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of({port}), b);
  const NodeVerdict& node = fixtures::node(verdict, "n0");
  EXPECT_TRUE(fixtures::has_code(node, "health.ib_port_down"));
  EXPECT_TRUE(fixtures::has_code(node, "health.ib_counter"))
      << ::testing::PrintToString(fixtures::codes(node));
}

TEST(ReasonFigures, AMembwReasonSaysWhichCheckFailedAndPointsAtItsRecord) {
  const Baseline b = fixtures::baseline_of("required: [membw]\nnode: {gpus: 1}\n");
  Json failed = fixtures::membw("n0", 0, 2000);
  failed["status"] = "fail";
  failed["reason"] = "copy kernel did not finish";
  Json reasons = reasons_of(fixtures::certify(fixtures::evidence_of({failed}), b), "n0");
  ASSERT_FALSE(reasons.empty());
  EXPECT_EQ(reasons[0]["code"], "stage.fail");
  const std::string message = reasons[0]["message"];
  EXPECT_TRUE(message.ends_with("membw reported a failure: copy kernel did not finish")) << message;
  ASSERT_EQ(reasons[0]["evidence"].size(), 1u);
  EXPECT_EQ(reasons[0]["evidence"][0]["line"], 1);

  Json corrupt = fixtures::membw("n0", 0, 2000);
  corrupt["status"] = "fail";
  corrupt["integrity"]["errors"] = 5;
  reasons = reasons_of(fixtures::certify(fixtures::evidence_of({corrupt}), b), "n0");
  ASSERT_FALSE(reasons.empty());
  EXPECT_EQ(reasons[0]["code"], "membw.integrity");
  EXPECT_EQ(reasons[0]["measured"], 5.0);
  ASSERT_EQ(reasons[0]["evidence"].size(), 1u);
  EXPECT_EQ(reasons[0]["evidence"][0]["line"], 1);
}

TEST(ReasonFigures, AnUnreadPcieFigureTheLinkIsHeldToIsInconclusiveNotDegraded) {
  // NVML could not read the current link (null, or a 0 the reader treats as unread): the GPU
  // is neither certified on a figure nobody read nor quarantined for a degraded link, and the
  // reason names the GPU, the figure and what it is held to (here the GPU's maximum, gen5 x16).
  const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 1}\n");
  struct Case {
    const char* field;
    Json value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"gen_current", nullptr,
       "gpu 0 (GPU-n0-0): health.gpu: no PCIe link generation figure (gen5 expected)"},
      {"gen_current", 0,
       "gpu 0 (GPU-n0-0): health.gpu: no PCIe link generation figure (read as 0, which is no "
       "reading; gen5 expected)"},
      {"width_current", nullptr,
       "gpu 0 (GPU-n0-0): health.gpu: no PCIe link width figure (x16 expected)"},
      {"width_current", -1,
       "gpu 0 (GPU-n0-0): health.gpu: no PCIe link width figure (read as -1, which is no "
       "reading; x16 expected)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.field) + " " + c.value.dump());
    Json gpu = fixtures::gpu_health("n0", 0);
    gpu["pcie"][c.field] = c.value;
    const NodeVerdict node =
        fixtures::node(fixtures::certify(fixtures::evidence_of({gpu}), b), "n0");
    EXPECT_EQ(node.state, NodeState::kInconclusive);
    EXPECT_EQ(fixtures::codes(node), std::vector<std::string>{"evidence.no_figure"});
    const Reason& reason = fixtures::reason(node, "evidence.no_figure");
    EXPECT_EQ(reason.message, c.message);
    EXPECT_EQ(reason.gpu_index, 0);
    EXPECT_EQ(reason.check, "health.gpu");
  }
}

TEST(ReasonFigures, ADegradedLinkNamesOnlyTheFiguresItIsHeldTo) {
  // pcie_at_max off and a minimum width only: nothing is asked of the generation, so the
  // message says what the width should be and no generation (never "gen0", "gen1" or "gen-1").
  const Baseline width_only = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\n"
      "checks:\n  health.gpu: {pcie_at_max: false, pcie_min_width: 16}\n");
  Json narrow = fixtures::gpu_health("n0", 0);
  narrow["pcie"]["width_current"] = 8;
  const NodeVerdict node =
      fixtures::node(fixtures::certify(fixtures::evidence_of({narrow}), width_only), "n0");
  EXPECT_EQ(fixtures::reason(node, "health.pcie_degraded").message,
            "gpu 0 (GPU-n0-0): PCIe link gen5 x8, expected x16");

  // The GPU's maximum width unread under pcie_at_max: the baseline's minimum generation alone.
  const Baseline gen_only = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\n"
      "checks:\n  health.gpu: {pcie_min_gen: 5}\n");
  Json slow = fixtures::gpu_health("n0", 0);
  slow["pcie"]["gen_max"] = nullptr;
  slow["pcie"]["width_max"] = nullptr;
  slow["pcie"]["gen_current"] = 4;
  const NodeVerdict slow_node =
      fixtures::node(fixtures::certify(fixtures::evidence_of({slow}), gen_only), "n0");
  EXPECT_EQ(fixtures::reason(slow_node, "health.pcie_degraded").message,
            "gpu 0 (GPU-n0-0): PCIe link gen4 x16, expected gen5");

  // Held to the lowest figure a baseline can ask (1): still named, as gen1 or x1.
  const Baseline lowest = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\n"
      "checks:\n  health.gpu: {pcie_at_max: false, pcie_min_gen: 1, pcie_min_width: 1}\n");
  for (const auto& [field, message] : std::vector<std::pair<std::string, std::string>>{
           {"gen_current",
            "gpu 0 (GPU-n0-0): health.gpu: no PCIe link generation figure (gen1 expected)"},
           {"width_current",
            "gpu 0 (GPU-n0-0): health.gpu: no PCIe link width figure (x1 expected)"}}) {
    Json unread = fixtures::gpu_health("n0", 0);
    unread["pcie"][field] = nullptr;
    const NodeVerdict held =
        fixtures::node(fixtures::certify(fixtures::evidence_of({unread}), lowest), "n0");
    EXPECT_EQ(fixtures::reason(held, "evidence.no_figure").message, message) << field;
  }
}

TEST(ReasonFigures, ADegradedLinkWithOneFigureUnreadSaysSoInsteadOfZero) {
  // NVML read a generation below the maximum but not the width (or the reverse): the link is
  // degraded all the same, and the message must not send a technician after an x0 link.
  const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 1}\n");
  struct Case {
    const char* low_field;
    int low_value;
    const char* unread_field;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"gen_current", 3, "width_current", "gpu 0 (GPU-n0-0): PCIe link gen3 x?, expected gen5 x16"},
      {"width_current", 8, "gen_current", "gpu 0 (GPU-n0-0): PCIe link gen? x8, expected gen5 x16"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.unread_field);
    Json gpu = fixtures::gpu_health("n0", 0);
    gpu["pcie"][c.low_field] = c.low_value;
    gpu["pcie"][c.unread_field] = nullptr;
    const NodeVerdict node =
        fixtures::node(fixtures::certify(fixtures::evidence_of({gpu}), b), "n0");
    EXPECT_EQ(node.state, NodeState::kQuarantined);
    EXPECT_EQ(fixtures::reason(node, "health.pcie_degraded").message, c.message);
  }
}

TEST(ReasonFigures, ASharedFigureSaysWhichLimitItFails) {
  // Nobody is blamed for a two-node figure, so its message is all the operator has: it must say
  // whether the figure is under the floor, over the ceiling or off the required value.
  struct Case {
    std::string bound;
    double busbw;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"{floor: 100}", 90,
       "allreduce busbw (cluster scope, 1 GiB) 90 GB/s fails the floor (100 GB/s) in the 2-node "
       "run run1; no single node can be blamed"},
      {"{ceiling: 100}", 110,
       "allreduce busbw (cluster scope, 1 GiB) 110 GB/s fails the ceiling (100 GB/s) in the "
       "2-node run run1; no single node can be blamed"},
      {"{equals: 100}", 110,
       "allreduce busbw (cluster scope, 1 GiB) 110 GB/s fails the required value (100 GB/s) in "
       "the 2-node run run1; no single node can be blamed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.bound);
    Json shared = fixtures::collective(std::uint64_t{1} << 30, c.busbw, "cluster", "n0");
    shared["nranks"] = 2;
    shared["nodes"] = 2;
    const Baseline b = fixtures::baseline_of(
        "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
        "    busbw_gb_per_s:\n      cluster: " +
        c.bound + "\n");
    const FleetVerdict v =
        fixtures::certify(fixtures::evidence_of({fixtures::run_record({"n0", "n1"}), shared}), b);
    const Json reasons = reasons_of(v, "n0");
    ASSERT_EQ(reasons.size(), 1u) << reasons.dump();
    EXPECT_EQ(reasons[0]["code"], "perf.unattributed");
    EXPECT_EQ(reasons[0]["message"], c.message);
  }
}

}  // namespace
}  // namespace commcert
