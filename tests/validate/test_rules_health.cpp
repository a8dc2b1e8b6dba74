#include <functional>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

using fixtures::gpu_health;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

const Baseline& health_baseline() {
  static const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1, ib_ports: 2, nvlinks_per_gpu: 18}\n"
      "checks:\n  health.gpu: {max_correctable_ecc: 1000, max_pcie_replays: 100}\n");
  return b;
}

// The codes a rule raises for one GPU health record changed by `edit`.
template <typename Edit>
std::vector<std::string> codes_for(const std::string& rule, Edit&& edit) {
  Json r = gpu_health("n0", 0);
  edit(r);
  const Evidence e = fixtures::evidence_of({r});
  std::vector<std::string> out;
  for (const auto& f : fixtures::run_rule(rule, e, health_baseline()))
    out.push_back(f.code.str());
  return out;
}

TEST(HealthRules, AHealthyGpuRaisesNothing) {
  const Evidence e = fixtures::evidence_of({gpu_health("n0", 0)});
  const FleetVerdict v = fixtures::certify(e, health_baseline());
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kCertified);
  EXPECT_TRUE(fixtures::node(v, "n0").reasons.empty());
}

TEST(GpuEccRule, UncorrectableQuarantinesManyCorrectableWarn) {
  EXPECT_THAT(codes_for("rule.gpu_ecc", [](Json& r) { r["ecc"]["volatile"]["uncorrected"] = 1; }),
              ElementsAre("health.ecc_uncorrectable"));
  EXPECT_THAT(codes_for("rule.gpu_ecc", [](Json& r) { r["ecc"]["volatile"]["corrected"] = 5000; }),
              ElementsAre("health.ecc_correctable"));
  EXPECT_THAT(codes_for("rule.gpu_ecc", [](Json& r) { r["ecc"]["aggregate"]["uncorrected"] = 9; }),
              ElementsAre());  // lifetime counts: remapped since, not a current fault
}

TEST(RowRemapRule, FailureIsolatesPendingResetsManyWarn) {
  EXPECT_THAT(codes_for("rule.row_remap", [](Json& r) { r["remapped_rows"]["failure"] = true; }),
              ElementsAre("health.remap_failure"));
  EXPECT_THAT(codes_for("rule.row_remap", [](Json& r) { r["remapped_rows"]["pending"] = true; }),
              ElementsAre("health.remap_pending"));
  EXPECT_THAT(
      codes_for("rule.row_remap", [](Json& r) { r["remapped_rows"]["uncorrectable"] = 512; }),
      ElementsAre("health.remap_many"));
  EXPECT_THAT(
      codes_for("rule.row_remap", [](Json& r) { r["remapped_rows"]["uncorrectable"] = 511; }),
      ElementsAre());
}

TEST(RowRemapRule, ItsReasonsFailTheGpuHealthCheckAndCarryTheCountAndTheLimit) {
  // verdict.json's checks, each reason's rule and a warning's count, limit and unit are how an
  // operator sees which check failed, where the docs explain it, and how far past the limit.
  const auto judged = [](const std::function<void(Json&)>& edit) {
    Json r = gpu_health("n0", 0);
    edit(r);
    return fixtures::node(fixtures::certify(fixtures::evidence_of({r}), health_baseline()), "n0");
  };
  for (const auto& [field, code] : std::vector<std::pair<std::string, std::string>>{
           {"failure", "health.remap_failure"}, {"pending", "health.remap_pending"}}) {
    const NodeVerdict n0 = judged([&](Json& r) { r["remapped_rows"][field] = true; });
    const Reason& reason = fixtures::reason(n0, code);
    EXPECT_EQ(reason.check, "health.gpu") << code;
    EXPECT_EQ(reason.rule, "rule.row_remap") << code;
    EXPECT_THAT(n0.checks, Contains(Pair("health.gpu", "fail"))) << code;
  }
  const NodeVerdict many = judged([](Json& r) { r["remapped_rows"]["uncorrectable"] = 600; });
  const Reason& reason = fixtures::reason(many, "health.remap_many");
  EXPECT_EQ(reason.check, "health.gpu");
  EXPECT_EQ(reason.rule, "rule.row_remap");
  EXPECT_EQ(reason.message,
            "gpu 0 (GPU-n0-0): 600 rows remapped for uncorrectable errors (warn at 512)");
  EXPECT_EQ(reason.measured, 600.0);
  EXPECT_EQ(reason.limit, 512.0);
  EXPECT_EQ(reason.unit, "rows");
  EXPECT_THAT(many.checks, Contains(Pair("health.gpu", "warn")));
}

