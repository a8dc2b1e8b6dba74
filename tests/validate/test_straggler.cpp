// The straggler rule's reason and counting, beyond its boundary table (test_rule_boundaries.cpp):
// the median lead of distinct leads, which records count towards the share, every flagged rank
// and run, and the reason's fields.

#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;

struct Straggle {
  int rank;       // -1: the record names no straggler
  double lead_s;  // of a median rank time of 1 s
};

// One allreduce record per entry (sizes doubling) over n0..n3 in `run`.
std::vector<Json> straggling(const std::vector<Straggle>& records,
                             const std::string& run = "run1") {
  std::vector<Json> out = {fixtures::run_record({"n0", "n1", "n2", "n3"}, run)};
  std::uint64_t bytes = 1 << 20;
  for (const auto& [rank, lead] : records) {
    Json c = fixtures::collective(bytes, 1.0, "cluster", "n0", {}, run);
    c["straggler"] = rank < 0 ? Json(nullptr)
                              : Json({{"rank", rank},
                                      {"host", "n" + std::to_string(rank)},
                                      {"time_s", 1.0 - lead},
                                      {"lead_s", lead}});
    out.push_back(c);
    bytes *= 2;
  }
  return out;
}

FleetVerdict judge(
    const std::vector<Json>& records,
    const std::string& spec = "{min_lead_pct: 25, min_share_pct: 80, min_records: 4}") {
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n    straggler: " + spec +
      "\n");
  return fixtures::certify(fixtures::evidence_of(records), b);
}

// The median of nine distinct leads, in an order where only a selection of the fifth smallest
// puts it fifth (a selection of another position leaves another value there): 0.60 s.
TEST(StragglerRule, TheReasonGivesTheMedianLeadAndItsFields) {
  std::vector<Straggle> records;
  for (const double lead : {0.35, 0.30, 0.80, 0.45, 0.95, 0.60, 0.40, 0.90, 0.70})
    records.push_back({1, lead});
  const FleetVerdict v = judge(straggling(records));
  const Reason& r = fixtures::reason(fixtures::node(v, "n1"), "collective.straggler");
  EXPECT_EQ(
      r.message,
      "allreduce: rank 1 kept the others waiting in 9 of 9 records (median lead 60.00% of the "
      "median rank time, run run1)");
  ASSERT_TRUE(r.measured.has_value());
  EXPECT_NEAR(*r.measured, 60.0, 1e-4);  // a lead is stored as a float
  EXPECT_EQ(r.limit, std::optional<double>(25.0));
  EXPECT_EQ(r.unit, "%");
  EXPECT_EQ(r.check, "collective.allreduce");
  EXPECT_EQ(r.rule, "rule.collective_straggler");
  EXPECT_EQ(r.evidence.size(), 3u);  // the first three records that blamed it
}

// Records that name no straggler are not part of the share: 4 of the 4 that name one.
TEST(StragglerRule, RecordsWithoutAStragglerDoNotDiluteTheShare) {
  const FleetVerdict v =
      judge(straggling({{1, 0.5}, {-1, 0}, {1, 0.5}, {-1, 0}, {1, 0.5}, {1, 0.5}}));
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined), std::vector<std::string>{"n1"});
}

// A share a hair below the minimum is not enough (4 of 5 is 80 %, the minimum 80.05 %).
TEST(StragglerRule, AShareJustBelowTheMinimumIsNotFlagged) {
  const std::vector<Straggle> four_of_five = {{1, 0.5}, {1, 0.5}, {1, 0.5}, {1, 0.5}, {2, 0.5}};
  EXPECT_EQ(
      judge(straggling(four_of_five), "{min_lead_pct: 25, min_share_pct: 80.05, min_records: 4}")
          .count(NodeState::kQuarantined),
      0u);
  EXPECT_EQ(judge(straggling(four_of_five)).count(NodeState::kQuarantined), 1u);
}

// Every rank over the limits is flagged, after one that is not (n0 first in the table), and in
// every run.
TEST(StragglerRule, EveryFlaggedRankOfEveryRunIsAReason) {
  // n0: 2 of 8 records, enough records but 25 % of them; n1 and n2: 3 of 8 each, 37.5 %.
  const std::string low_share = "{min_lead_pct: 25, min_share_pct: 30, min_records: 2}";
  const FleetVerdict two = judge(
      straggling({{0, 0.5}, {0, 0.5}, {1, 0.5}, {1, 0.5}, {1, 0.5}, {2, 0.5}, {2, 0.5}, {2, 0.5}}),
      low_share);
  EXPECT_EQ(fixtures::nodes_in(two, NodeState::kQuarantined),
            (std::vector<std::string>{"n1", "n2"}));
  std::vector<Json> runs = straggling({{1, 0.5}, {1, 0.5}, {1, 0.5}, {1, 0.5}}, "run1");
  for (Json& r : straggling({{2, 0.5}, {2, 0.5}, {2, 0.5}, {2, 0.5}}, "run2"))
    runs.push_back(r);
  EXPECT_EQ(fixtures::nodes_in(judge(runs), NodeState::kQuarantined),
            (std::vector<std::string>{"n1", "n2"}));
}

// Two ranks per node: the node blamed is the one the record names for the straggling rank (rank 3
// on n1), and the reason says the rank.
TEST(StragglerRule, TheNodeIsTheStragglingRanksHost) {
  std::vector<Json> records = {fixtures::run_record({"n0", "n0", "n1", "n1"})};
  std::uint64_t bytes = 1 << 20;
  for (int i = 0; i < 4; ++i) {
    Json c = fixtures::collective(bytes, 1.0);
    c["straggler"] = {{"rank", 3}, {"host", "n1"}, {"time_s", 0.5}, {"lead_s", 0.5}};
    records.push_back(c);
    bytes *= 2;
  }
  const FleetVerdict v = judge(records);
  EXPECT_EQ(fixtures::nodes_in(v, NodeState::kQuarantined), std::vector<std::string>{"n1"});
  EXPECT_THAT(fixtures::reason(fixtures::node(v, "n1"), "collective.straggler").message,
              ::testing::HasSubstr("allreduce: rank 3 kept the others waiting in 4 of 4"));
}

}  // namespace
}  // namespace commcert
