// The links check: link records read, judged pair by pair (rule.links), port counters
// (rule.link_counters), and fail-closed evidence (docs/links.md).
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/link_judgement.hpp"

namespace commcert {
namespace {

using fixtures::link;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
const std::vector<std::string> kNodes = {"n0", "n1", "n2", "n3"};

// Every pair of `nodes` measured once, figure from `figure(a, b)`.
std::vector<Json> all_pairs(
    const std::vector<std::string>& nodes,
    const std::function<double(const std::string&, const std::string&)>& figure,
    const std::string& test = "write_bw") {
  std::vector<Json> records = {fixtures::run_record(nodes)};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t j = i + 1; j < nodes.size(); ++j)
      records.push_back(link(nodes[i], nodes[j], figure(nodes[i], nodes[j]), test));
  }
  return records;
}

Baseline links_baseline(const std::string& links = "") {
  return fixtures::baseline_of("required: [links]\nfleet: {enabled: false}\n" +
                               (links.empty() ? std::string() : "checks:\n  links:\n" + links));
}

FleetVerdict judge(const std::vector<Json>& records, const Baseline& baseline = links_baseline()) {
  return fixtures::certify(fixtures::evidence_of(records), baseline);
}

TEST(Links, HealthyPairsCertifyEveryNode) {
  const auto verdict = judge(all_pairs(kNodes, [](auto&, auto&) { return 20.0; }));
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified), kNodes);
}

TEST(Links, ALostLineOfALinksFileHoldsBackANodeNamedOnlyAsAPartner) {
  // n3 appears in this file only as the far end of n0's link: an unreadable line of the same
  // file may be about n3 and must hold it back, as it holds back the near ends.
  const std::vector<std::string> nodes = {"n0", "n3"};
  const std::vector<Json> fleet = {link("n0", "n3", 20.0)};
  EXPECT_EQ(fixtures::nodes_in(judge(fleet), NodeState::kCertified), nodes);
  Json lost = link("n0", "n3", 20.0);
  lost["bytes"] = "many";  // JSON, but not a record
  std::vector<Json> with_lost = fleet;
  with_lost.push_back(lost);
  EXPECT_EQ(fixtures::nodes_in(judge(with_lost), NodeState::kInconclusive), nodes);
}

TEST(Links, ANodeSlowWithEveryPartnerIsQuarantinedAndItsPartnersAreNot) {
  const auto verdict = judge(all_pairs(kNodes, [](const std::string& a, const std::string& b) {
    return a == "n2" || b == "n2" ? 5.0 : 20.0;
  }));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kQuarantined), ElementsAre("n2"));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kCertified), ElementsAre("n0", "n1", "n3"));
  const Reason& r = fixtures::reason(fixtures::node(verdict, "n2"), "links.slow_node");
  EXPECT_THAT(r.message, HasSubstr("slow with all 3 partners"));
  EXPECT_THAT(r.message, HasSubstr("rail 0"));
  // What verdict.json and the message carry: the check, the node's median figure and its unit.
  EXPECT_EQ(r.check, "links");
  EXPECT_THAT(r.message, HasSubstr("(median 5 GB/s, pairs need"));
  EXPECT_EQ(r.measured, std::optional<double>(5.0));
}

TEST(Links, OneSlowPairIsASuspectLinkThatWarnsBothNodesAndBlamesNeither) {
  const auto verdict = judge(all_pairs(kNodes, [](const std::string& a, const std::string& b) {
    return a == "n0" && b == "n1" ? 5.0 : 20.0;
  }));
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified), kNodes);
  for (const std::string node : {"n0", "n1"}) {
    const Reason& r = fixtures::reason(fixtures::node(verdict, node), "links.slow_link");
    EXPECT_THAT(r.message, HasSubstr("link n0<->n1 rail 0"));
  }
  EXPECT_FALSE(fixtures::has_code(fixtures::node(verdict, "n2"), "links.slow_link"));
}

