// Every threshold rule at its limit and one step either side, with the verdict docs/validator.md
// promises: a mistake in a comparison (> for >=, a limit off by one, a dropped condition) moves
// one of these rows to the other side. One table per rule; each row is judged through the real
// reader and the whole certify pipeline, so the row checks the node's state and its reason code.
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

using fixtures::gpu_health;

// What the docs promise for one value: the node's state, and the code that explains it (empty:
// the value raises nothing).
struct Expected {
  NodeState state;
  std::string code;
};

const Expected kPasses{NodeState::kCertified, ""};

Expected warns(std::string code) {
  return {NodeState::kCertified, std::move(code)};
}
Expected quarantines(std::string code) {
  return {NodeState::kQuarantined, std::move(code)};
}

struct Row {
  std::int64_t value;
  Expected expected;
};

// Limits away from their defaults where the default is 0, so both sides of the limit exist.
const Baseline& boundary_baseline() {
  static const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\n"
      "node: {gpus: 2, ib_ports: 2, nvlinks_per_gpu: 18}\n"
      "checks:\n"
      "  health.gpu: {max_uncorrectable_ecc: 3, max_correctable_ecc: 1000,\n"
      "               max_pcie_replays: 100, remapped_rows_warn: 512, max_retired_pages: 62,\n"
      "               max_nvlink_replay_errors: 2, max_nvlink_recovery_errors: 2,\n"
      "               max_nvlink_crc_errors: 10}\n");
  return b;
}

// Judges both GPUs of node n0 healthy except GPU 1, changed by `edit`, plus `extra` records.
NodeVerdict judge(const std::function<void(Json&)>& edit, std::vector<Json> extra = {}) {
  Json changed = gpu_health("n0", 1);
  edit(changed);
  std::vector<Json> records = {gpu_health("n0", 0), changed};
  for (auto& r : extra)
    records.push_back(std::move(r));
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), boundary_baseline());
  return fixtures::node(v, "n0");
}

void expect_row(const NodeVerdict& node, const Row& row, const std::string& what) {
  SCOPED_TRACE(what + " = " + std::to_string(row.value));
  EXPECT_EQ(node.state, row.expected.state)
      << to_string(node.state) << "; codes: " << ::testing::PrintToString(fixtures::codes(node));
  if (row.expected.code.empty()) {
    EXPECT_TRUE(fixtures::codes(node).empty()) << ::testing::PrintToString(fixtures::codes(node));
  } else {
    EXPECT_EQ(fixtures::codes(node), std::vector<std::string>{row.expected.code});
  }
}

void expect_table(const std::string& what, const std::vector<Row>& rows,
                  const std::function<void(Json&, std::int64_t)>& set) {
  for (const Row& row : rows)
    expect_row(judge([&](Json& r) { set(r, row.value); }), row, what);
}

TEST(RuleBoundaries, UncorrectableEccQuarantinesAboveItsLimit) {
  // rule.gpu_ecc: volatile uncorrectable above max_uncorrectable_ecc (3 here) quarantines.
  expect_table("ecc.volatile.uncorrected",
               {{2, kPasses}, {3, kPasses}, {4, quarantines("health.ecc_uncorrectable")}},
               [](Json& r, std::int64_t v) { r["ecc"]["volatile"]["uncorrected"] = v; });
}

TEST(RuleBoundaries, UncorrectableEccAtTheDefaultLimitOfZero) {
  // The shipped default: one uncorrectable error is too many.
  const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 1}\n");
  for (const Row& row :
       std::vector<Row>{{0, kPasses}, {1, quarantines("health.ecc_uncorrectable")}}) {
    Json r = gpu_health("n0", 0);
    r["ecc"]["volatile"]["uncorrected"] = row.value;
    const FleetVerdict v = fixtures::certify(fixtures::evidence_of({r}), b);
    expect_row(fixtures::node(v, "n0"), row, "ecc.volatile.uncorrected (default limit)");
  }
}

TEST(RuleBoundaries, CorrectableEccWarnsAboveItsLimit) {
  expect_table("ecc.volatile.corrected",
               {{999, kPasses}, {1000, kPasses}, {1001, warns("health.ecc_correctable")}},
               [](Json& r, std::int64_t v) { r["ecc"]["volatile"]["corrected"] = v; });
}

TEST(RuleBoundaries, EccReasonsNameCountAndLimitAndOnlyAnOkRecordWithCountsIsJudged) {
  // GPU 1 over both limits: both reasons, under the health check, with count and limit.
  const NodeVerdict both = judge([](Json& r) {
    r["ecc"]["volatile"]["uncorrected"] = 4;
    r["ecc"]["volatile"]["corrected"] = 1001;
  });
  const Reason& uncorrectable = fixtures::reason(both, "health.ecc_uncorrectable");
  EXPECT_EQ(uncorrectable.message,
            "gpu 1 (GPU-n0-1): 4 uncorrectable ECC errors since the last reset (limit 3)");
  EXPECT_EQ(uncorrectable.check, "health.gpu");
  EXPECT_EQ(fixtures::reason(both, "health.ecc_correctable").message,
            "gpu 1 (GPU-n0-1): 1001 correctable ECC errors since the last reset (warn above "
            "1000)");
  // Both GPUs over: both named.
  Json first = gpu_health("n0", 0);
  first["ecc"]["volatile"]["corrected"] = 2000;
  const NodeVerdict two = judge([](Json& r) { r["ecc"]["volatile"]["corrected"] = 2000; }, {first});
  int warned = 0;
  for (const Reason& r : two.reasons)
    warned += r.code == "health.ecc_correctable";
  EXPECT_EQ(warned, 2);
  // Not read, or in a record that is not ok: no ECC reason (the record is no evidence).
  for (const auto& edit : std::vector<std::function<void(Json&)>>{
           [](Json& r) {
             r["ecc"]["volatile"] = {{"uncorrected", nullptr}, {"corrected", nullptr}};
           },
           [](Json& r) {
             r["status"] = "error";
             r["ecc"]["volatile"]["uncorrected"] = 9;
             r["ecc"]["volatile"]["corrected"] = 9999;
           }}) {
    const NodeVerdict n = judge(edit);
    EXPECT_FALSE(fixtures::has_code(n, "health.ecc_uncorrectable"));
    EXPECT_FALSE(fixtures::has_code(n, "health.ecc_correctable"));
  }
}

