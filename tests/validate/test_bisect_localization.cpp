// Bisection read from records: the rounds `commcert run` would measure, replayed through the
// validator, and the verdict they give (docs/localization.md, "Bisection in commcert run").
#include <algorithm>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
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
                               int last_round = 1000,
                               const std::vector<std::string>& rank_order = kNodes) {
  std::vector<Json> records = {fixtures::run_record(rank_order), fixtures::collective(kGiB, 60.0)};
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

// The reason's figure is the lowest failing one of the groups that blamed the node (whichever
// partner gave it), with its limit, unit, check, the group records as evidence, and the run.
TEST(BisectLocalization, TheReasonCarriesTheLowestFailingFigureAndItsRecords) {
  const Baseline baseline = floor_baseline();
  for (const auto& [with_n0, with_n1] : {std::pair{30.0, 20.0}, std::pair{20.0, 30.0}}) {
    SCOPED_TRACE(with_n0);
    const auto figure = [&](const std::vector<std::string>& nodes, int) {
      const bool has_n3 = std::find(nodes.begin(), nodes.end(), "n3") != nodes.end();
      if (!has_n3) return 150.0;
      if (nodes.size() == 2 && nodes[1] == "n0") return with_n0;
      if (nodes.size() == 2 && nodes[1] == "n1") return with_n1;
      return 20.0;
    };
    const auto records = bisected_run(figure, baseline);
    const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
    const Reason& reason =
        fixtures::reason(fixtures::node(verdict, "n3"), "localization.bisect_bad_node");
    EXPECT_EQ(reason.measured, std::optional<double>(20.0));
    EXPECT_EQ(reason.limit, std::optional<double>(kFloor));
    EXPECT_EQ(reason.unit, "GB/s");
    EXPECT_EQ(reason.check, "collective.allreduce");
    EXPECT_EQ(reason.rule, "rule.bisect_localization");
    EXPECT_GE(reason.evidence.size(), 2u);
    EXPECT_THAT(reason.message, ::testing::ContainsRegex("\\([0-9]+ rounds, run run1\\)"));
    EXPECT_THAT(reason.message,
                HasSubstr(fmt::format("with n0: allreduce {} GB/s; with n1: allreduce {} GB/s",
                                      with_n0, with_n1)));
  }
}

// The node blamed is the one the bisection found, whatever order the rank map lists nodes in.
TEST(BisectLocalization, TheBlamedNodeIsFoundByNameWhateverTheRankOrder) {
  const Baseline baseline = floor_baseline();
  const std::vector<std::string> reversed(kNodes.rbegin(), kNodes.rend());
  const auto records = bisected_run(slow_node("n3", 20.0), baseline, 1000, reversed);
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n3"});
}

// Two slow nodes: both are blamed once the bisection finished, and nobody at any earlier stop,
// even where one of them was confirmed while the other's search went on.
TEST(BisectLocalization, EverySlowNodeIsBlamedOnlyOnceTheBisectionFinished) {
  const Baseline baseline = floor_baseline();
  const auto figure = [](const std::vector<std::string>& nodes, int) {
    const bool slow = std::find(nodes.begin(), nodes.end(), "n1") != nodes.end() ||
                      std::find(nodes.begin(), nodes.end(), "n2") != nodes.end();
    return slow ? 20.0 : 150.0;
  };
  const auto finished = bisected_run(figure, baseline);
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(finished), baseline);
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined),
            (std::vector<std::string>{"n1", "n2"}));
  const int rounds = replay_bisection(fixtures::evidence_of(finished), baseline, 0).result.rounds;
  for (int last = 0; last + 1 < rounds; ++last) {
    const auto stopped = bisected_run(figure, baseline, last);
    const FleetVerdict partial = fixtures::certify(fixtures::evidence_of(stopped), baseline);
    EXPECT_THAT(fixtures::nodes_in(partial, NodeState::kQuarantined), ::testing::IsEmpty())
        << "stopped after round " << last;
  }
}

// Groups measured with two collectives: every figure of a blaming group is in the reason, the
// lowest failing one is its figure (the first of equals), and a passing figure of another
// collective, however low, is not.
TEST(BisectLocalization, AGroupOfTwoCollectivesGivesEveryFigureAndTheLowestFailingOne) {
  const Baseline allreduce_only = floor_baseline();
  const auto records = bisected_run(slow_node("n3", 20.0), allreduce_only);
  const auto with_allgather = [&](double slow_figure) {
    std::vector<Json> out = records;
    for (const Json& r : records) {
      if (r.value("scope", "") != "groups") continue;
      Json allgather = r;
      allgather["collective"] = "allgather";
      const auto nodes = r["group_nodes"].get<std::vector<std::string>>();
      const bool slow = std::find(nodes.begin(), nodes.end(), "n3") != nodes.end();
      allgather["busbw_bytes_per_s"] = (slow ? slow_figure : 150.0) * 1e9;
      out.push_back(allgather);
    }
    return out;
  };
  const auto reason_with = [&](double slow_figure, const std::string& allgather_floor) {
    const Baseline both = fixtures::baseline_of(
        "required: [collective.allreduce]\nfleet: {enabled: false}\nchecks:\n"
        "  collective.allreduce:\n    min_bytes: 1G\n    busbw_gb_per_s:\n"
        "      cluster: {floor: 100}\n"
        "  collective.allgather:\n    min_bytes: 1G\n    busbw_gb_per_s:\n"
        "      cluster: {floor: " +
        allgather_floor + "}\n");
    const FleetVerdict verdict =
        fixtures::certify(fixtures::evidence_of(with_allgather(slow_figure)), both);
    return fixtures::reason(fixtures::node(verdict, "n3"), "localization.bisect_bad_node");
  };
  // allgather passes in every group (15 GB/s against a floor of 10), below allreduce's 20.
  const Reason passing = reason_with(15, "10");
  EXPECT_EQ(passing.measured, std::optional<double>(20.0));
  EXPECT_EQ(passing.check, "collective.allreduce");
  EXPECT_THAT(passing.message, HasSubstr("allgather, allreduce in bisection over 6 nodes"));
  EXPECT_THAT(passing.message, HasSubstr("with n0: allreduce 20 GB/s, allgather 15 GB/s; with n1: "
                                         "allreduce 20 GB/s, allgather 15 GB/s"));
  // allgather fails where allreduce does, at the same figure: the first of the two is named.
  const Reason equal = reason_with(20, "50");
  EXPECT_EQ(equal.measured, std::optional<double>(20.0));
  EXPECT_EQ(equal.limit, std::optional<double>(100.0));
  EXPECT_EQ(equal.check, "collective.allreduce");
}

// Each run's bisection is judged: two runs of other nodes, each with its own slow node.
TEST(BisectLocalization, EveryRunsBisectionBlamesItsOwnNode) {
  const Baseline baseline = floor_baseline();
  std::vector<Json> records = bisected_run(slow_node("n3", 20.0), baseline);
  const std::regex node_name("\"n([0-5])\"");
  for (const Json& r : bisected_run(slow_node("n4", 20.0), baseline)) {
    Json other = Json::parse(std::regex_replace(r.dump(), node_name, "\"m$1\""));
    other["run_id"] = "run2";
    records.push_back(other);
  }
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined),
            (std::vector<std::string>{"m4", "n3"}));
}

}  // namespace
}  // namespace commcert
