// The pairwise rule at its boundary (docs/localization.md): a node whose pairs fail with more
// than half of its partners, and at least two, is a bad-node candidate, quarantined once it is
// slow again with known-good partners (re-test before blame); exactly half, or one partner, is
// not a candidate. Judged through the whole certify pipeline (records in, node states out), so the
// table holds whatever the pair rule's internals become.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

Json pair_record(const std::string& a, const std::string& b, double busbw_gb, bool listed = false) {
  Json c = fixtures::collective(kGiB, busbw_gb, "pairs", a);
  c["nranks"] = 2;
  c["nodes"] = 2;
  c["group_nodes"] = {a, b};
  c["round"] = 0;
  c["group"] = 0;
  if (listed) c["pair_list"] = true;  // a re-test (sweep --pair-list)
  return c;
}

std::string name(int i) {
  return "n" + std::to_string(i);
}

// A run of `nodes` nodes whose cluster allreduce (60 GB/s) missed its floor (100), and every pair
// measured once: the last node's pairs with the first `slow_partners` nodes run at 21 GB/s, every
// other pair at 48 (the limit is 20 % below the upper quartile, 38.4, or `pairs` of the baseline).
// With `retested_slow`, the last node was re-tested (sweep --pair-list) against two partners,
// those it passed with first, and was slow again (21). Returns the last node's verdict.
NodeVerdict judge_pairs(int nodes, int slow_partners, const std::string& pairs = "",
                        bool retested_slow = false) {
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i)
    names.push_back(name(i));
  std::vector<Json> records = {fixtures::run_record(names), fixtures::collective(kGiB, 60.0)};
  const int last = nodes - 1;
  for (int i = 0; i < nodes; ++i) {
    for (int j = i + 1; j < nodes; ++j) {
      const bool slow = j == last && i < slow_partners;
      records.push_back(pair_record(name(i), name(j), slow ? 21.0 : 48.0));
    }
  }
  if (retested_slow) {
    std::vector<int> partners;
    for (int i = slow_partners; i < last; ++i)
      partners.push_back(i);
    for (int i = 0; i < slow_partners; ++i)
      partners.push_back(i);
    for (std::size_t k = 0; k < partners.size() && k < 2; ++k)
      records.push_back(pair_record(name(last), name(partners[k]), 21.0, true));
  }
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nfleet: {enabled: false}\nchecks:\n"
      "  collective.allreduce:\n    min_bytes: 1G\n" +
      pairs + "    busbw_gb_per_s:\n      cluster: {floor: 100}\n");
  return fixtures::node(fixtures::certify(fixtures::evidence_of(records), b), name(last));
}

struct Row {
  int nodes;
  int slow_partners;
  NodeState state;
  std::string code;  // the pair rule's reason the node must carry
  bool retested_slow = false;
};

void expect_rows(const std::vector<Row>& rows, const std::string& pairs = "") {
  for (const Row& row : rows) {
    SCOPED_TRACE("slow with " + std::to_string(row.slow_partners) + " of " +
                 std::to_string(row.nodes - 1) + " partners");
    const NodeVerdict node = judge_pairs(row.nodes, row.slow_partners, pairs, row.retested_slow);
    EXPECT_EQ(node.state, row.state)
        << to_string(node.state) << "; codes: " << ::testing::PrintToString(fixtures::codes(node));
    EXPECT_TRUE(fixtures::has_code(node, row.code))
        << row.code << " not in " << ::testing::PrintToString(fixtures::codes(node));
  }
}

TEST(PairMajority, MoreThanHalfOfAnEvenNumberOfPartnersIsABadNode) {
  // 4 partners: 2 is half (a suspect until re-tested), 3 is more than half; a candidate is
  // quarantined only when slow again in its re-tests, never on the rounds alone.
  expect_rows({{5, 1, NodeState::kCertified, "localization.suspect_link"},
               {5, 2, NodeState::kInconclusive, "localization.unresolved"},
               {5, 3, NodeState::kInconclusive, "localization.unresolved"},
               {5, 3, NodeState::kQuarantined, "localization.bad_node", true},
               {5, 4, NodeState::kInconclusive, "localization.unresolved"},
               {5, 4, NodeState::kQuarantined, "localization.bad_node", true}});
}

TEST(PairMajority, MoreThanHalfOfAnOddNumberOfPartnersIsABadNode) {
  // 5 partners: 2 is under half, 3 over it.
  expect_rows({{6, 2, NodeState::kInconclusive, "localization.unresolved"},
               {6, 3, NodeState::kInconclusive, "localization.unresolved"},
               {6, 3, NodeState::kQuarantined, "localization.bad_node", true}});
}