TEST(RowRemapRule, EveryGpuIsJudgedAfterOneIsReported) {
  // GPU 0 has many remapped rows (a warning) and a pending remap; GPU 1, judged after it, has a
  // failed remap and must still quarantine the node for its replacement.
  const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 2}\n");
  Json warned = gpu_health("n0", 0);
  warned["remapped_rows"]["uncorrectable"] = 600;
  warned["remapped_rows"]["pending"] = true;
  Json failed = gpu_health("n0", 1);
  failed["remapped_rows"]["failure"] = true;
  const NodeVerdict n0 =
      fixtures::node(fixtures::certify(fixtures::evidence_of({warned, failed}), b), "n0");
  EXPECT_EQ(n0.state, NodeState::kQuarantined);
  EXPECT_EQ(fixtures::reason(n0, "health.remap_failure").gpu_index, 1);
  EXPECT_EQ(fixtures::reason(n0, "health.remap_pending").gpu_index, 0);
  EXPECT_EQ(fixtures::reason(n0, "health.remap_many").gpu_index, 0);
}

TEST(RowRemapRule, AnUnreadRemapCountWarnsOfNothing) {
  // NVML could not read the count of rows remapped for uncorrectable errors: not a count.
  const NodeVerdict n0 = fixtures::node(fixtures::certify(fixtures::evidence_of({[] {
                                                            Json r = gpu_health("n0", 0);
                                                            r["remapped_rows"]["uncorrectable"] =
                                                                nullptr;
                                                            return r;
                                                          }()}),
                                                          health_baseline()),
                                        "n0");
  EXPECT_FALSE(fixtures::has_code(n0, "health.remap_many"));
}

TEST(RetiredPagesRule, DcgmLimitAndPendingRetirement) {
  EXPECT_THAT(
      codes_for("rule.retired_pages",
                [](Json& r) {
                  r["retired_pages"] = {{"single_bit", 40}, {"double_bit", 23}, {"pending", false}};
                }),
      ElementsAre("health.retired_pages"));
  EXPECT_THAT(
      codes_for("rule.retired_pages",
                [](Json& r) {
                  r["retired_pages"] = {{"single_bit", 40}, {"double_bit", 22}, {"pending", true}};
                }),
      ElementsAre("health.retired_pending"));
}

TEST(RetiredPagesRule, ItsReasonsFailTheGpuHealthCheckAndCarryTheCountAndTheLimit) {
  // verdict.json's checks, each reason's rule, and the count, limit and unit of too many retired
  // pages: what the operator reads to see which check failed and how far past the limit.
  Json many = gpu_health("n0", 0);
  many["retired_pages"] = {{"single_bit", 40}, {"double_bit", 23}, {"pending", false}};
  const NodeVerdict n0 =
      fixtures::node(fixtures::certify(fixtures::evidence_of({many}), health_baseline()), "n0");
  const Reason& pages = fixtures::reason(n0, "health.retired_pages");
  EXPECT_EQ(pages.message, "gpu 0 (GPU-n0-0): 63 retired pages (limit 62)");
  EXPECT_EQ(pages.check, "health.gpu");
  EXPECT_EQ(pages.rule, "rule.retired_pages");
  EXPECT_EQ(pages.measured, 63.0);
  EXPECT_EQ(pages.limit, 62.0);
  EXPECT_EQ(pages.unit, "pages");
  EXPECT_THAT(n0.checks, Contains(Pair("health.gpu", "fail")));

  Json pending = gpu_health("n0", 0);
  pending["retired_pages"] = {{"single_bit", 1}, {"double_bit", 0}, {"pending", true}};
  const NodeVerdict waiting =
      fixtures::node(fixtures::certify(fixtures::evidence_of({pending}), health_baseline()), "n0");
  const Reason& retirement = fixtures::reason(waiting, "health.retired_pending");
  EXPECT_EQ(retirement.check, "health.gpu");
  EXPECT_EQ(retirement.rule, "rule.retired_pages");
  EXPECT_THAT(waiting.checks, Contains(Pair("health.gpu", "fail")));
}

TEST(RetiredPagesRule, AnUnreadCountAddsNothingToTheOther) {
  // NVML read one of the two counts: the other alone is judged against the limit (62), at the
  // limit and one step above.
  struct Case {
    const char* unread;
    const char* read;
    int count;
    bool quarantined;
  };
  for (const Case& c : std::vector<Case>{{"single_bit", "double_bit", 62, false},
                                         {"single_bit", "double_bit", 63, true},
                                         {"double_bit", "single_bit", 62, false},
                                         {"double_bit", "single_bit", 63, true}}) {
    Json r = gpu_health("n0", 0);
    r["retired_pages"] = {{c.unread, nullptr}, {c.read, c.count}, {"pending", false}};
    const NodeVerdict n0 =
        fixtures::node(fixtures::certify(fixtures::evidence_of({r}), health_baseline()), "n0");
    EXPECT_EQ(fixtures::has_code(n0, "health.retired_pages"), c.quarantined)
        << c.read << " " << c.count;
  }
}

