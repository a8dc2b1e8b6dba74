#include <functional>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/verdict_reporter.hpp"
#include "support.hpp"
#include "validate/pair_localization.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

const std::vector<std::string> kNodes = {"n0", "n1", "n2", "n3", "n4", "n5"};

// A cluster floor of 100 GB/s; pairs judged with the defaults (20 % below the upper quartile).
Baseline cluster_floor_baseline(const std::string& pairs = "") {
  return fixtures::baseline_of(
      "required: [collective.allreduce]\n"
      "fleet: {enabled: false}\n"
      "checks:\n"
      "  collective.allreduce:\n"
      "    min_bytes: 1G\n" +
      pairs +
      "    busbw_gb_per_s:\n"
      "      cluster: {floor: 100}\n");
}

Json pair_record(const std::string& a, const std::string& b, double busbw_gb, bool listed = false,
                 std::uint64_t bytes = kGiB) {
  Json c = fixtures::collective(bytes, busbw_gb, "pairs", a);
  c["nranks"] = 2;
  c["nodes"] = 2;
  c["group_nodes"] = {a, b};
  c["round"] = 0;
  c["group"] = 0;
  if (listed) c["pair_list"] = true;
  return c;
}

// A 6-node run whose cluster-wide allreduce fell below its floor, and every pair measured once:
// `busbw(a, b)` gives each pair's figure.
std::vector<Json> shortfall_with_pairs(
    const std::function<double(const std::string&, const std::string&)>& busbw) {
  std::vector<Json> records = {fixtures::run_record(kNodes), fixtures::collective(kGiB, 60.0)};
  for (std::size_t i = 0; i < kNodes.size(); ++i) {
    for (std::size_t j = i + 1; j < kNodes.size(); ++j) {
      records.push_back(pair_record(kNodes[i], kNodes[j], busbw(kNodes[i], kNodes[j])));
    }
  }
  return records;
}

double healthy(const std::string&, const std::string&) {
  return 48.0;
}

TEST(PairLocalization, ASlowNodeIsQuarantinedAndTheOthersAreNotHeldBackByTheShortfall) {
  const auto slow_n3 = [](const std::string& a, const std::string& b) {
    return a == "n3" || b == "n3" ? 21.0 : 47.0 + static_cast<double>(a[1] - '0') * 0.2;
  };
  const FleetVerdict verdict = fixtures::certify(
      fixtures::evidence_of(shortfall_with_pairs(slow_n3)), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n3"});
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 5u);
  const Reason& reason = fixtures::reason(fixtures::node(verdict, "n3"), "localization.bad_node");
  EXPECT_THAT(reason.message, HasSubstr("slow with 5 of 5 partners"));
  EXPECT_THAT(reason.message, HasSubstr("median 21 GB/s"));
  EXPECT_THAT(reason.message, HasSubstr("1 GiB"));
  bool explained = false;
  for (const auto& note : verdict.notes)
    explained = explained || note.code == "localization.explained";
  EXPECT_TRUE(explained);
}

TEST(PairLocalization, WithoutPairsTheShortfallBlamesNoNode) {
  const FleetVerdict verdict = fixtures::certify(
      fixtures::evidence_of({fixtures::run_record(kNodes), fixtures::collective(kGiB, 60.0)}),
      cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), 6u);
  EXPECT_TRUE(fixtures::has_code(fixtures::node(verdict, "n0"), "perf.unattributed"));
}

TEST(PairLocalization, HealthyPairsDoNotExplainTheShortfall) {
  const FleetVerdict verdict = fixtures::certify(
      fixtures::evidence_of(shortfall_with_pairs(healthy)), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), 6u);
  EXPECT_EQ(
      localize_pairs(fixtures::evidence_of(shortfall_with_pairs(healthy)), cluster_floor_baseline())
          .verdicts.size(),
      0u);
}

bool is_link(const std::string& a, const std::string& b, const std::string& x,
             const std::string& y) {
  return (a == x && b == y) || (a == y && b == x);
}

TEST(PairLocalization, ALoneSlowPairIsASuspectLinkThatBlamesNeitherNode) {
  const auto slow_link = [](const std::string& a, const std::string& b) {
    return is_link(a, b, "n1", "n4") ? 12.0 : 48.0;
  };
  const auto records = shortfall_with_pairs(slow_link);
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 6u);
  for (const std::string node : {"n1", "n4"}) {
    const Reason& reason =
        fixtures::reason(fixtures::node(verdict, node), "localization.suspect_link");
    EXPECT_THAT(reason.message, HasSubstr("link n1<->n4"));
    EXPECT_THAT(reason.message, HasSubstr("not yet re-tested"));
  }
  // The summary names the link once, though it shows in no node's line (both are certified).
  const std::string text = make_verdict_reporter("text")->render(verdict);
  EXPECT_THAT(text, HasSubstr("\n  suspect link n1<->n4: allreduce 12 GB/s"));
  EXPECT_EQ(text.find("suspect link"), text.rfind("suspect link"));
  // Before either end is blamed, each is re-tested against a node that passed everything.
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  std::set<std::string> retested;
  for (const auto& [suspect, good] : pairs.retest_plan) {
    retested.insert(suspect);
    EXPECT_NE(good, "n1");
    EXPECT_NE(good, "n4");
  }
  EXPECT_EQ(retested, (std::set<std::string>{"n1", "n4"}));
}