// Every figure of a links reason, as verdict.json and the message show it: slow node, slow
// link and unresolved, on rail 1 and on a record that names no rail.
TEST(Links, EachReasonShowsItsTestSizeRailFiguresLimitAndRun) {
  const auto on_rail = [](std::vector<Json> records, const Json& rail) {
    for (auto& r : records) {
      if (r.at("kind") == "link") r["rail"] = rail;
    }
    return records;
  };
  const auto slow_n2 = [](const std::string& a, const std::string& b) {
    return a == "n2" || b == "n2" ? 5.0 : 20.0;
  };
  const auto slow_n0_n1 = [](const std::string& a, const std::string& b) {
    return a == "n0" && b == "n1" ? 5.0 : 20.0;
  };
  for (const Json& rail : {Json(1), Json(nullptr)}) {
    SCOPED_TRACE(rail.dump());
    const std::string shown = rail.is_null() ? "" : " rail 1";
    const auto slow_node = fixtures::reason(
        fixtures::node(judge(on_rail(all_pairs(kNodes, slow_n2), rail)), "n2"), "links.slow_node");
    EXPECT_EQ(slow_node.message, "write_bw 4 MiB" + shown +
                                     ": slow with all 3 partners (median 5 GB/s, pairs need 10 "
                                     "GB/s, run run1)");
    EXPECT_EQ(slow_node.rule, "rule.links");
    EXPECT_EQ(slow_node.limit, std::optional<double>(10));
    EXPECT_EQ(slow_node.unit, "GB/s");
    EXPECT_EQ(slow_node.evidence.size(), 3u);  // its three pairs' records
    const auto link_verdict = judge(on_rail(all_pairs(kNodes, slow_n0_n1), rail));
    for (const std::string node : {"n0", "n1"}) {
      const Reason& slow_link =
          fixtures::reason(fixtures::node(link_verdict, node), "links.slow_link");
      EXPECT_EQ(slow_link.message, "link n0<->n1" + shown +
                                       ": write_bw 5 GB/s at 4 MiB, pairs need 10 GB/s (run "
                                       "run1); both nodes pass with their other partners");
      ASSERT_TRUE(slow_link.link.has_value());
      EXPECT_EQ(slow_link.link->type, "hosts");
      EXPECT_EQ(slow_link.link->hosts, (std::vector<std::string>{"n0", "n1"}));
    }
  }
  const auto unresolved = fixtures::reason(
      fixtures::node(judge({fixtures::run_record({"n0", "n1"}), link("n0", "n1", 5.0)},
                           links_baseline("    write_bw_floor_gb_per_s: 10\n")),
                     "n0"),
      "links.unresolved");
  EXPECT_THAT(unresolved.message,
              HasSubstr("write_bw 4 MiB rail 0: slow with 1 of 1 partners (median 5 GB/s, pairs "
                        "need 10 GB/s, run run1)"));
}

TEST(Links, ASlowPairOfTwoNodesCannotBeBlamedOnEitherAndLeavesBothInconclusive) {
  const auto verdict =
      judge({fixtures::run_record({"n0", "n1"}), link("n0", "n1", 5.0), link("n1", "n0", 20.0)},
            links_baseline("    write_bw_floor_gb_per_s: 10\n"));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kInconclusive), ElementsAre("n0", "n1"));
  EXPECT_TRUE(fixtures::has_code(fixtures::node(verdict, "n0"), "links.unresolved"));
}

// The absolute floor at its limit and one step either side (two nodes: no reference).
TEST(Links, TheFloorPassesAtItsLimitAndFailsJustBelow) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{10.0, false}, {10.001, false}, {9.999, true}}) {
    SCOPED_TRACE(figure);
    const auto evidence =
        fixtures::evidence_of({fixtures::run_record({"n0", "n1"}), link("n0", "n1", figure)});
    const LinkJudgement j =
        judge_links(evidence, links_baseline("    write_bw_floor_gb_per_s: 10\n").links);
    ASSERT_EQ(j.series.size(), 1u);
    EXPECT_EQ(j.series[0].pairs.at(0).slow, slow);
  }
}

// The relative limit: 50 % below the upper quartile of the run's pairs (here 100 GB/s).
TEST(Links, TheDeficitFromTheReferencePassesAtItsLimitAndFailsJustBelow) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{50.0, false}, {50.01, false}, {49.99, true}}) {
    SCOPED_TRACE(figure);
    const auto records = all_pairs(kNodes, [&](const std::string& a, const std::string& b) {
      return a == "n0" && b == "n1" ? figure : 100.0;
    });
    const LinkJudgement j = judge_links(fixtures::evidence_of(records), LinkSpec{});
    ASSERT_EQ(j.series.size(), 1u);
    EXPECT_DOUBLE_EQ(j.series[0].limit, 50.0);
    EXPECT_EQ(j.series[0].pairs.at(0).slow, slow);
  }
}

