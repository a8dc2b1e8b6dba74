// What the IB port and XID rules tell a technician: each reason's port or GPU, state, counter,
// figure and limit as verdict.json and the report show them, one reason per port, counter and
// XID.

#include <optional>
#include <ostream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;

Json port(const std::string& host, const std::string& state, const std::string& phys,
          const Json& counters = Json::object()) {
  Json r = fixtures::ib_port(host, "mlx5_0");
  r["state"] = state;
  r["phys_state"] = phys;
  r["link_layer"] = "InfiniBand";
  r["counters"] = counters;
  return r;
}

// health.ib's limits: link_downed fails above 4, symbol_error warns above 10.
const Baseline& ib_baseline() {
  static const Baseline b = fixtures::baseline_of(
      "required: [health.ib]\nnode: {ib_ports: 1}\nchecks:\n  health.ib:\n"
      "    fail_counters: {link_downed: 4}\n    warn_counters: {symbol_error: 10}\n");
  return b;
}

std::vector<Reason> reasons_of(const Json& record, const Baseline& baseline) {
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of({record}), baseline);
  return fixtures::node(v, "n0").reasons;
}

TEST(IbPortRule, APortDownSaysWhichPortAndBothStates) {
  const auto down = reasons_of(port("n0", "DOWN", "Polling"), ib_baseline());
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].code, "health.ib_port_down");
  EXPECT_EQ(down[0].message, "mlx5_0 port 1: port state DOWN, physical Polling");
  EXPECT_EQ(down[0].check, "health.ib");
  ASSERT_TRUE(down[0].link.has_value());
  EXPECT_EQ(down[0].link->type, "ib_port");
  // Active but not linked up physically is down too; a state not reported reads "unknown".
  const auto training = reasons_of(port("n0", "ACTIVE", "Polling"), ib_baseline());
  ASSERT_EQ(training.size(), 1u);
  EXPECT_EQ(training[0].message, "mlx5_0 port 1: port state ACTIVE, physical Polling");
  const auto unknown = reasons_of(port("n0", "", ""), ib_baseline());
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].message, "mlx5_0 port 1: port state unknown, physical unknown");
}

TEST(IbPortRule, ACounterReasonNamesTheCounterItsCountAndLimit) {
  const auto flapping =
      reasons_of(port("n0", "ACTIVE", "LinkUp", {{"link_downed", 5}}), ib_baseline());
  ASSERT_EQ(flapping.size(), 1u);
  EXPECT_EQ(flapping[0].message, "mlx5_0 port 1: link_downed 5 (limit 4)");
  EXPECT_EQ(flapping[0].measured, std::optional<double>(5));
  EXPECT_EQ(flapping[0].limit, std::optional<double>(4));
  const auto noisy =
      reasons_of(port("n0", "ACTIVE", "LinkUp", {{"symbol_error", 11}}), ib_baseline());
  ASSERT_EQ(noisy.size(), 1u);
  EXPECT_EQ(noisy[0].message, "mlx5_0 port 1: symbol_error 11 (warn above 10)");
}

Json gpu_with_xids(int gpu, const Json& events) {
  Json r = fixtures::gpu_health("n0", gpu);
  r["xid_events"] = events;
  return r;
}

const Baseline& gpu_baseline() {
  static const Baseline b = fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 2}\n");
  return b;
}

// One event: no count; without a time: no "at". Each GPU and each XID its own reason, with the
// check that saw it (the health stage or the burn's telemetry) and the XID as the figure.
TEST(XidRule, EachXidOfEachGpuIsOneReasonWithItsCheckAndTime) {
  Json burn = fixtures::burn("n0", 1, 700);
  burn["telemetry"] = {{"xid_events", {{{"xid", 92}, {"time", ""}}}}};
  const FleetVerdict v = fixtures::certify(
      fixtures::evidence_of({gpu_with_xids(0, {{{"xid", 48}, {"time", "10:00:01"}},
                                               {{"xid", 92}, {"time", "10:00:02"}}}),
                             gpu_with_xids(1, Json::array()), burn}),
      gpu_baseline());
  std::vector<std::string> seen;
  for (const auto& r : fixtures::node(v, "n0").reasons) {
    if (r.rule != "rule.xid") continue;
    seen.push_back(r.check + ": " + r.message + " = " + std::to_string(r.measured.value_or(-1)));
  }
  EXPECT_THAT(seen,
              ElementsAre("health.gpu: gpu 0 (GPU-n0-0): XID 48 reported at 10:00:01 = 48.000000",
                          "health.gpu: gpu 0 (GPU-n0-0): XID 92 reported at 10:00:02 = 92.000000",
                          "burn: gpu 1 (GPU-n0-1): XID 92 reported = 92.000000"));
}

// --- NVLink -----------------------------------------------------------------------------------

// health.gpu's NVLink limits: any replay or recovery error fails, any CRC error warns; 18 links.
const Baseline& nvlink_baseline() {
  static const Baseline b =
      fixtures::baseline_of("required: [health.gpu]\nnode: {gpus: 2, nvlinks_per_gpu: 18}\n");
  return b;
}