TEST(PairLocalization, ReTestsConfirmALinkOrBlameTheNodeThatIsSlowAgain) {
  const auto slow_link = [](const std::string& a, const std::string& b) {
    return is_link(a, b, "n1", "n4") ? 12.0 : 48.0;
  };
  auto confirmed = shortfall_with_pairs(slow_link);
  confirmed.push_back(pair_record("n1", "n0", 47.5, true));
  confirmed.push_back(pair_record("n4", "n2", 47.9, true));
  FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(confirmed), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 6u);
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n4"), "localization.suspect_link").message,
              HasSubstr("n1 passed with n0, n4 passed with n2"));
  EXPECT_TRUE(localize_pairs(fixtures::evidence_of(confirmed), cluster_floor_baseline())
                  .retest_plan.empty());

  auto blamed = shortfall_with_pairs(slow_link);
  blamed.push_back(pair_record("n1", "n0", 47.5, true));
  blamed.push_back(pair_record("n4", "n2", 11.0, true));
  verdict = fixtures::certify(fixtures::evidence_of(blamed), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n4"});
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n4"), "localization.bad_node").message,
              HasSubstr("slow again with known-good n2"));
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 5u);
}

TEST(PairLocalization, ANodeSlowWithSomePartnersIsInconclusiveUntilReTested) {
  // n2 is slow with n0 and n5 only: 2 of 5 partners, not most of them.
  const auto some = [](const std::string& a, const std::string& b) {
    return is_link(a, b, "n2", "n0") || is_link(a, b, "n2", "n5") ? 15.0 : 48.0;
  };
  auto records = shortfall_with_pairs(some);
  FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  // Nothing explains the cluster's shortfall yet: nobody is certified on it (fail closed).
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), 6u);
  EXPECT_FALSE(fixtures::has_code(fixtures::node(verdict, "n0"), "localization.unresolved"));
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n2"), "localization.unresolved").message,
              HasSubstr("slow with 2 of 5 partners"));

  records.push_back(pair_record("n2", "n1", 14.0, true));
  verdict = fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n2"});
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 5u);
}

TEST(PairLocalization, AnAbsoluteFloorJudgesWhenThereAreTooFewPairsToCompare) {
  const std::vector<std::string> two = {"n0", "n1"};
  const std::vector<Json> records = {fixtures::run_record(two), pair_record("n0", "n1", 10.0)};
  EXPECT_TRUE(
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline()).series.empty());
  const PairLocalization judged = localize_pairs(
      fixtures::evidence_of(records), cluster_floor_baseline("    pairs: {floor_gb_per_s: 40}\n"));
  ASSERT_EQ(judged.series.size(), 1u);
  EXPECT_DOUBLE_EQ(judged.series[0].limit_gb_per_s, 40.0);
  EXPECT_FALSE(judged.series[0].pairs[0].passed);
}

TEST(PairLocalization, JudgesTheLargestSizeAgainstTheUpperQuartileWithTheBaselinesMargin) {
  std::vector<Json> records = shortfall_with_pairs(healthy);
  records.push_back(pair_record("n0", "n1", 1.0, false, 1 << 20));  // small sizes: latency
  const PairLocalization pairs = localize_pairs(
      fixtures::evidence_of(records), cluster_floor_baseline("    pairs: {max_deficit_pct: 50}\n"));
  ASSERT_EQ(pairs.series.size(), 1u);
  EXPECT_EQ(pairs.series[0].bytes, kGiB);
  EXPECT_DOUBLE_EQ(pairs.series[0].reference_gb_per_s, 48.0);
  EXPECT_DOUBLE_EQ(pairs.series[0].limit_gb_per_s, 24.0);
  EXPECT_EQ(pairs.series[0].pairs.size(), 15u);
}

TEST(PairLocalization, ASingleRankCommunicatorHasNoBusBandwidthToJudge) {
  // One GPU per node in the node scope: busbw is 0 by definition, not a slow node.
  Json one_rank = fixtures::collective(kGiB, 0.0, "node", "n0");
  one_rank["nranks"] = 1;
  const Baseline baseline = fixtures::baseline_of(
      "required: [collective.allreduce]\n"
      "checks:\n  collective.allreduce:\n    min_bytes: 1G\n"
      "    busbw_gb_per_s:\n      node: {floor: 100}\n      cluster: {floor: 1}\n");
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of({fixtures::run_record({"n0"}), one_rank,
                                               fixtures::collective(kGiB, 5.0)}),
                        baseline);
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified), std::vector<std::string>{"n0"});
}

}  // namespace
}  // namespace commcert