TEST(Links, LatencyIsJudgedAgainstItsCeiling) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{5.0, false}, {4.99, false}, {5.01, true}}) {
    SCOPED_TRACE(figure);
    const auto evidence = fixtures::evidence_of(
        {fixtures::run_record({"n0", "n1"}), link("n0", "n1", figure, "write_lat", 8)});
    const LinkJudgement j =
        judge_links(evidence, links_baseline("    write_lat_ceiling_us: 5\n").links);
    ASSERT_EQ(j.series.size(), 1u);
    EXPECT_TRUE(j.series[0].latency);
    EXPECT_EQ(j.series[0].pairs.at(0).slow, slow);
  }
}

TEST(Links, SmallMessagesAreNotJudgedForBandwidth) {
  std::vector<Json> records = {fixtures::run_record({"n0", "n1"}),
                               link("n0", "n1", 0.1, "write_bw", kMiB - 1),
                               link("n0", "n1", 20.0, "write_bw", kMiB)};
  const LinkJudgement j = judge_links(fixtures::evidence_of(records),
                                      links_baseline("    write_bw_floor_gb_per_s: 10\n").links);
  ASSERT_EQ(j.series.size(), 1u);
  EXPECT_EQ(j.series[0].bytes, kMiB);
}

TEST(Links, TheWorseDirectionOfAOneWayTestIsThePairsFigure) {
  const auto evidence = fixtures::evidence_of(
      {fixtures::run_record({"n0", "n1"}), link("n0", "n1", 20.0), link("n1", "n0", 7.0)});
  const LinkJudgement j =
      judge_links(evidence, links_baseline("    write_bw_floor_gb_per_s: 10\n").links);
  ASSERT_EQ(j.series.size(), 1u);
  ASSERT_EQ(j.series[0].pairs.size(), 1u);
  EXPECT_DOUBLE_EQ(j.series[0].pairs[0].figure, 7.0);
  EXPECT_TRUE(j.series[0].pairs[0].slow);
}

Json with_counter(Json record, const std::string& node, const std::string& counter,
                  std::int64_t delta) {
  record["counter_deltas"] = Json::array(
      {{{"node", node}, {"device", "mlx5_0"}, {"port", 1}, {"deltas", {{counter, delta}}}}});
  return record;
}

TEST(Links, APortCounterThatGrowsBeyondItsLimitQuarantinesThatPortsNode) {
  for (const auto& [delta, quarantined] :
       std::vector<std::pair<std::int64_t, bool>>{{2, false}, {1, false}, {3, true}}) {
    SCOPED_TRACE(delta);
    auto records = all_pairs(kNodes, [](auto&, auto&) { return 20.0; });
    records[1] = with_counter(records[1], "n1", "symbol_error", delta);
    const auto verdict =
        judge(records, links_baseline("    max_counter_deltas: {symbol_error: 2}\n"));
    const NodeVerdict& n1 = fixtures::node(verdict, "n1");
    // Growth within the limit is no finding at all: the port is certified, not held back.
    EXPECT_EQ(n1.state, quarantined ? NodeState::kQuarantined : NodeState::kCertified);
    if (quarantined) {
      const Reason& r = fixtures::reason(n1, "links.counter_errors");
      EXPECT_THAT(r.message, HasSubstr("mlx5_0 port 1: symbol_error grew by 3 during a link test "
                                       "with n0 (limit 2)"));
      // What verdict.json says of it: the check, the port, the growth against its limit.
      EXPECT_EQ(r.check, "links");
      ASSERT_TRUE(r.link.has_value());
      EXPECT_EQ(r.link->type, "ib_port");
      EXPECT_EQ(r.link->device, "mlx5_0");
      EXPECT_EQ(r.link->index, 1);
      EXPECT_EQ(r.measured, std::optional<double>(3));
      EXPECT_EQ(r.limit, std::optional<double>(2));
    }
    EXPECT_EQ(fixtures::node(verdict, "n0").state, NodeState::kCertified);
  }
}