TEST(PairMajority, ABadNodeNeedsAtLeastTwoFailingPartners) {
  // With an absolute floor (40 GB/s), so that even one pair is judged: slow with its only
  // partner (1 of 1, more than half but one) is not enough to blame either node; slow with both
  // of 2 partners is.
  const std::string absolute_floor = "    pairs: {floor_gb_per_s: 40}\n";
  expect_rows({{2, 1, NodeState::kInconclusive, "localization.unresolved"},
               {3, 2, NodeState::kQuarantined, "localization.bad_node", true}},
              absolute_floor);
}

TEST(PairMajority, ARunOfTwoWhoseOnePairIsSlowCertifiesNeitherNode) {
  // Regression: the lone slow pair of a two-node run was reported as a suspect link, which
  // explained the cluster shortfall away and certified both nodes, though neither had passed
  // with anyone. Both stay inconclusive, and the shortfall stays unattributed.
  const NodeVerdict n1 = judge_pairs(2, 1, "    pairs: {floor_gb_per_s: 40}\n");
  EXPECT_EQ(n1.state, NodeState::kInconclusive);
  EXPECT_FALSE(fixtures::has_code(n1, "localization.suspect_link"));
  EXPECT_TRUE(fixtures::has_code(n1, "perf.unattributed"))
      << ::testing::PrintToString(fixtures::codes(n1));
}

// A 6-node run whose cluster allreduce missed its floor, with the pairs `slow` at 12 GB/s and
// the others at 48, plus `extra` records (re-tests, second placements). Returns the verdict.
FleetVerdict judge_six(const std::vector<std::pair<std::string, std::string>>& slow,
                       const std::vector<Json>& extra) {
  const std::vector<std::string> names = {"n0", "n1", "n2", "n3", "n4", "n5"};
  std::vector<Json> records = {fixtures::run_record(names), fixtures::collective(kGiB, 60.0)};
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = i + 1; j < names.size(); ++j) {
      bool is_slow = false;
      for (const auto& [a, b] : slow)
        is_slow = is_slow || (a == names[i] && b == names[j]) || (a == names[j] && b == names[i]);
      records.push_back(pair_record(names[i], names[j], is_slow ? 12.0 : 48.0));
    }
  }
  records.insert(records.end(), extra.begin(), extra.end());
  const Baseline b = fixtures::baseline_of(
      "required: [collective.allreduce]\nfleet: {enabled: false}\nchecks:\n"
      "  collective.allreduce:\n    min_bytes: 1G\n    busbw_gb_per_s:\n"
      "      cluster: {floor: 100}\n");
  return fixtures::certify(fixtures::evidence_of(records), b);
}

TEST(PairFigures, EachPairIsJudgedAtItsBetterPlacement) {
  // n1-n4 measured twice: slow in one placement, fast in the other. The pair passes, so the
  // pairs find nothing and the shortfall stays unattributed: every node inconclusive.
  const FleetVerdict verdict = judge_six({{"n1", "n4"}}, {pair_record("n1", "n4", 48.0)});
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), 6u);
  EXPECT_FALSE(fixtures::has_code(fixtures::node(verdict, "n1"), "localization.suspect_link"));
}

TEST(PairFigures, ASlowerLaterPlacementDoesNotHideTheBetterEarlierOne) {
  // The same pair the other way round: fast first, slow in the placement read after it. The
  // better one still decides, whatever the order the records come in.
  const FleetVerdict verdict = judge_six({}, {pair_record("n1", "n4", 12.0)});
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), 6u);
  EXPECT_FALSE(fixtures::has_code(fixtures::node(verdict, "n1"), "localization.suspect_link"));
}

TEST(PairFigures, EveryConfirmedLinkOfARunIsReported) {
  // Two lone slow pairs, n1-n4 and n2-n5, each node fast again with known-good n0 or n3: two
  // suspect links, each a warning on both of its nodes, none left out.
  const FleetVerdict verdict =
      judge_six({{"n1", "n4"}, {"n2", "n5"}},
                {pair_record("n1", "n0", 47.5, true), pair_record("n4", "n3", 47.5, true),
                 pair_record("n2", "n0", 47.5, true), pair_record("n5", "n3", 47.5, true)});
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 6u);
  for (const char* node : {"n1", "n2", "n4", "n5"}) {
    EXPECT_TRUE(fixtures::has_code(fixtures::node(verdict, node), "localization.suspect_link"))
        << node;
  }
}

}  // namespace
}  // namespace commcert