TEST(RuleBoundaries, PcieReplaysWarnAboveTheirLimit) {
  expect_table("pcie.replay_count",
               {{99, kPasses}, {100, kPasses}, {101, warns("health.pcie_replays")}},
               [](Json& r, std::int64_t v) { r["pcie"]["replay_count"] = v; });
}

TEST(RuleBoundaries, RemappedRowsWarnFromTheirLimit) {
  // rule.row_remap: uncorrectable remaps >= remapped_rows_warn (DCGM's 512) warn.
  expect_table(
      "remapped_rows.uncorrectable",
      {{511, kPasses}, {512, warns("health.remap_many")}, {513, warns("health.remap_many")}},
      [](Json& r, std::int64_t v) { r["remapped_rows"]["uncorrectable"] = v; });
}

TEST(RuleBoundaries, RetiredPagesQuarantineAboveTheirLimit) {
  // rule.retired_pages: single + double bit above max_retired_pages (62: DCGM fails at 63).
  expect_table(
      "retired_pages (single + double)",
      {{61, kPasses}, {62, kPasses}, {63, quarantines("health.retired_pages")}},
      [](Json& r, std::int64_t v) {
        r["retired_pages"] = {{"single_bit", v - 20}, {"double_bit", 20}, {"pending", false}};
      });
}

// rule.nvlink: replay or recovery errors on a link above their limits (2 each here) quarantine;
// CRC errors (flit + data) above max_nvlink_crc_errors (10) warn; fewer links than
// node.nvlinks_per_gpu (18) quarantine, more do not.
TEST(RuleBoundaries, NvlinkReplayErrorsQuarantineAboveTheirLimit) {
  expect_table("nvlink[3].replay_errors",
               {{1, kPasses}, {2, kPasses}, {3, quarantines("health.nvlink_errors")}},
               [](Json& r, std::int64_t v) { r["nvlink"][3]["replay_errors"] = v; });
}

TEST(RuleBoundaries, NvlinkRecoveryErrorsQuarantineAboveTheirLimit) {
  expect_table("nvlink[3].recovery_errors",
               {{1, kPasses}, {2, kPasses}, {3, quarantines("health.nvlink_errors")}},
               [](Json& r, std::int64_t v) { r["nvlink"][3]["recovery_errors"] = v; });
}

TEST(RuleBoundaries, NvlinkCrcErrorsWarnAboveTheirLimit) {
  // Flit and data CRC errors count together: 5 flit + (value - 5) data.
  expect_table("nvlink[0] crc flit + data",
               {{9, kPasses}, {10, kPasses}, {11, warns("health.nvlink_crc")}},
               [](Json& r, std::int64_t v) {
                 r["nvlink"][0]["crc_flit_errors"] = 5;
                 r["nvlink"][0]["crc_data_errors"] = v - 5;
               });
}

TEST(RuleBoundaries, FewerNvlinksThanTheSkuQuarantineMoreDoNot) {
  expect_table("nvlinks reported",
               {{17, quarantines("health.nvlink_down")}, {18, kPasses}, {19, kPasses}},
               [](Json& r, std::int64_t v) {
                 Json links = Json::array();
                 for (std::int64_t l = 0; l < v; ++l) {
                   links.push_back({{"link", l},
                                    {"active", true},
                                    {"replay_errors", 0},
                                    {"recovery_errors", 0},
                                    {"crc_flit_errors", 0},
                                    {"crc_data_errors", 0}});
                 }
                 r["nvlink"] = links;
               });
}

TEST(RuleBoundaries, PcieBelowTheGpusMaximumIsDegraded) {
  // pcie_at_max (the default): current generation and width against the GPU's maximum (5, 16).
  expect_table("pcie.gen_current",
               {{4, quarantines("health.pcie_degraded")}, {5, kPasses}, {6, kPasses}},
               [](Json& r, std::int64_t v) { r["pcie"]["gen_current"] = v; });
  expect_table("pcie.width_current",
               {{15, quarantines("health.pcie_degraded")}, {16, kPasses}, {17, kPasses}},
               [](Json& r, std::int64_t v) { r["pcie"]["width_current"] = v; });
}

TEST(RuleBoundaries, PcieBelowTheBaselinesMinimumIsDegraded) {
  // pcie_at_max off: only pcie_min_gen 4 and pcie_min_width 8 count, not the GPU's maximum.
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1, nvlinks_per_gpu: 18}\n"
      "checks:\n  health.gpu: {pcie_at_max: false, pcie_min_gen: 4, pcie_min_width: 8}\n");
  const auto judge_pcie = [&](const char* field, std::int64_t value) {
    Json r = gpu_health("n0", 0);
    r["pcie"][field] = value;
    return fixtures::node(fixtures::certify(fixtures::evidence_of({r}), b), "n0");
  };
  for (const Row& row :
       std::vector<Row>{{3, quarantines("health.pcie_degraded")}, {4, kPasses}, {5, kPasses}}) {
    expect_row(judge_pcie("gen_current", row.value), row, "pcie.gen_current (min 4)");
  }
  for (const Row& row :
       std::vector<Row>{{7, quarantines("health.pcie_degraded")}, {8, kPasses}, {9, kPasses}}) {
    expect_row(judge_pcie("width_current", row.value), row, "pcie.width_current (min 8)");
  }
}