TEST(Links, OneGrowthOfACounterIsOneFindingHoweverManyRecordsOfItsRoundCarryIt) {
  // A round writes its port counters' deltas on every record it wrote (each test, each size):
  // three records of the n0-n1 round carry the same growth, written from either end.
  auto records = all_pairs(kNodes, [](auto&, auto&) { return 20.0; });
  records.push_back(
      with_counter(link("n0", "n1", 20.0, "write_bw_bidir"), "n1", "symbol_error", 3));
  records.push_back(with_counter(link("n1", "n0", 20.0), "n1", "symbol_error", 3));
  records[1] = with_counter(records[1], "n1", "symbol_error", 3);
  const auto once = judge(records);
  EXPECT_EQ(fixtures::codes(fixtures::node(once, "n1")),
            std::vector<std::string>{"links.counter_errors"});
  // Another growth of the same counter (another round, another count) is another finding, and
  // so is the same count on another port or in a pair with another partner.
  records.push_back(with_counter(link("n1", "n0", 20.0), "n1", "symbol_error", 5));
  records.push_back(with_counter(link("n1", "n2", 20.0), "n1", "symbol_error", 3));
  Json other_port = with_counter(link("n0", "n1", 20.0), "n1", "symbol_error", 3);
  other_port["counter_deltas"][0]["port"] = 2;
  records.push_back(other_port);
  EXPECT_EQ(fixtures::codes(fixtures::node(judge(records), "n1")),
            std::vector<std::string>(4, "links.counter_errors"));
}

TEST(Links, APortCountersPartnerIsTheOtherEndWhicheverEndCountedAndEveryPortIsJudged) {
  // n3 -> n0, counted at n0 (the far end, named before n3 in the run): the partner is n3. And
  // n1 -> n2 counted at n1 (the near end): n2. Two records, two findings.
  auto records = all_pairs(kNodes, [](auto&, auto&) { return 20.0; });
  records.push_back(with_counter(link("n3", "n0", 20.0), "n0", "symbol_error", 1));
  records.push_back(with_counter(link("n1", "n2", 20.0), "n1", "link_downed", 1));
  const auto verdict = judge(records);
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n0"), "links.counter_errors").message,
              HasSubstr("during a link test with n3"));
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n1"), "links.counter_errors").message,
              HasSubstr("during a link test with n2"));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kQuarantined), ElementsAre("n0", "n1"));
  // Both ends of one test counted errors: both nodes are convicted.
  Json both_ends = with_counter(link("n2", "n3", 20.0), "n2", "symbol_error", 1);
  both_ends["counter_deltas"].push_back(
      {{"node", "n3"}, {"device", "mlx5_1"}, {"port", 1}, {"deltas", {{"symbol_error", 4}}}});
  std::vector<Json> with_both = records;
  with_both.push_back(both_ends);
  EXPECT_THAT(fixtures::nodes_in(judge(with_both), NodeState::kQuarantined),
              ElementsAre("n0", "n1", "n2", "n3"));
  // A record about one node (a test that ended in an error before its partner was known) names
  // none, and its counters are still judged.
  Json alone = with_counter(link("n2", "n3", 20.0), "n2", "symbol_error", 1);
  alone["status"] = "error";
  alone["reason"] = "the partner never connected";
  alone["nodes"] = {"n2"};
  alone["ranks"] = {0};
  records.push_back(alone);
  EXPECT_THAT(
      fixtures::reason(fixtures::node(judge(records), "n2"), "links.counter_errors").message,
      HasSubstr("during a link test with ? (limit 0)"));
}

Json with_saturated(Json record, const std::string& node, const std::string& counter,
                    std::int64_t delta) {
  record = with_counter(std::move(record), node, counter, delta);
  record["counter_deltas"][0]["saturated"] = Json::array({counter});
  return record;
}

// Fail closed: a counter stuck at its maximum cannot show errors, so it cannot clear the port;
// growth beyond the limit still convicts it.
TEST(Links, ASaturatedCounterWithinItsLimitLeavesThePortsNodeInconclusive) {
  for (const auto& [delta, state] :
       std::vector<std::pair<std::int64_t, NodeState>>{{0, NodeState::kInconclusive},
                                                       {2, NodeState::kInconclusive},
                                                       {3, NodeState::kQuarantined}}) {
    SCOPED_TRACE(delta);
    auto records = all_pairs(kNodes, [](auto&, auto&) { return 20.0; });
    records[1] = with_saturated(records[1], "n1", "symbol_error", delta);
    const auto verdict =
        judge(records, links_baseline("    max_counter_deltas: {symbol_error: 2}\n"));
    const NodeVerdict& n1 = fixtures::node(verdict, "n1");
    EXPECT_EQ(n1.state, state);
    if (state == NodeState::kInconclusive) {
      EXPECT_THAT(fixtures::codes(n1), ElementsAre("links.counter_saturated"));
      EXPECT_THAT(fixtures::reason(n1, "links.counter_saturated").message,
                  HasSubstr("mlx5_0 port 1: symbol_error is at its maximum"));
      EXPECT_EQ(fixtures::reason(n1, "links.counter_saturated").check, "links");
    }
    EXPECT_EQ(fixtures::node(verdict, "n0").state, NodeState::kCertified);
  }
}