struct NvlinkReason {
  std::string message;
  std::optional<int> link;  // the reason's NVLink, when it names one
  std::optional<double> measured, limit;
  bool operator==(const NvlinkReason&) const = default;
};

std::ostream& operator<<(std::ostream& out, const NvlinkReason& r) {
  return out << r.message << " link " << r.link.value_or(-9) << " measured "
             << r.measured.value_or(-9) << " limit " << r.limit.value_or(-9);
}

std::vector<NvlinkReason> nvlink_reasons(const std::vector<Json>& records) {
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), nvlink_baseline());
  std::vector<NvlinkReason> out;
  for (const auto& r : fixtures::node(v, "n0").reasons) {
    if (r.rule != "rule.nvlink") continue;
    EXPECT_EQ(r.check, "health.gpu");
    std::optional<int> link;
    if (r.link) {
      EXPECT_EQ(r.link->type, "nvlink");
      link = r.link->index;
    }
    out.push_back({r.message, link, r.measured, r.limit});
  }
  return out;
}

const std::string kGpu0 = "gpu 0 (GPU-n0-0): ";

TEST(NvlinkRule, EachErroringLinkIsOneReasonWithItsCounts) {
  Json r = fixtures::gpu_health("n0", 0);
  r["nvlink"][0]["replay_errors"] = 2;  // link 0: the first index is a link like any other
  r["nvlink"][0]["recovery_errors"] = 3;
  r["nvlink"][0]["crc_data_errors"] = 4;  // and CRC errors on the same link
  r["nvlink"][7]["replay_errors"] = 1;
  r["nvlink"][7]["recovery_errors"] = nullptr;  // not read: counts as none
  r["nvlink"][9]["crc_flit_errors"] = nullptr;
  r["nvlink"][9]["crc_data_errors"] = 6;
  r["nvlink"][13]["replay_errors"] = nullptr;
  r["nvlink"][13]["recovery_errors"] = 2;
  r["nvlink"][15]["crc_flit_errors"] = 5;
  r["nvlink"][15]["crc_data_errors"] = nullptr;
  r["nvlink"][11]["replay_errors"] = nullptr;  // nothing read on this link: no reason
  r["nvlink"][11]["recovery_errors"] = nullptr;
  r["nvlink"][11]["crc_flit_errors"] = nullptr;
  r["nvlink"][11]["crc_data_errors"] = nullptr;
  EXPECT_THAT(
      nvlink_reasons({r, fixtures::gpu_health("n0", 1)}),
      ElementsAre(
          NvlinkReason{kGpu0 + "NVLink 0: 2 replay and 3 recovery errors (limits 0/0)", 0, 5, {}},
          NvlinkReason{kGpu0 + "NVLink 7: 1 replay and 0 recovery errors (limits 0/0)", 7, 1, {}},
          NvlinkReason{kGpu0 + "NVLink 13: 0 replay and 2 recovery errors (limits 0/0)", 13, 2, {}},
          NvlinkReason{kGpu0 + "NVLink 0: 4 CRC errors (warn above 0)", 0, 4, 0},
          NvlinkReason{kGpu0 + "NVLink 9: 6 CRC errors (warn above 0)", 9, 6, 0},
          NvlinkReason{kGpu0 + "NVLink 15: 5 CRC errors (warn above 0)", 15, 5, 0}));
}

// Links down are one reason per GPU naming them all (a single one as its link), every GPU's;
// too few links reported is another, naming no link.
TEST(NvlinkRule, InactiveAndMissingLinksAreReasonsOfEachGpu) {
  std::vector<Json> records;
  for (int gpu = 0; gpu < 2; ++gpu) {
    Json r = fixtures::gpu_health("n0", gpu);
    r["nvlink"][3]["active"] = false;
    if (gpu == 0) r["nvlink"][5]["active"] = false;
    r["nvlink"].erase(17);
    records.push_back(r);
  }
  const std::string gpu1 = "gpu 1 (GPU-n0-1): ";
  EXPECT_THAT(
      nvlink_reasons(records),
      ElementsAre(NvlinkReason{kGpu0 + "NVLink 3, 5 inactive", {}, {}, {}},
                  NvlinkReason{kGpu0 + "17 NVLinks reported, the baseline expects 18", {}, 17, 18},
                  NvlinkReason{gpu1 + "NVLink 3 inactive", 3, {}, {}},
                  NvlinkReason{gpu1 + "17 NVLinks reported, the baseline expects 18", {}, 17, 18}));
}

// A record that is not ok, or that read no NVLink state, says nothing about the links.
TEST(NvlinkRule, OnlyAnOkRecordWithLinkStateIsJudged) {
  Json failed = fixtures::gpu_health("n0", 0);
  failed["status"] = "error";
  failed["reason"] = "NVML: timeout";
  failed["nvlink"][3]["active"] = false;
  Json unread = fixtures::gpu_health("n0", 1);
  unread["nvlink"] = nullptr;
  EXPECT_THAT(nvlink_reasons({failed, unread}), ElementsAre());
}

}  // namespace
}  // namespace commcert