Expected inconclusive(std::string code) {
  return {NodeState::kInconclusive, std::move(code)};
}

// rule.pcie_link reads a PCIe generation or width of 0 or less as no reading (the record reader
// drops it). Held to a figure (pcie_min_gen/pcie_min_width 1 here, the lowest a baseline can
// ask), an unread current figure is inconclusive, never certified, never a degraded link; held
// to nothing (pcie_at_max off, no minimum), it is inconclusive too: the record gave a value
// that is no reading. 1, the least reading, passes.
TEST(RuleBoundaries, PcieFigureOfZeroOrLessIsUnread) {
  struct Table {
    std::string limits;
    std::vector<Row> rows;
  };
  const std::vector<Table> tables = {
      {"{pcie_at_max: false, pcie_min_gen: 1, pcie_min_width: 1}",
       {{-1, inconclusive("evidence.no_figure")},
        {0, inconclusive("evidence.no_figure")},
        {1, kPasses}}},
      {"{pcie_at_max: false, pcie_min_gen: 2, pcie_min_width: 2}",
       {{0, inconclusive("evidence.no_figure")},
        {1, quarantines("health.pcie_degraded")},
        {2, kPasses},
        {3, kPasses}}},
      {"{pcie_at_max: false}",
       {{-1, inconclusive("evidence.no_figure")},
        {0, inconclusive("evidence.no_figure")},
        {1, kPasses}}},
  };
  for (const Table& table : tables) {
    const Baseline b = fixtures::baseline_of(
        "required: [health.gpu]\nnode: {gpus: 1}\n"
        "checks:\n  health.gpu: " +
        table.limits + "\n");
    for (const char* field : {"gen_current", "width_current"}) {
      for (const Row& row : table.rows) {
        Json r = gpu_health("n0", 0);
        r["pcie"][field] = row.value;
        const NodeVerdict node =
            fixtures::node(fixtures::certify(fixtures::evidence_of({r}), b), "n0");
        expect_row(node, row, std::string("pcie.") + field + " against " + table.limits);
      }
    }
  }
}

// pcie_at_max (the default) holds the current figure to the GPU's maximum when NVML read one: a
// maximum of 0 or less is unread, so it asks nothing, and a current figure not given (null) is
// then not compared with anything; one given as 0 or less is no reading, inconclusive whatever
// it is held to; a maximum that was read makes the unread current figure inconclusive.
TEST(RuleBoundaries, PcieMaximumOfZeroOrLessAsksNothing) {
  const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 1}\n");
  struct Case {
    const char* max_field;
    const char* current_field;
    std::int64_t max;
    Json current;
    Expected expected;
  };
  const std::vector<Case> cases = {
      {"gen_max", "gen_current", 0, 4, kPasses},
      {"gen_max", "gen_current", -1, 4, kPasses},
      {"gen_max", "gen_current", 0, nullptr, kPasses},
      {"gen_max", "gen_current", -1, 0, inconclusive("evidence.no_figure")},
      {"gen_max", "gen_current", 0, -1, inconclusive("evidence.no_figure")},
      {"gen_max", "gen_current", 1, nullptr, inconclusive("evidence.no_figure")},
      {"gen_max", "gen_current", 1, 1, kPasses},
      {"gen_max", "gen_current", 2, 1, quarantines("health.pcie_degraded")},
      {"width_max", "width_current", 0, 8, kPasses},
      {"width_max", "width_current", -1, 8, kPasses},
      {"width_max", "width_current", 0, nullptr, kPasses},
      {"width_max", "width_current", -1, 0, inconclusive("evidence.no_figure")},
      {"width_max", "width_current", 0, -1, inconclusive("evidence.no_figure")},
      {"width_max", "width_current", 1, nullptr, inconclusive("evidence.no_figure")},
      {"width_max", "width_current", 1, 1, kPasses},
      {"width_max", "width_current", 2, 1, quarantines("health.pcie_degraded")},
  };
  for (const Case& c : cases) {
    Json r = gpu_health("n0", 0);
    r["pcie"][c.max_field] = c.max;
    r["pcie"][c.current_field] = c.current;
    const NodeVerdict node = fixtures::node(fixtures::certify(fixtures::evidence_of({r}), b), "n0");
    expect_row(
        node, {c.max, c.expected},
        std::string("pcie.") + c.max_field + " with " + c.current_field + " " + c.current.dump());
  }
}

// rule.node_inventory: gpu_count other than node.gpus (2 here) quarantines, fewer or more;
// ib_port_count below node.ib_ports (2 here) quarantines, more does not.
NodeVerdict judge_inventory(std::int64_t gpus, std::int64_t ib_ports) {
  Json node = fixtures::record("health", "n0");
  node["component"] = "node";
  node["gpu_count"] = gpus;
  node["ib_port_count"] = ib_ports;
  return judge([](Json&) {}, {node});
}

TEST(RuleBoundaries, GpuCountMustEqualTheSku) {
  for (const Row& row : std::vector<Row>{{1, quarantines("health.gpu_count")},
                                         {2, kPasses},
                                         {3, quarantines("health.gpu_count")}}) {
    expect_row(judge_inventory(row.value, 2), row, "gpu_count");
  }
}