TEST(RetiredPagesRule, EveryGpuIsJudgedAfterOneIsReported) {
  // GPU 0 has too many retired pages and a pending retirement; GPU 1, judged after it, has a
  // pending retirement of its own: the technician must reset both.
  const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 2}\n");
  Json both = gpu_health("n0", 0);
  both["retired_pages"] = {{"single_bit", 40}, {"double_bit", 23}, {"pending", true}};
  Json pending = gpu_health("n0", 1);
  pending["retired_pages"] = {{"single_bit", 1}, {"double_bit", 0}, {"pending", true}};
  const NodeVerdict n0 =
      fixtures::node(fixtures::certify(fixtures::evidence_of({both, pending}), b), "n0");
  std::vector<std::string> found;
  for (const Reason& r : n0.reasons)
    found.push_back(r.code + " " + std::to_string(r.gpu_index));
  EXPECT_THAT(found, UnorderedElementsAre("health.retired_pages 0", "health.retired_pending 0",
                                          "health.retired_pending 1"));
}

TEST(PcieLinkRule, BelowMaximumWidthOrGenerationQuarantines) {
  EXPECT_THAT(codes_for("rule.pcie_link", [](Json& r) { r["pcie"]["width_current"] = 8; }),
              ElementsAre("health.pcie_degraded"));
  EXPECT_THAT(codes_for("rule.pcie_link", [](Json& r) { r["pcie"]["gen_current"] = 4; }),
              ElementsAre("health.pcie_degraded"));
  EXPECT_THAT(codes_for("rule.pcie_link", [](Json& r) { r["pcie"]["replay_count"] = 101; }),
              ElementsAre("health.pcie_replays"));
  // A replay count NVML did not read gives the replay limit nothing to judge.
  EXPECT_THAT(codes_for("rule.pcie_link", [](Json& r) { r["pcie"]["replay_count"] = nullptr; }),
              ElementsAre());
  Json r = gpu_health("n0", 0);
  r["pcie"]["width_current"] = 8;
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of({r}), health_baseline());
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->message,
            "gpu 0 (GPU-n0-0): PCIe link gen5 x8, expected gen5 x16");
}

TEST(PcieLinkRule, ItsReasonsFailTheGpuHealthCheckAndNameTheRule) {
  // verdict.json's checks and each reason's rule are how an operator finds which check failed
  // and where the docs explain it: a degraded link (quarantine) and many replays (warning).
  Json degraded = gpu_health("n0", 0);
  degraded["pcie"]["width_current"] = 8;
  const NodeVerdict n0 =
      fixtures::node(fixtures::certify(fixtures::evidence_of({degraded}), health_baseline()), "n0");
  const Reason& link = fixtures::reason(n0, "health.pcie_degraded");
  EXPECT_EQ(link.check, "health.gpu");
  EXPECT_EQ(link.rule, "rule.pcie_link");
  EXPECT_THAT(n0.checks, Contains(Pair("health.gpu", "fail")));

  Json replaying = gpu_health("n0", 0);
  replaying["pcie"]["replay_count"] = 101;
  const NodeVerdict warned = fixtures::node(
      fixtures::certify(fixtures::evidence_of({replaying}), health_baseline()), "n0");
  const Reason& replays = fixtures::reason(warned, "health.pcie_replays");
  EXPECT_EQ(replays.check, "health.gpu");
  EXPECT_EQ(replays.rule, "rule.pcie_link");
}

TEST(PcieLinkRule, ADegradedLinkThatAlsoReplaysReportsBoth) {
  // The replays say how bad the degraded link is: the technician sees both.
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\nchecks:\n  health.gpu: {max_pcie_replays: 100}\n");
  Json r = gpu_health("n0", 0);
  r["pcie"]["width_current"] = 8;
  r["pcie"]["replay_count"] = 101;
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of({r}), b);
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kQuarantined);
  EXPECT_THAT(fixtures::codes(fixtures::node(v, "n0")),
              UnorderedElementsAre("health.pcie_degraded", "health.pcie_replays"));
}