TEST(Links, ASaturatedCounterWithoutALimitIsNotJudged) {
  auto records = all_pairs(kNodes, [](auto&, auto&) { return 20.0; });
  records[1] = with_saturated(records[1], "n1", "VL15_dropped", 0);
  EXPECT_EQ(fixtures::nodes_in(judge(records), NodeState::kCertified), kNodes);
}

TEST(Links, ACounterWithoutALimitIsNotJudged) {
  auto records = all_pairs(kNodes, [](auto&, auto&) { return 20.0; });
  records[1] = with_counter(records[1], "n1", "port_xmit_wait", 1000);
  EXPECT_EQ(fixtures::nodes_in(judge(records), NodeState::kCertified), kNodes);
}

// Over verbs each NIC is a rail: a node needs a measurement on every RDMA port its baseline says
// it has. Tested at the limit (every rail), one short, and with the baseline's count unset.
TEST(Links, OverVerbsEveryRailTheBaselineCountsMustBeMeasured) {
  const auto over_verbs = [](const std::vector<int>& rails) {
    std::vector<Json> records = {fixtures::run_record({"n0", "n1"})};
    for (const int rail : rails) {
      Json r = link("n0", "n1", 20.0);
      r["transport"] = "verbs";
      r["rail"] = rail;
      r["devices"] = {"mlx5_" + std::to_string(rail) + ":1", "mlx5_" + std::to_string(rail) + ":1"};
      records.push_back(r);
    }
    return records;
  };
  const auto with_ports = [](int ports) {
    return fixtures::baseline_of("node: {ib_ports: " + std::to_string(ports) +
                                 "}\nrequired: [links]\nfleet: {enabled: false}\n");
  };
  EXPECT_EQ(fixtures::nodes_in(judge(over_verbs({0, 1, 2}), with_ports(3)), NodeState::kCertified),
            (std::vector<std::string>{"n0", "n1"}));
  const auto short_one = judge(over_verbs({0, 2}), with_ports(3));
  for (const std::string node : {"n0", "n1"}) {
    SCOPED_TRACE(node);
    const NodeVerdict& n = fixtures::node(short_one, node);
    EXPECT_EQ(n.state, NodeState::kInconclusive);
    ASSERT_NE(n.first_reason(), nullptr);
    EXPECT_EQ(n.first_reason()->code, "evidence.missing");
    EXPECT_THAT(n.first_reason()->message, HasSubstr("over verbs for rail 1 (of 3)"));
  }
  // A rail beyond the count does not stand in for a missing one.
  EXPECT_EQ(fixtures::node(judge(over_verbs({0, 1, 3}), with_ports(3)), "n0").state,
            NodeState::kInconclusive);
  // Without a port count, or over MPI (one path between two nodes), one rail is the evidence.
  EXPECT_EQ(fixtures::node(judge(over_verbs({0})), "n0").state, NodeState::kCertified);
  EXPECT_EQ(fixtures::node(judge(over_verbs({0}), with_ports(0)), "n0").state,
            NodeState::kCertified);
  EXPECT_EQ(
      fixtures::node(
          judge({fixtures::run_record({"n0", "n1"}), link("n0", "n1", 20.0)}, with_ports(8)), "n0")
          .state,
      NodeState::kCertified);
}

// Fail closed: a node whose only link evidence measured nothing is never certified.
TEST(Links, ASkippedRecordAsTheOnlyEvidenceIsInconclusive) {
  Json skipped = fixtures::record("link", "n0", "skipped");
  skipped["transport"] = "verbs";
  skipped["memory"] = "gpu";
  skipped["test"] = nullptr;
  skipped["nodes"] = {"n0"};
  skipped["ranks"] = {0};
  skipped["devices"] = {nullptr};
  skipped["counter_deltas"] = nullptr;
  const auto verdict = judge({fixtures::run_record({"n0"}), skipped});
  const NodeVerdict& n0 = fixtures::node(verdict, "n0");
  EXPECT_EQ(n0.state, NodeState::kInconclusive);
  EXPECT_THAT(fixtures::codes(n0), ElementsAre("evidence.skipped"));
}