TEST(RuleBoundaries, IbPortCountMustReachTheSku) {
  for (const Row& row :
       std::vector<Row>{{1, quarantines("health.ib_port_count")}, {2, kPasses}, {3, kPasses}}) {
    expect_row(judge_inventory(2, row.value), row, "ib_port_count");
  }
}

// rule.ib_port: a fail counter above its limit quarantines (link_downed 4 here), a warn counter
// above its limit warns (symbol_error 0).
NodeVerdict judge_ib_counters(std::int64_t link_downed, std::int64_t symbol_errors) {
  Json port = fixtures::record("health", "n0");
  port["component"] = "ib_port";
  port["device"] = "mlx5_0";
  port["port"] = 1;
  port["state"] = "ACTIVE";
  port["phys_state"] = "LinkUp";
  port["rate_gbps"] = 400;
  port["link_layer"] = "InfiniBand";
  port["counters"] = {{"symbol_error", symbol_errors}, {"link_downed", link_downed}};
  const Baseline b = fixtures::baseline_of(
      "required: [health.ib]\nnode: {ib_ports: 1}\nchecks:\n"
      "  health.ib: {fail_counters: {link_downed: 4}, warn_counters: {symbol_error: 0}}\n");
  return fixtures::node(fixtures::certify(fixtures::evidence_of({port}), b), "n0");
}

TEST(RuleBoundaries, IbFailCounterQuarantinesAboveItsLimit) {
  for (const Row& row :
       std::vector<Row>{{3, kPasses}, {4, kPasses}, {5, quarantines("health.ib_counter")}}) {
    expect_row(judge_ib_counters(row.value, 0), row, "link_downed");
  }
}

TEST(RuleBoundaries, IbWarnCounterWarnsAboveItsLimit) {
  for (const Row& row : std::vector<Row>{{0, kPasses}, {1, warns("health.ib_errors")}}) {
    expect_row(judge_ib_counters(0, row.value), row, "symbol_error");
  }
}

// --- Performance bounds -----------------------------------------------------------------------
// Limits chosen so every boundary is exact in binary floating point (400 x 1.25 = 500).

struct FigureRow {
  double value;
  Expected expected;
  std::vector<std::string> codes = {};  // when the row raises more than its own code
};

// One node's allreduce busbw (node scope, 1 GiB) judged against `bound`.
NodeVerdict judge_busbw(double busbw_gb, const std::string& bound) {
  const Evidence e =
      fixtures::evidence_of({fixtures::collective(std::uint64_t{1} << 30, busbw_gb, "node", "n0")});
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    busbw_gb_per_s:\n      node: " +
      bound + "\n");
  return fixtures::node(fixtures::certify(e, b), "n0");
}

void expect_figures(const std::string& bound, const std::vector<FigureRow>& rows,
                    const std::function<NodeVerdict(double)>& judge_value) {
  for (const FigureRow& row : rows) {
    SCOPED_TRACE(bound + ", figure " + std::to_string(row.value));
    const NodeVerdict node = judge_value(row.value);
    EXPECT_EQ(node.state, row.expected.state) << to_string(node.state);
    std::vector<std::string> want = row.codes;
    if (want.empty() && !row.expected.code.empty()) want = {row.expected.code};
    EXPECT_EQ(fixtures::codes(node), want);
  }
}

TEST(RuleBoundaries, FloorQuarantinesBelowIt) {
  const std::string bound = "{floor: 400}";
  expect_figures(bound, {{399, quarantines("perf.below_floor")}, {400, kPasses}, {401, kPasses}},
                 [&](double v) { return judge_busbw(v, bound); });
}

TEST(RuleBoundaries, WarnBandWarnsFromTheFloorUpToTheBand) {
  // 25 % above the floor of 400: [400, 500) warns; below 400 is the floor's quarantine alone.
  const std::string bound = "{floor: 400, warn_band_pct: 25}";
  expect_figures(bound,
                 {{399, quarantines("perf.below_floor")},
                  {400, warns("perf.warn_band")},
                  {401, warns("perf.warn_band")},
                  {499, warns("perf.warn_band")},
                  {500, kPasses},
                  {501, kPasses}},
                 [&](double v) { return judge_busbw(v, bound); });
  // The reason says which band it is in.
  EXPECT_EQ(fixtures::reason(judge_busbw(400, bound), "perf.warn_band").message,
            "allreduce busbw (node scope, 1 GiB) 400 GB/s within 25% of the floor 400 GB/s");
}

TEST(RuleBoundaries, RegressionQuarantinesMoreThanTheAllowedShortfall) {
  // expected 400, at most 25 % worse: 300 is exactly 25 % and passes.
  const std::string bound = "{expected: 400, max_regression_pct: 25}";
  expect_figures(bound, {{299, quarantines("perf.regression")}, {300, kPasses}, {301, kPasses}},
                 [&](double v) { return judge_busbw(v, bound); });
  const Reason r = fixtures::reason(judge_busbw(299, bound), "perf.regression");
  EXPECT_EQ(r.message,
            "allreduce busbw (node scope, 1 GiB) 299 GB/s is 25.25% below the expected 400 GB/s "
            "(allowed 25%)");
  EXPECT_EQ(r.limit, std::optional<double>(300));  // verdict.json: the figure it needed
  // Every node that regressed is named, not only the first.
  const Evidence two =
      fixtures::evidence_of({fixtures::collective(std::uint64_t{1} << 30, 299, "node", "n0"),
                             fixtures::collective(std::uint64_t{1} << 30, 299, "node", "n1")});
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    busbw_gb_per_s:\n      node: " +
      bound + "\n");
  EXPECT_EQ(fixtures::nodes_in(fixtures::certify(two, b), NodeState::kQuarantined),
            (std::vector<std::string>{"n0", "n1"}));
}