TEST(PcieLinkRule, EveryGpuIsJudgedAfterOneWarns) {
  // GPU 0 replays too often (a warning); GPU 1, judged after it, has a degraded link and must
  // still quarantine the node, and two replaying GPUs are two warnings.
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 2}\nchecks:\n  health.gpu: {max_pcie_replays: 100}\n");
  Json replaying = gpu_health("n0", 0);
  replaying["pcie"]["replay_count"] = 101;
  Json degraded = gpu_health("n0", 1);
  degraded["pcie"]["width_current"] = 8;
  const NodeVerdict mixed =
      fixtures::node(fixtures::certify(fixtures::evidence_of({replaying, degraded}), b), "n0");
  EXPECT_EQ(mixed.state, NodeState::kQuarantined);
  EXPECT_EQ(fixtures::reason(mixed, "health.pcie_degraded").gpu_index, 1);

  Json second = gpu_health("n0", 1);
  second["pcie"]["replay_count"] = 101;
  const FleetVerdict both = fixtures::certify(fixtures::evidence_of({replaying, second}), b);
  std::vector<int> warned;
  for (const Reason& r : fixtures::node(both, "n0").reasons) {
    if (r.code == "health.pcie_replays") warned.push_back(r.gpu_index);
  }
  EXPECT_THAT(warned, UnorderedElementsAre(0, 1));
}

TEST(NvlinkRule, InactiveMissingAndErroringLinks) {
  EXPECT_THAT(codes_for("rule.nvlink", [](Json& r) { r["nvlink"][5]["active"] = false; }),
              ElementsAre("health.nvlink_down"));
  EXPECT_THAT(codes_for("rule.nvlink", [](Json& r) { r["nvlink"].erase(17); }),
              ElementsAre("health.nvlink_down"));
  EXPECT_THAT(codes_for("rule.nvlink", [](Json& r) { r["nvlink"][3]["recovery_errors"] = 1; }),
              ElementsAre("health.nvlink_errors"));
  EXPECT_THAT(codes_for("rule.nvlink", [](Json& r) { r["nvlink"][3]["crc_flit_errors"] = 7; }),
              ElementsAre("health.nvlink_crc"));
  Json r = gpu_health("n0", 0);
  r["nvlink"][5]["active"] = false;
  const auto findings =
      fixtures::run_rule("rule.nvlink", fixtures::evidence_of({r}), health_baseline());
  ASSERT_TRUE(findings[0].link);
  EXPECT_EQ(findings[0].link->type, "nvlink");
  EXPECT_EQ(findings[0].link->index, 5);
}

TEST(XidRule, FatalXidsQuarantineOthersWarnApplicationXidsAreIgnored) {
  EXPECT_THAT(codes_for("rule.xid",
                        [](Json& r) {
                          r["xid_events"] = {{{"xid", 79}, {"time", "t"}}};
                        }),
              ElementsAre("health.xid_fatal"));
  EXPECT_THAT(codes_for("rule.xid",
                        [](Json& r) {
                          r["xid_events"] = {{{"xid", 92}, {"time", "t"}}};
                        }),
              ElementsAre("health.xid"));
  EXPECT_THAT(codes_for("rule.xid",
                        [](Json& r) {
                          r["xid_events"] = {{{"xid", 13}, {"time", "t"}}};
                        }),
              ElementsAre());
  // Seen by the burn's telemetry too, and repeated: one reason with the count.
  Json burn = fixtures::burn("n0", 0, 700);
  burn["telemetry"] = {
      {"xid_events", {{{"xid", 48}, {"time", "a"}}, {{"xid", 48}, {"time", "b"}}}}};
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({gpu_health("n0", 0), burn}), health_baseline());
  const Reason& reason = fixtures::reason(fixtures::node(v, "n0"), "health.xid_fatal");
  EXPECT_EQ(reason.severity, Severity::kReset);
  EXPECT_THAT(reason.message, HasSubstr("XID 48 reported at a (2 events)"));
}

TEST(ThrottleRule, ThrottlingWarnsButNeverQuarantines) {
  EXPECT_THAT(codes_for("rule.throttle",
                        [](Json& r) {
                          r["clock_event_reasons"] = {"sw_power_cap", "hw_thermal"};
                        }),
              ElementsAre("health.throttle"));
  EXPECT_THAT(codes_for("rule.throttle",
                        [](Json& r) {
                          r["clock_event_reasons"] = {"sw_power_cap", "gpu_idle"};
                        }),
              ElementsAre());
  Json r = gpu_health("n0", 0);
  r["clock_event_reasons"] = {"hw_slowdown"};
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of({r}), health_baseline());
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kCertified);
  EXPECT_EQ(fixtures::node(v, "n0").severity, Severity::kMonitor);
  EXPECT_EQ(fixtures::node(v, "n0").reasons.at(0).code, "health.throttle");
}