// A pair's record that measured nothing explains the gap of both its ends, not only the first.
TEST(Links, AnUnmeasuredPairRecordGivesBothEndsItsReason) {
  Json failed = link("n0", "n1", 20.0);
  failed["status"] = "error";
  failed["reason"] = "queue pair went to the error state";
  failed["bytes_per_s"] = nullptr;
  failed["samples_s"] = Json::array();
  const auto verdict = judge({fixtures::run_record({"n0", "n1"}), failed});
  for (const std::string node : {"n0", "n1"}) {
    SCOPED_TRACE(node);
    const NodeVerdict& n = fixtures::node(verdict, node);
    EXPECT_EQ(n.state, NodeState::kInconclusive);
    ASSERT_NE(n.first_reason(), nullptr);
    EXPECT_EQ(n.first_reason()->code, "evidence.error");
    EXPECT_THAT(n.first_reason()->message, HasSubstr("queue pair went to the error state"));
  }
}

TEST(Links, AStageTimeoutAsTheOnlyEvidenceIsInconclusive) {
  Json timeout = fixtures::record("link", "n0", "timeout");
  timeout["operation"] = "links: round 0 write_bw 4M n0->n1";
  timeout["timeout_s"] = 5;
  const auto verdict = judge({fixtures::run_record({"n0", "n1"}), timeout});
  EXPECT_THAT(fixtures::codes(fixtures::node(verdict, "n0")), ElementsAre("evidence.timeout"));
  EXPECT_THAT(fixtures::codes(fixtures::node(verdict, "n1")), ElementsAre("evidence.missing"));
}

TEST(Links, AMeasurementWithoutItsFigureIsLostInputNotAPass) {
  Json broken = link("n0", "n1", 20.0);
  broken["bytes_per_s"] = nullptr;
  const auto verdict = judge({fixtures::run_record({"n0", "n1"}), broken});
  for (const std::string node : {"n0", "n1"}) {
    SCOPED_TRACE(node);
    EXPECT_EQ(fixtures::node(verdict, node).state, NodeState::kInconclusive);
    EXPECT_TRUE(fixtures::has_code(fixtures::node(verdict, node), "input.unparsable"));
  }
}

TEST(Links, ANodeNamedInNoLinkRecordHasNoEvidence) {
  const auto verdict = judge({fixtures::run_record({"n0", "n1", "n2"}), link("n0", "n1", 20.0)});
  EXPECT_THAT(fixtures::codes(fixtures::node(verdict, "n2")), ElementsAre("evidence.missing"));
  EXPECT_EQ(fixtures::node(verdict, "n0").state, NodeState::kCertified);
}

TEST(LinksBaseline, LimitsAreReadAndWrittenBack) {
  const Baseline b = links_baseline(
      "    write_bw_floor_gb_per_s: 12.5\n"
      "    write_lat_ceiling_us: 4\n"
      "    max_deficit_pct: 30\n"
      "    min_pairs: 4\n"
      "    min_bytes: 2M\n"
      "    max_counter_deltas: {symbol_error: 5}\n");
  EXPECT_EQ(b.links.write_bw_floor_gb_per_s, 12.5);
  EXPECT_EQ(b.links.write_lat_ceiling_us, 4.0);
  EXPECT_EQ(b.links.max_deficit_pct, 30.0);
  EXPECT_EQ(b.links.min_pairs, 4);
  EXPECT_EQ(b.links.min_bytes, 2 * kMiB);
  EXPECT_EQ(b.links.max_counter_deltas, (std::map<std::string, std::int64_t>{{"symbol_error", 5}}));
  EXPECT_EQ(parse_baseline(baseline_to_yaml(b), "written").links, b.links);
}

TEST(LinksBaseline, ABadLimitNamesItsKey) {
  try {
    (void)links_baseline("    write_bw_floor_gb_per_s: -1\n");
    FAIL() << "accepted a negative floor";
  } catch (const std::exception& error) {
    EXPECT_THAT(error.what(), HasSubstr("checks.links.write_bw_floor_gb_per_s"));
  }
  EXPECT_THROW((void)links_baseline("    unknown_key: 1\n"), std::exception);
}

}  // namespace
}  // namespace commcert