TEST(RuleBoundaries, ARegressionOfAFigureSharedByTheWholeRunBlamesNobodyAndSaysWhatItNeeded) {
  // Four nodes' one cluster-wide figure 25 % below the expected 400: no node's own figure.
  const Evidence e =
      fixtures::evidence_of({fixtures::run_record({"n0", "n1", "n2", "n3"}),
                             fixtures::collective(std::uint64_t{1} << 30, 290, "cluster", "n0"),
                             fixtures::collective(std::uint64_t{1} << 30, 280, "cluster", "n0", {},
                                                  "run1", "allgather")});
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce, collective.allgather]\nchecks:\n"
      "  collective.allreduce:\n    busbw_gb_per_s:\n"
      "      cluster: {expected: 400, max_regression_pct: 25}\n"
      "  collective.allgather:\n    busbw_gb_per_s:\n"
      "      cluster: {expected: 400, max_regression_pct: 25}\n");
  const FleetVerdict v = fixtures::certify(e, b);
  EXPECT_EQ(v.count(NodeState::kInconclusive), 4u);
  // Both collectives: judging one shortfall does not stop the next.
  const auto& n1 = fixtures::node(v, "n1");
  std::vector<std::string> messages;
  for (const Reason& r : n1.reasons) {
    if (r.code == "perf.unattributed") messages.push_back(r.message);
  }
  EXPECT_THAT(messages,
              ::testing::UnorderedElementsAre(
                  "allreduce busbw (cluster scope, 1 GiB) 290 GB/s fails 25% off the expected "
                  "400 (300 GB/s) in the 4-node run run1; no single node can be blamed",
                  "allgather busbw (cluster scope, 1 GiB) 280 GB/s fails 25% off the expected "
                  "400 (300 GB/s) in the 4-node run run1; no single node can be blamed"));
}

TEST(RuleBoundaries, EqualityQuarantinesAnyOtherFigure) {
  const std::string bound = "{equals: 400}";
  expect_figures(
      bound,
      {{399, quarantines("perf.not_equal")}, {400, kPasses}, {401, quarantines("perf.not_equal")}},
      [&](double v) { return judge_busbw(v, bound); });
}

TEST(RuleBoundaries, EqualityForgivesOnePartInABillionAndNoMore) {
  // A figure written out and read back can differ from the required value in its last digits:
  // within 1e-9 of it, relative (absolute for a required value below 1), it is equal. Each side
  // of that limit, just inside and just outside, above 1, at 1, below 1 and at 0.
  const Expected differs = quarantines("perf.not_equal");
  const std::vector<std::pair<std::string, std::vector<FigureRow>>> limits = {
      {"{equals: 400}",  // 4e-7 either side
       {{400 - 5e-7, differs},
        {400 - 3e-7, kPasses},
        {400 + 3e-7, kPasses},
        {400 + 5e-7, differs}}},
      {"{equals: 1}",  // 1e-9 either side
       {{1 - 1.05e-9, differs},
        {1 - 0.95e-9, kPasses},
        {1 + 0.95e-9, kPasses},
        {1 + 1.05e-9, differs}}},
      {"{equals: 0.5}",  // still 1e-9, not 5e-10
       {{0.5 - 0.75e-9, kPasses}, {0.5 + 0.75e-9, kPasses}, {0.5 + 1.05e-9, differs}}},
      {"{equals: 0}",  // exactly 1e-9 away is still equal
       {{-1e-9, kPasses}, {0, kPasses}, {1e-9, kPasses}, {1.05e-9, differs}}},
  };
  for (const auto& [bound, rows] : limits) {
    expect_figures(bound, rows, [&](double v) { return judge_busbw(v, bound); });
  }
}

// One GPU's temperature judged against a ceiling (lower is better), with a warn band below it.
NodeVerdict judge_temperature(double celsius, const std::string& bound) {
  Json hot = gpu_health("n0", 0);
  hot["temperature_c"] = celsius;
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\nchecks:\n  health.gpu:\n    temperature_c: " +
      bound + "\n");
  return fixtures::node(fixtures::certify(fixtures::evidence_of({hot}), b), "n0");
}

TEST(RuleBoundaries, CeilingQuarantinesAboveIt) {
  const std::string bound = "{ceiling: 80}";
  expect_figures(bound, {{79, kPasses}, {80, kPasses}, {81, quarantines("perf.above_ceiling")}},
                 [&](double v) { return judge_temperature(v, bound); });
}

TEST(RuleBoundaries, WarnBandWarnsBelowTheCeilingDownToTheBand) {
  // 25 % below the ceiling of 80: (60, 80] warns; above 80 is the ceiling's quarantine alone.
  const std::string bound = "{ceiling: 80, warn_band_pct: 25}";
  expect_figures(bound,
                 {{59, kPasses},
                  {60, kPasses},
                  {61, warns("perf.warn_band")},
                  {80, warns("perf.warn_band")},
                  {81, quarantines("perf.above_ceiling")}},
                 [&](double v) { return judge_temperature(v, bound); });
}