Json ib_port(const std::string& host, int index, const std::string& state = "ACTIVE",
             int link_downed = 0, int symbol_errors = 0) {
  Json r = fixtures::record("health", host);
  r["component"] = "ib_port";
  r["device"] = "mlx5_" + std::to_string(index);
  r["port"] = 1;
  r["state"] = state;
  r["phys_state"] = state == "ACTIVE" ? "LinkUp" : "Polling";
  r["rate_gbps"] = 400;
  r["link_layer"] = "InfiniBand";
  r["counters"] = {{"symbol_error", symbol_errors}, {"link_downed", link_downed}};
  return r;
}

TEST(IbPortRule, DownPortsAndFlapsQuarantineErrorCountersWarn) {
  const Evidence e = fixtures::evidence_of(
      {ib_port("n0", 0, "DOWN"), ib_port("n1", 0, "ACTIVE", 5), ib_port("n2", 0, "ACTIVE", 4, 17)});
  const auto findings = fixtures::run_rule("rule.ib_port", e, health_baseline());
  std::vector<std::string> got;
  for (const auto& f : findings)
    got.push_back(e.node_name(f.node) + ":" + f.code.str());
  EXPECT_THAT(got,
              ElementsAre("n0:health.ib_port_down", "n1:health.ib_counter", "n2:health.ib_errors"));
  EXPECT_EQ(findings[0].link->device, "mlx5_0");
  EXPECT_EQ(findings[0].link->index, 1);
}

TEST(IbPortRule, OnlyPortsOfTheJudgedLinkLayersCount) {
  Json ethernet = ib_port("n0", 9, "ACTIVE", 0, 50);
  ethernet["device"] = "mlx5_bond_0";
  ethernet["link_layer"] = "Ethernet";
  ethernet["rate_gbps"] = 200;
  ethernet["state"] = "DOWN";
  const Evidence e = fixtures::evidence_of({ib_port("n0", 0), ib_port("n0", 1), ethernet});
  const Baseline ib_only = fixtures::baseline_of(
      "required: [health.ib]\nnode: {ib_ports: 2}\nchecks:\n  health.ib:\n    link_layers: "
      "[InfiniBand]\n"
      "    rate_gbit_per_s: {equals: 400}\n");
  const FleetVerdict v = fixtures::certify(e, ib_only);
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kCertified)
      << fixtures::codes(fixtures::node(v, "n0")).size();
  const Baseline all = fixtures::baseline_of(
      "required: [health.ib]\nnode: {ib_ports: 2}\nchecks:\n  health.ib:\n    rate_gbit_per_s: "
      "{equals: 400}\n");
  const FleetVerdict judged = fixtures::certify(e, all);
  EXPECT_EQ(fixtures::node(judged, "n0").state, NodeState::kQuarantined);
  EXPECT_TRUE(fixtures::has_code(fixtures::node(judged, "n0"), "health.ib_port_down"));
  EXPECT_TRUE(fixtures::has_code(fixtures::node(judged, "n0"), "perf.not_equal"));
}

TEST(NodeInventoryRule, MissingGpusAndPortsQuarantine) {
  Json node = fixtures::record("health", "n0");
  node["component"] = "node";
  node["gpu_count"] = 0;
  node["ib_port_count"] = 1;
  const Evidence e = fixtures::evidence_of({node});
  const auto findings = fixtures::run_rule("rule.node_inventory", e, health_baseline());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].code.view(), "health.gpu_count");
  EXPECT_EQ(findings[1].code.view(), "health.ib_port_count");
  const FleetVerdict v = fixtures::certify(e, health_baseline());
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->message,
            "0 GPUs visible, the baseline expects 1");
}

// A node health record of `host` counting `gpus` GPUs and `ports` IB ports.
Json inventory(const std::string& host, Json gpus, Json ports) {
  Json node = fixtures::record("health", host);
  node["component"] = "node";
  node["gpu_count"] = std::move(gpus);
  node["ib_port_count"] = std::move(ports);
  return node;
}

const Baseline& inventory_baseline() {
  static const Baseline b =
      fixtures::baseline_of("required: [health.node]\nnode: {gpus: 2, ib_ports: 2}\n");
  return b;
}

