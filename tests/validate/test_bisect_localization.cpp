// Bisection read from records: the rounds `commcert run` would measure, replayed through the
// validator, and the verdict they give (docs/localization.md, "Bisection in commcert run").
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/bisect_localization.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr double kFloor = 100.0;

const std::vector<std::string> kNodes = {"n0", "n1", "n2", "n3", "n4", "n5"};

Baseline floor_baseline(const std::string& pairs_floor = "") {
  return fixtures::cluster_floor_baseline(
      pairs_floor.empty() ? std::string() : "    pairs: {floor_gb_per_s: " + pairs_floor + "}\n");
}

Json group_record(const std::vector<std::string>& nodes, int round, int group, double busbw_gb) {
  Json c = fixtures::collective(kGiB, busbw_gb, "groups", nodes.front());
  c["nranks"] = nodes.size();
  c["nodes"] = nodes.size();
  c["group_nodes"] = nodes;
  c["round"] = round;
  c["group"] = group;
  return c;
}

// What a group measures: its figure from the names of its nodes.
using GroupFigureOf = std::function<double(const std::vector<std::string>&, int round)>;

// A run whose cluster allreduce fell short, then bisected as `commcert run` does: replay, measure
// the pending round, repeat. `last_round` stops early (an unfinished bisection).
std::vector<Json> bisected_run(const GroupFigureOf& figure, const Baseline& baseline,
                               int last_round = 1000) {
  std::vector<Json> records = {fixtures::run_record(kNodes), fixtures::collective(kGiB, 60.0)};
  for (int round = 0; round <= last_round; ++round) {
    const Evidence evidence = fixtures::evidence_of(records);
    const RunBisection bisection = replay_bisection(evidence, baseline, 0);
    if (bisection.result.finished()) break;
    EXPECT_EQ(bisection.result.rounds, round);
    for (std::size_t g = 0; g < bisection.result.pending.size(); ++g) {
      std::vector<std::string> names;
      for (const int node : bisection.result.pending[g])
        names.push_back(bisection.nodes.at(static_cast<std::size_t>(node)));
      records.push_back(group_record(names, round, static_cast<int>(g), figure(names, round)));
    }
  }
  return records;
}

GroupFigureOf slow_node(const std::string& slow, double slow_figure) {
  return [=](const std::vector<std::string>& nodes, int) {
    return std::find(nodes.begin(), nodes.end(), slow) != nodes.end() ? slow_figure : 150.0;
  };
}

bool has_note(const FleetVerdict& verdict, const std::string& code, const std::string& part) {
  return std::any_of(verdict.notes.begin(), verdict.notes.end(), [&](const InputNote& note) {
    return note.code == code && note.message.find(part) != std::string::npos;
  });
}

TEST(BisectLocalization, ASlowNodeIsQuarantinedAloneAndTheShortfallExplained) {
  const Baseline baseline = floor_baseline();
  const auto records = bisected_run(slow_node("n3", 20.0), baseline);
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n3"});
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified),
            (std::vector<std::string>{"n0", "n1", "n2", "n4", "n5"}));
  const Reason& reason =
      fixtures::reason(fixtures::node(verdict, "n3"), "localization.bisect_bad_node");
  EXPECT_THAT(reason.message, HasSubstr("allreduce in bisection over 6 nodes ("));
  EXPECT_THAT(reason.message, HasSubstr("again with known-good n0 and n1 (with n0: allreduce 20 "
                                        "GB/s; with n1: allreduce 20 GB/s; groups need 100 GB/s)"));
  EXPECT_TRUE(has_note(verdict, "localization.explained", "the bisection rounds"));
  EXPECT_TRUE(has_note(verdict, "localization.bisection", "n3 slow again with known-good n0,n1"));
}

TEST(BisectLocalization, AGroupPassesAtTheLimitAndFailsJustBelowIt) {
  const Baseline baseline = floor_baseline();
  for (const auto& [figure, blamed] : {std::pair{kFloor, false}, std::pair{kFloor * 1.0001, false},
                                       std::pair{kFloor * 0.9999, true}}) {
    const auto records = bisected_run(slow_node("n3", figure), baseline);
    const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
    EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined).size(), blamed ? 1u : 0u)
        << figure;
    if (!blamed) {
      // Every group passes: nothing within, the cluster shortfall stays unexplained.
      EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), kNodes.size());
      EXPECT_TRUE(has_note(verdict, "localization.bisection", "each pass alone"));
    }
  }
}

TEST(BisectLocalization, TheLimitIsTheHighestOfTheClusterFloorAndThePairsFloor) {
  EXPECT_EQ(group_limit_gb_per_s(floor_baseline(), "allreduce"), 100.0);
  EXPECT_EQ(group_limit_gb_per_s(floor_baseline("120"), "allreduce"), 120.0);
  EXPECT_EQ(group_limit_gb_per_s(floor_baseline("80"), "allreduce"), 100.0);
  EXPECT_EQ(group_limit_gb_per_s(floor_baseline(), "sendrecv"), std::nullopt);
}

TEST(BisectLocalization, ACandidateThatPassesWithAnotherKnownGoodNodeIsNotBlamed) {
  const Baseline baseline = floor_baseline();
  // n3 is slow until the confirmation round, where it measures as healthy: noise.
  int confirmation_round = -1;
  const auto figure = [&](const std::vector<std::string>& nodes, int round) {
    const bool has_n3 = std::find(nodes.begin(), nodes.end(), "n3") != nodes.end();
    if (has_n3 && nodes.size() == 2 && nodes.front() == "n3" && nodes.back() != "n4") {
      if (confirmation_round < 0) {
        confirmation_round = round + 1;
        return 20.0;  // the lone test with the first known-good node
      }
      return 150.0;  // the second known-good node
    }
    return has_n3 ? 20.0 : 150.0;
  };
  const auto records = bisected_run(figure, baseline);
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), kNodes.size());
  EXPECT_TRUE(has_note(verdict, "localization.bisection", "n3 passed with another known-good"));
}

TEST(BisectLocalization, AnUnfinishedBisectionBlamesNobody) {
  const Baseline baseline = floor_baseline();
  const auto records = bisected_run(slow_node("n3", 20.0), baseline, 1);
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), kNodes.size());
  EXPECT_TRUE(has_note(verdict, "localization.bisection", "not finished: round 3"));
}

TEST(BisectLocalization, WithoutAFloorTheGroupsAreNotJudged) {
  const Baseline with_floor = floor_baseline();
  auto records = bisected_run(slow_node("n3", 20.0), with_floor);
  const Baseline no_floor = fixtures::baseline_of(
      "required: [collective.allreduce]\nfleet: {enabled: false}\n"
      "checks:\n  collective.allreduce:\n    min_bytes: 1G\n");
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), no_floor);
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_TRUE(has_note(verdict, "localization.bisection", "no cluster-scope floor for allreduce"));
}

TEST(BisectLocalization, AGroupRecordIsNoEvidenceForACheck) {
  // Fail closed: a node whose only collective evidence is a bisection group is not certified.
  const Baseline baseline = floor_baseline();
  const std::vector<Json> records = {fixtures::run_record({"n0", "n1"}),
                                     group_record({"n0", "n1"}, 0, 0, 150.0)};
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kCertified).empty());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive),
            (std::vector<std::string>{"n0", "n1"}));
}

}  // namespace
}  // namespace commcert