// A figure read without scaling (burn TFLOP/s), so the band's top is exactly 500: a busbw figure
// passes through bytes/s and 500 GB/s reads as 500.00000000000006.
NodeVerdict judge_tflops(double tflops, const std::string& bound) {
  const Baseline b = fixtures::baseline_of(
      "required: [burn]\nnode: {gpus: 1}\nchecks:\n  burn:\n    tflops:\n      gemm_bf16: " +
      bound + "\n");
  return fixtures::node(
      fixtures::certify(fixtures::evidence_of({fixtures::burn("n0", 0, tflops)}), b), "n0");
}

TEST(RuleBoundaries, WarnBandEndsExactlyAtItsTop) {
  const std::string bound = "{floor: 400, warn_band_pct: 25}";
  expect_figures(bound,
                 {{399, quarantines("perf.below_floor")},
                  {400, warns("perf.warn_band")},
                  {499.99, warns("perf.warn_band")},
                  {500, kPasses},
                  {500.01, kPasses}},
                 [&](double v) { return judge_tflops(v, bound); });
}

// Every GPU in the band is written down, not only the first; a figure in the band of both its
// floor and its ceiling is one warning; the reason says which bound it is near.
TEST(RuleBoundaries, WarnBandWarnsEachFigureOnceNamingItsBound) {
  const auto warnings = [](const std::vector<double>& temperatures, const std::string& bound) {
    std::vector<Json> records;
    for (std::size_t gpu = 0; gpu < temperatures.size(); ++gpu) {
      Json hot = gpu_health("n0", static_cast<int>(gpu));
      hot["temperature_c"] = temperatures[gpu];
      records.push_back(hot);
    }
    const Baseline b = fixtures::baseline_of(
        "required: [health.gpu]\nnode: {gpus: " + std::to_string(temperatures.size()) +
        "}\nchecks:\n  health.gpu:\n    temperature_c: " + bound + "\n");
    return fixtures::run_rule("rule.warn_band", fixtures::evidence_of(records), b);
  };
  const auto near_ceiling = warnings({70, 75}, "{ceiling: 80, warn_band_pct: 25}");
  ASSERT_EQ(near_ceiling.size(), 2u);
  EXPECT_EQ(near_ceiling[1].gpu.index, 1);
  const auto near_floor = warnings({41, 42}, "{floor: 40, warn_band_pct: 25}");
  ASSERT_EQ(near_floor.size(), 2u);
  EXPECT_EQ(near_floor[1].gpu.index, 1);
  EXPECT_EQ(warnings({45}, "{floor: 40, ceiling: 50, warn_band_pct: 25}").size(), 1u);
  const NodeVerdict hot = judge_temperature(75, "{ceiling: 80, warn_band_pct: 25}");
  EXPECT_EQ(fixtures::reason(hot, "perf.warn_band").message,
            "gpu 0 (GPU-n0-0): temperature 75 C within 25% of the ceiling 80 C");
}

TEST(RuleBoundaries, RegressionOfALowerIsBetterFigureIsAboveTheExpectedValue) {
  // 25 % worse than an expected 60 C is above 75 C: the limit verdict.json shows is 75.
  const std::string bound = "{expected: 60, max_regression_pct: 25}";
  expect_figures(bound, {{74, kPasses}, {75, kPasses}, {76, quarantines("perf.regression")}},
                 [&](double v) { return judge_temperature(v, bound); });
  Json hot = gpu_health("n0", 0);
  hot["temperature_c"] = 76;
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\nchecks:\n  health.gpu:\n    temperature_c: " +
      bound + "\n");
  const auto findings = fixtures::run_rule("rule.regression", fixtures::evidence_of({hot}), b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].limit, std::optional<double>(75));
}

// --- Straggler --------------------------------------------------------------------------------
// rule.collective_straggler with {min_lead_pct: 25, min_share_pct: 80, min_records: 4}: a rank
// that is the straggler in at least 80 % (and at least 4) of the records of one run and
// collective, each time leading by at least 25 % of the median rank time, quarantines its node.

// One allreduce record per size over n0..n3; rank `stragglers[i]` leads record i by `lead` of
// the median rank time (1 s).
NodeVerdict judge_stragglers(const std::vector<int>& stragglers, double lead) {
  std::vector<Json> records = {fixtures::run_record({"n0", "n1", "n2", "n3"})};
  std::uint64_t bytes = 1 << 20;
  for (const int rank : stragglers) {
    Json c = fixtures::collective(bytes, 1.0);
    c["straggler"] = {{"rank", rank},
                      {"host", "n" + std::to_string(rank)},
                      {"time_s", 1.0 - lead},
                      {"lead_s", lead}};
    records.push_back(c);
    bytes *= 2;
  }
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    straggler: {min_lead_pct: 25, min_share_pct: 80, min_records: 4}\n");
  return fixtures::node(fixtures::certify(fixtures::evidence_of(records), b), "n1");
}

const Expected kStraggler = quarantines("collective.straggler");

TEST(RuleBoundaries, StragglerLeadFromItsMinimum) {
  // A hundredth of a percent either side of 25 %: a share computed a little off (x 100.1)
  // moves the row below the limit across it.
  for (const auto& [lead, expected] : std::vector<std::pair<double, Expected>>{
           {0.2499, kPasses}, {0.25, kStraggler}, {0.2501, kStraggler}}) {
    expect_row(judge_stragglers({1, 1, 1, 1, 1}, lead),
               {static_cast<std::int64_t>(lead * 10000), expected},
               "lead in 1/100 % of the median");
  }
}

TEST(RuleBoundaries, StragglerReasonNamesTheCollectiveRankAndShare) {
  const NodeVerdict node = judge_stragglers({1, 1, 1, 1, 2}, 0.5);
  EXPECT_EQ(fixtures::reason(node, "collective.straggler")
                .message.rfind("allreduce: rank 1 kept the others waiting in 4 of 5 records", 0),
            0u)
      << fixtures::reason(node, "collective.straggler").message;
}