TEST(NodeInventoryRule, ItsReasonsFailTheNodeHealthCheckWithTheCountAndTheLimit) {
  // verdict.json's checks, each reason's rule and its measured and limit figures are how an
  // operator and a script see what is missing: fewer GPUs, more GPUs, fewer IB ports.
  struct Case {
    int gpus;
    int ports;
    std::string code;
    double measured;
    std::string message;
  };
  const std::vector<Case> cases = {
      {1, 2, "health.gpu_count", 1, "1 GPUs visible, the baseline expects 2"},
      {3, 2, "health.gpu_count", 3, "3 GPUs visible, the baseline expects 2"},
      {2, 1, "health.ib_port_count", 1, "1 InfiniBand ports found, the baseline expects 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const NodeVerdict n0 =
        fixtures::node(fixtures::certify(fixtures::evidence_of({inventory("n0", c.gpus, c.ports)}),
                                         inventory_baseline()),
                       "n0");
    EXPECT_EQ(n0.state, NodeState::kQuarantined);
    const Reason& r = fixtures::reason(n0, c.code);
    EXPECT_EQ(r.check, "health.node");
    EXPECT_EQ(r.rule, "rule.node_inventory");
    EXPECT_EQ(r.message, c.message);
    EXPECT_EQ(r.measured, c.measured);
    EXPECT_EQ(r.limit, 2.0);
    EXPECT_THAT(n0.checks, Contains(Pair("health.node", "fail")));
  }
}

TEST(NodeInventoryRule, EveryNodeIsJudgedAfterOneFails) {
  // n0 lost an IB port, n1 a GPU, n2 both: each is quarantined for its own loss, whichever
  // record comes first.
  const FleetVerdict v = fixtures::certify(
      fixtures::evidence_of({inventory("n0", 2, 1), inventory("n1", 1, 2), inventory("n2", 1, 1)}),
      inventory_baseline());
  EXPECT_THAT(fixtures::codes(fixtures::node(v, "n0")), ElementsAre("health.ib_port_count"));
  EXPECT_THAT(fixtures::codes(fixtures::node(v, "n1")), ElementsAre("health.gpu_count"));
  EXPECT_THAT(fixtures::codes(fixtures::node(v, "n2")),
              UnorderedElementsAre("health.gpu_count", "health.ib_port_count"));
}

TEST(NodeInventoryRule, AnUncountedInventoryIsNotACountOfZero) {
  // The node stage could not count the GPUs or the ports: nothing says one is missing, so no
  // inventory reason names a count nobody read.
  for (const Json& r : {inventory("n0", nullptr, 2), inventory("n0", 2, nullptr)}) {
    SCOPED_TRACE(r.dump());
    const NodeVerdict n0 =
        fixtures::node(fixtures::certify(fixtures::evidence_of({r}), inventory_baseline()), "n0");
    EXPECT_FALSE(fixtures::has_code(n0, "health.gpu_count"));
    EXPECT_FALSE(fixtures::has_code(n0, "health.ib_port_count"));
  }
}

TEST(GpuLostRule, AGpuThatFellOffTheBusIsAFaultNotMissingEvidence) {
  Json lost = fixtures::record("health", "n0", "error", 0);
  lost["component"] = "gpu";
  lost["reason"] = "GPU 0 is lost: NVML answered 'GPU is lost'";
  lost["lost"] = true;
  Json unreadable = lost;
  unreadable.erase("lost");  // an error without the flag: evidence missing, no more
  unreadable["host"] = "n1";
  const FleetVerdict v =
      fixtures::certify(fixtures::evidence_of({lost, unreadable}), health_baseline());
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kQuarantined);
  EXPECT_EQ(fixtures::node(v, "n0").severity, Severity::kReset);
  EXPECT_EQ(fixtures::node(v, "n0").first_reason()->message,
            "gpu 0 (GPU-n0-0): the GPU is lost (fell off the bus): GPU 0 is lost: NVML answered "
            "'GPU is lost'");
  EXPECT_EQ(fixtures::node(v, "n1").state, NodeState::kInconclusive);
  EXPECT_EQ(fixtures::node(v, "n1").first_reason()->code, "evidence.error");
}

TEST(HealthStageFailRule, AFailingHealthRecordIsNeverAPass) {
  Json r = gpu_health("n0", 0);
  r["status"] = "fail";
  r["reason"] = "NVML says the GPU is lost";
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of({r}), health_baseline());
  EXPECT_EQ(fixtures::node(v, "n0").state, NodeState::kQuarantined);
  EXPECT_THAT(fixtures::node(v, "n0").first_reason()->message,
              HasSubstr("NVML says the GPU is lost"));
}

TEST(HealthStageFailRule, AFailedRecordOfEveryComponentFailsItsCheckWithWhereAndWhy) {
  // A GPU, an IB port or the node itself: each failed record quarantines its node, fails its own
  // check, names the rule and points at its line, and its message says where and why (or that
  // the stage gave no reason).
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu, health.ib, health.node]\nnode: {gpus: 1, ib_ports: 1}\n");
  Json gpu = gpu_health("n0", 0);
  Json port = fixtures::record("health", "n0");
  port["component"] = "ib_port";
  port["device"] = "mlx5_0";
  port["port"] = 1;
  Json node = inventory("n0", 1, 1);
  struct Case {
    Json record;
    std::string check;
    int gpu_index;
    std::string reason;
    std::string message;
  };
  const std::vector<Case> cases = {
      {gpu, "health.gpu", 0, "NVML: GPU requires reset",
       "gpu 0 (GPU-n0-0): health.gpu reported a failure: NVML: GPU requires reset"},
      {port, "health.ib", -1, "port counters unreadable",
       "mlx5_0: health.ib reported a failure: port counters unreadable"},
      {node, "health.node", -1, "lspci failed", "health.node reported a failure: lspci failed"},
      {node, "health.node", -1, "", "health.node reported a failure: no reason given"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    Json failed = c.record;
    failed["status"] = "fail";
    failed["reason"] = c.reason;
    const NodeVerdict n0 =
        fixtures::node(fixtures::certify(fixtures::evidence_of({failed}), b), "n0");
    EXPECT_EQ(n0.state, NodeState::kQuarantined);
    const Reason& reason = fixtures::reason(n0, "stage.fail");
    EXPECT_EQ(reason.message, c.message);
    EXPECT_EQ(reason.check, c.check);
    EXPECT_EQ(reason.rule, "rule.health_stage_fail");
    EXPECT_EQ(reason.gpu_index, c.gpu_index);
    ASSERT_EQ(reason.evidence.size(), 1u);
    EXPECT_EQ(reason.evidence[0].line, 1u);
    EXPECT_THAT(n0.checks, Contains(Pair(c.check, "fail")));
  }
}

TEST(HealthStageFailRule, EveryFailedRecordIsReported) {
  // A failed GPU, IB port and node record on each of two nodes: each node has a reason for each
  // of its own, whichever record comes first.
  std::vector<Json> records;
  for (const char* host : {"n0", "n1"}) {
    Json gpu = gpu_health(host, 0);
    Json port = fixtures::record("health", host);
    port["component"] = "ib_port";
    port["device"] = "mlx5_0";
    port["port"] = 1;
    for (Json r : {gpu, port, inventory(host, 1, 1)}) {
      r["status"] = "fail";
      r["reason"] = "broken";
      records.push_back(r);
    }
  }
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), inventory_baseline());
  for (const char* host : {"n0", "n1"}) {
    std::vector<std::string> checks;
    for (const Reason& r : fixtures::node(v, host).reasons) {
      if (r.code == "stage.fail") checks.push_back(r.check);
    }
    EXPECT_THAT(checks, UnorderedElementsAre("health.gpu", "health.ib", "health.node")) << host;
  }
}

TEST(HealthStageFailRule, ARecordThatCouldNotMeasureIsMissingEvidenceNotAFailure) {
  // skipped, error and timeout say the stage did not look, not that it found a fault: the node
  // is inconclusive and no component is reported failed.
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu, health.ib, health.node]\nnode: {gpus: 1, ib_ports: 1}\n");
  Json port = fixtures::record("health", "n0");
  port["component"] = "ib_port";
  port["device"] = "mlx5_0";
  port["port"] = 1;
  for (const Json& record : {gpu_health("n0", 0), port, inventory("n0", 1, 1)}) {
    for (const char* status : {"error", "timeout", "skipped"}) {
      Json r = record;
      r["status"] = status;
      r["reason"] = "could not look";
      const NodeVerdict n0 = fixtures::node(fixtures::certify(fixtures::evidence_of({r}), b), "n0");
      SCOPED_TRACE(std::string(status) + " " + r["component"].get<std::string>());
      EXPECT_EQ(n0.state, NodeState::kInconclusive);
      EXPECT_FALSE(fixtures::has_code(n0, "stage.fail"));
    }
  }
}

// The operator reads which check failed and which rule said so (the verdict's `checks` and each
// reason's `check` and `rule`): a lost GPU fails the GPU health check.
TEST(GpuLostRule, ALostGpuFailsTheGpuHealthCheckAndNamesItsRule) {
  Json lost = fixtures::record("health", "n0", "error", 0);
  lost["component"] = "gpu";
  lost["lost"] = true;
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of({lost}), health_baseline());
  const NodeVerdict& n0 = fixtures::node(v, "n0");
  const Reason& reason = fixtures::reason(n0, "health.gpu_lost");
  EXPECT_EQ(reason.check, "health.gpu");
  EXPECT_EQ(reason.rule, "rule.gpu_lost");
  EXPECT_THAT(n0.checks, Contains(Pair("health.gpu", "fail")));
}