TEST(RuleBoundaries, StragglerInAtLeastMinRecords) {
  for (const Row& row : std::vector<Row>{{3, kPasses}, {4, kStraggler}, {5, kStraggler}}) {
    expect_row(judge_stragglers(std::vector<int>(static_cast<std::size_t>(row.value), 1), 0.5), row,
               "records with rank 1 the straggler, of as many");
  }
}

TEST(RuleBoundaries, StragglerInAtLeastMinSharePctOfTheRecords) {
  // Of 10 records, rank 1 leads `value` and rank 2 the rest: 70 % no, 80 % and 90 % yes.
  for (const Row& row : std::vector<Row>{{7, kPasses}, {8, kStraggler}, {9, kStraggler}}) {
    std::vector<int> stragglers(10, 2);
    for (std::int64_t i = 0; i < row.value; ++i)
      stragglers[static_cast<std::size_t>(i)] = 1;
    expect_row(judge_stragglers(stragglers, 0.5), row, "records of 10 with rank 1 the straggler");
  }
}

// --- Fleet outlier ----------------------------------------------------------------------------
// rule.fleet_outlier flags a figure when it is at least max_deficit_pct worse than the fleet
// median and its robust z (0.6745 (x - median) / MAD) is at least min_robust_z in size (with
// MAD 0 the % test alone decides), in a fleet of at least min_nodes nodes.

// One node-scope allreduce of 1 GiB per node: n0.. at the `peers` figures, the last node at
// `value`, judged with the floor far below so that only the fleet can object.
FleetVerdict certify_fleet_of(const std::vector<double>& peers, double value,
                              const std::string& fleet) {
  std::vector<Json> records;
  for (std::size_t i = 0; i <= peers.size(); ++i) {
    const double figure = i < peers.size() ? peers[i] : value;
    records.push_back(
        fixtures::collective(std::uint64_t{1} << 30, figure, "node", "n" + std::to_string(i)));
  }
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nfleet: " + fleet +
      "\nchecks:\n  collective.allreduce:\n    busbw_gb_per_s:\n      node: {floor: 100}\n");
  return fixtures::certify(fixtures::evidence_of(records), b);
}

NodeVerdict judge_fleet(const std::vector<double>& peers, double value, const std::string& fleet) {
  return fixtures::node(certify_fleet_of(peers, value, fleet), "n" + std::to_string(peers.size()));
}

const Expected kOutlier = quarantines("perf.fleet_outlier");

TEST(RuleBoundaries, FleetOutlierFromMaxDeficitPctBelowTheMedian) {
  // Eight identical peers at 400 (MAD 0: the % test alone): 300 is exactly 25 % below.
  const std::string fleet = "{min_nodes: 8, max_deficit_pct: 25, min_robust_z: 3.5}";
  expect_figures("max_deficit_pct 25", {{301, kPasses}, {300, kOutlier}, {299, kOutlier}},
                 [&](double v) { return judge_fleet(std::vector<double>(8, 400), v, fleet); });
}

TEST(RuleBoundaries, FleetOutlierFromMinRobustZ) {
  // Median 400, MAD 8 whatever the last node's figure between 360 and 384; 368 is 32 below the
  // median, z = 0.6745 x 32 / 8 = 2.698 exactly (x 32 and / 8 are exact), the limit set here;
  // the % test (1 %) never decides. The peers at 392 are 2 % below but z 0.67: not outliers.
  const std::string fleet = "{min_nodes: 8, max_deficit_pct: 1, min_robust_z: 2.698}";
  const std::vector<double> peers = {400, 400, 400, 392, 408, 392, 408, 416};
  expect_figures("min_robust_z 2.698", {{369, kPasses}, {368, kOutlier}, {367, kOutlier}},
                 [&](double v) { return judge_fleet(peers, v, fleet); });
  EXPECT_EQ(fixtures::nodes_in(certify_fleet_of(peers, 368, fleet), NodeState::kQuarantined),
            std::vector<std::string>{"n8"});
}

TEST(RuleBoundaries, FleetOutlierOnlyInAFleetOfMinNodes) {
  // min_nodes 8: the node 25 % below identical peers is judged from 8 nodes on (itself included).
  const std::string fleet = "{min_nodes: 8, max_deficit_pct: 25, min_robust_z: 3.5}";
  for (const Row& row : std::vector<Row>{{7, kPasses}, {8, kOutlier}, {9, kOutlier}}) {
    const auto peers = std::vector<double>(static_cast<std::size_t>(row.value - 1), 400);
    expect_row(judge_fleet(peers, 300, fleet), row, "nodes in the fleet");
  }
}

TEST(RuleBoundaries, FleetOutlierReasonSaysHowFarAndFromWhat) {
  const NodeVerdict node =
      judge_fleet(std::vector<double>(8, 400), 300, "{min_nodes: 8, max_deficit_pct: 25}");
  const std::string& message = fixtures::reason(node, "perf.fleet_outlier").message;
  EXPECT_NE(message.find("300 GB/s is 25% below the fleet median 400 GB/s"), std::string::npos)
      << message;
}

// --- Throttle ---------------------------------------------------------------------------------
// rule.throttle: a clock event outside allowed_clock_events warns (never quarantines); in the
// burn's telemetry, only an event that lasted more than 0 s counts.

TEST(RuleBoundaries, ThrottleWarnsOnAnyClockEventOutsideTheAllowedOnes) {
  const Baseline b = fixtures::baseline_of(
      "required: [health.gpu]\nnode: {gpus: 1}\n"
      "checks:\n  health.gpu: {allowed_clock_events: [sw_power_cap, gpu_idle]}\n");
  const std::vector<std::pair<std::vector<std::string>, Expected>> rows = {
      {{}, kPasses},
      {{"sw_power_cap"}, kPasses},
      {{"sw_power_cap", "gpu_idle"}, kPasses},
      {{"hw_slowdown"}, warns("health.throttle")},
      {{"gpu_idle", "hw_thermal"}, warns("health.throttle")}};
  for (const auto& [events, expected] : rows) {
    Json r = gpu_health("n0", 0);
    r["clock_event_reasons"] = events;
    expect_row(fixtures::node(fixtures::certify(fixtures::evidence_of({r}), b), "n0"),
               {static_cast<std::int64_t>(events.size()), expected},
               "clock events " + ::testing::PrintToString(events));
  }
  // The reason names every event outside the allowed ones, under the health check.
  Json r = gpu_health("n0", 0);
  r["clock_event_reasons"] = {"gpu_idle", "hw_thermal", "hw_slowdown"};
  const Reason warned = fixtures::reason(
      fixtures::node(fixtures::certify(fixtures::evidence_of({r}), b), "n0"), "health.throttle");
  EXPECT_EQ(warned.message,
            "gpu 0 (GPU-n0-0): clock events other than power capping: hw_thermal, hw_slowdown");
  EXPECT_EQ(warned.check, "health.gpu");
  // A record that is not ok is not judged (its node is inconclusive for other reasons).
  r["status"] = "error";
  EXPECT_FALSE(fixtures::has_code(
      fixtures::node(fixtures::certify(fixtures::evidence_of({r}), b), "n0"), "health.throttle"));
}

TEST(RuleBoundaries, BurnThrottleCountsFromMoreThanZeroSeconds) {
  const Baseline b = fixtures::baseline_of("required: [burn]\nnode: {gpus: 1}\n");
  const std::vector<std::pair<double, Expected>> rows = {
      {0.0, kPasses}, {0.001, warns("health.throttle")}, {1.0, warns("health.throttle")}};
  for (const auto& [seconds, expected] : rows) {
    Json r = fixtures::burn("n0", 0, 700);
    r["telemetry"] = {{"throttle", {{{"reason", "hw_slowdown"}, {"seconds", seconds}}}}};
    expect_row(fixtures::node(fixtures::certify(fixtures::evidence_of({r}), b), "n0"),
               {static_cast<std::int64_t>(seconds * 1000), expected}, "hw_slowdown ms");
  }
  // Every event of every GPU's burn is named, under the burn check.
  std::vector<Json> burns;
  for (const int gpu : {0, 1}) {
    Json r = fixtures::burn("n0", gpu, 700);
    r["telemetry"] = {{"throttle",
                       {{{"reason", "hw_slowdown"}, {"seconds", 1.5}},
                        {{"reason", "hw_thermal"}, {"seconds", 2.0}}}}};
    burns.push_back(r);
  }
  const NodeVerdict two = fixtures::node(
      fixtures::certify(fixtures::evidence_of(burns),
                        fixtures::baseline_of("required: [burn]\nnode: {gpus: 2}\n")),
      "n0");
  std::vector<std::string> messages;
  for (const Reason& r : two.reasons) {
    if (r.code != "health.throttle") continue;
    messages.push_back(r.message);
    EXPECT_EQ(r.check, "burn");
  }
  EXPECT_THAT(messages,
              ::testing::ElementsAre("gpu 0 (GPU-n0-0): clock events other than power capping: "
                                     "hw_slowdown 1.50 s during burn, hw_thermal 2 s during burn",
                                     "gpu 1 (GPU-n0-1): clock events other than power capping: "
                                     "hw_slowdown 1.50 s during burn, hw_thermal 2 s during burn"));
  // An allowed event during the burn is no warning however long.
  Json capped = fixtures::burn("n0", 0, 700);
  capped["telemetry"] = {{"throttle", {{{"reason", "sw_power_cap"}, {"seconds", 60.0}}}}};
  expect_row(fixtures::node(fixtures::certify(fixtures::evidence_of({capped}), b), "n0"),
             {60000, kPasses}, "sw_power_cap ms");
}

TEST(RuleBoundaries, EveryNodePastAnAbsoluteLimitIsJudgedNotOnlyTheFirst) {
  // Two nodes' GPUs at 85 degrees, against a floor, a ceiling and a required value that 85
  // fails: each node is quarantined for its own figure.
  const std::vector<std::pair<std::string, std::string>> limits = {
      {"{floor: 90}", "perf.below_floor"},
      {"{ceiling: 80}", "perf.above_ceiling"},
      {"{equals: 80}", "perf.not_equal"}};
  for (const auto& [bound, code] : limits) {
    SCOPED_TRACE(bound);
    std::vector<Json> records;
    for (const std::string host : {"n0", "n1"}) {
      Json hot = gpu_health(host, 0);
      hot["temperature_c"] = 85;
      records.push_back(hot);
    }
    const Baseline b = fixtures::baseline_of(
        "required: [health.gpu]\nnode: {gpus: 1}\nchecks:\n  health.gpu:\n    temperature_c: " +
        bound + "\n");
    const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), b);
    for (const std::string host : {"n0", "n1"}) {
      EXPECT_EQ(fixtures::node(v, host).state, NodeState::kQuarantined) << host;
      EXPECT_EQ(fixtures::codes(fixtures::node(v, host)), std::vector<std::string>{code}) << host;
    }
  }
}

}  // namespace
}  // namespace commcert