TEST(GpuLostRule, EveryLostGpuOfANodeIsNamed) {
  // The technician replaces what the verdict names: two GPUs off the bus are two reasons.
  std::vector<Json> records;
  for (const int gpu : {0, 1}) {
    Json lost = fixtures::record("health", "n0", "error", gpu);
    lost["component"] = "gpu";
    lost["lost"] = true;
    records.push_back(lost);
  }
  const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 2}\n");
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), b);
  std::vector<int> named;
  for (const Reason& r : fixtures::node(v, "n0").reasons) {
    if (r.code == "health.gpu_lost") named.push_back(r.gpu_index);
  }
  EXPECT_THAT(named, UnorderedElementsAre(0, 1));
}

// A current PCIe generation or width given as 0 or -1 is no reading: the GPU is inconclusive on
// it even where nothing asks for a figure (no minimum, the GPU's maximum unknown), never
// certified or quarantined; 1, the least reading there is, certifies; null (not given) asks
// nothing either. Beside another GPU's good record, and as the GPU's only record.
TEST(PcieLinkRule, AFigureReadAsZeroOrLessIsInconclusiveWhateverItIsHeldTo) {
  for (const char* field : {"gen_current", "width_current"}) {
    for (const Json& value : {Json(-1), Json(0), Json(1), Json(nullptr)}) {
      for (const bool beside_good : {false, true}) {
        SCOPED_TRACE(std::string(field) + " " + value.dump() + (beside_good ? " beside" : ""));
        const Baseline b = fixtures::baseline_of(
            fmt::format("required: [health.gpu]\nnode: {{gpus: {}}}\n", beside_good ? 2 : 1));
        Json r = gpu_health("n0", 0);
        r["pcie"]["gen_max"] = nullptr;
        r["pcie"]["width_max"] = nullptr;
        r["pcie"][field] = value;
        std::vector<Json> records = {r};
        if (beside_good) records.push_back(gpu_health("n0", 1));
        const NodeVerdict n0 =
            fixtures::node(fixtures::certify(fixtures::evidence_of(records), b), "n0");
        const bool not_a_reading = value.is_number() && value.get<int>() <= 0;
        EXPECT_EQ(n0.state, not_a_reading ? NodeState::kInconclusive : NodeState::kCertified);
        if (!not_a_reading) continue;
        EXPECT_THAT(fixtures::codes(n0), ElementsAre("evidence.no_figure"));
        const Reason& reason = *n0.first_reason();
        EXPECT_EQ(reason.gpu_index, 0);
        EXPECT_THAT(reason.message,
                    HasSubstr(fmt::format("(read as {}, which is no reading)", value.get<int>())));
      }
    }
  }
}

// A node health record's GPU or port count that is no count (negative, or not an integer)
// refuses the record: its node is inconclusive (input.unparsable), never judged as having that
// many, nor as having none. 0 is a count: fewer GPUs than the baseline's quarantines; 1 passes
// a baseline of 1. As the node's only health record and beside a good one.
TEST(NodeInventoryRule, ACountThatIsNoCountIsLostInputNotIgnored) {
  const Baseline b =
      fixtures::baseline_of("required: [health.node]\nnode: {gpus: 1, ib_ports: 1}\n");
  const Baseline unbounded = fixtures::baseline_of("required: [health.node]\n");
  for (const char* field : {"gpu_count", "ib_port_count"}) {
    for (const Json& value : {Json(-1), Json("8"), Json(2.5), Json(0), Json(1)}) {
      for (const bool beside_good : {false, true}) {
        SCOPED_TRACE(std::string(field) + " " + value.dump() + (beside_good ? " beside" : ""));
        Json node = fixtures::record("health", "n0");
        node["component"] = "node";
        node["gpu_count"] = 1;
        node["ib_port_count"] = 1;
        std::vector<Json> records;
        if (beside_good) records.push_back(node);
        node[field] = value;
        records.push_back(node);
        const bool count = value.is_number_integer() && value.get<int>() >= 0;
        for (const Baseline* baseline : {&b, &unbounded}) {
          const NodeVerdict n0 =
              fixtures::node(fixtures::certify(fixtures::evidence_of(records), *baseline), "n0");
          if (!count) {
            EXPECT_EQ(n0.state, NodeState::kInconclusive);
            EXPECT_THAT(fixtures::reason(n0, "input.unparsable").message, HasSubstr(field));
          } else if (value.get<int>() == 0 && baseline == &b) {
            EXPECT_EQ(n0.state, NodeState::kQuarantined);
          } else {
            EXPECT_EQ(n0.state, NodeState::kCertified);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace commcert
