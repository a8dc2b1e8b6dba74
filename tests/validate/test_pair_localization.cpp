#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/verdict_reporter.hpp"
#include "support.hpp"
#include "validate/localization.hpp"
#include "validate/pair_localization.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

const std::vector<std::string> kNodes = {"n0", "n1", "n2", "n3", "n4", "n5"};
const std::vector<std::string> kFiveNodes = {"n0", "n1", "n2", "n3", "n4"};

// A cluster floor of 100 GB/s; pairs judged with the defaults (20 % below the upper quartile).
using fixtures::cluster_floor_baseline;

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

using PairBusbw = std::function<double(const std::string&, const std::string&)>;

// A run (6 nodes unless `nodes` says) whose cluster-wide allreduce fell below its floor, and every
// pair measured once: `busbw(a, b)` gives each pair's figure.
std::vector<Json> shortfall_with_pairs(const PairBusbw& busbw,
                                       const std::vector<std::string>& nodes = kNodes) {
  std::vector<Json> records = {fixtures::run_record(nodes), fixtures::collective(kGiB, 60.0)};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t j = i + 1; j < nodes.size(); ++j) {
      records.push_back(pair_record(nodes[i], nodes[j], busbw(nodes[i], nodes[j])));
    }
  }
  return records;
}

double healthy(const std::string&, const std::string&) {
  return 48.0;
}

bool has_note(const FleetVerdict& verdict, const std::string& code) {
  return std::any_of(verdict.notes.begin(), verdict.notes.end(),
                     [&](const InputNote& note) { return note.code == code; });
}

double slow_n3(const std::string& a, const std::string& b) {
  return a == "n3" || b == "n3" ? 21.0 : 47.0 + static_cast<double>(a[1] - '0') * 0.2;
}

TEST(PairLocalization, ASlowNodeIsNotBlamedBeforeItIsSlowAgainWithAKnownGoodPartner) {
  const auto records = shortfall_with_pairs(slow_n3);
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n3"), "localization.unresolved").message,
              HasSubstr("slow with 5 of 5 partners (median 21 GB/s"));
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n3"), "localization.unresolved").message,
              HasSubstr("not yet re-tested against a known-good node"));
  // Re-tests against two different known-good nodes; its slow pairs are not measured again.
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  ASSERT_EQ(pairs.retest_plan.size(), 2u);
  EXPECT_EQ(pairs.retest_plan[0].first, "n3");
  EXPECT_EQ(pairs.retest_plan[1].first, "n3");
  EXPECT_NE(pairs.retest_plan[0].second, pairs.retest_plan[1].second);
}

TEST(PairLocalization, ASlowNodeSlowAgainIsQuarantinedAndTheOthersAreNotHeldBackByTheShortfall) {
  auto records = shortfall_with_pairs(slow_n3);
  records.push_back(pair_record("n3", "n0", 20.0, true));
  // Slow again with one known-good partner is not enough to blame it: one pair in a few dozen is
  // slow by chance on a busy fabric. Nor does it clear it (it passed with nobody): it stays
  // inconclusive, and one more re-test is planned, with another known-good node.
  const FleetVerdict once =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(once, NodeState::kQuarantined).empty());
  EXPECT_EQ(fixtures::node(once, "n3").state, NodeState::kInconclusive);
  EXPECT_THAT(fixtures::reason(fixtures::node(once, "n3"), "localization.unresolved").message,
              HasSubstr("slow with 5 of 5 partners"));
  EXPECT_THAT(fixtures::reason(fixtures::node(once, "n3"), "localization.unresolved").message,
              HasSubstr("; slow again with known-good n0 (allreduce 20 GB/s), but blamed only "
                        "when slow with 2 known-good partners"));
  EXPECT_FALSE(fixtures::has_code(fixtures::node(once, "n3"), "localization.suspect_link"));
  // The slow re-test the message names is cited as evidence (the last record), after the slow
  // pairs; before it, with no re-test, only the slow pairs are.
  const PairLocalization unresolved =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  ASSERT_EQ(unresolved.verdicts.size(), 1u);
  ASSERT_EQ(unresolved.verdicts[0].evidence.size(), 6u);
  EXPECT_EQ(unresolved.verdicts[0].evidence.back().line, records.size());
  std::vector<Json> untested = records;
  untested.pop_back();
  const PairLocalization before =
      localize_pairs(fixtures::evidence_of(untested), cluster_floor_baseline());
  ASSERT_EQ(before.verdicts.size(), 1u);
  EXPECT_EQ(before.verdicts[0].evidence.size(), 5u);
  const auto one_more =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline()).retest_plan;
  ASSERT_EQ(one_more.size(), 1u);
  EXPECT_EQ(one_more[0].first, "n3");
  EXPECT_NE(one_more[0].second, "n0");
  records.push_back(pair_record("n3", "n1", 19.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n3"});
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 5u);
  const Reason& reason = fixtures::reason(fixtures::node(verdict, "n3"), "localization.bad_node");
  EXPECT_THAT(reason.message, HasSubstr("slow with 5 of 5 partners"));
  EXPECT_THAT(reason.message, HasSubstr("median 21 GB/s"));
  EXPECT_THAT(reason.message, HasSubstr("1 GiB"));
  EXPECT_THAT(reason.message, HasSubstr("slow again with known-good n0 (allreduce 20 GB/s), n1 "
                                        "(allreduce 19 GB/s)"));
  // The whole message and what verdict.json shows of it: pairs need 20 % below the healthy
  // pairs' 47.20 GB/s, 37.76 GB/s.
  EXPECT_EQ(reason.message,
            "allreduce in pairwise rounds: slow with 5 of 5 partners (median 21 GB/s, pairs need "
            "37.76 GB/s at 1 GiB (healthy pairs 47.20 GB/s, spread 0.297 GB/s), run run1); slow "
            "again with known-good n0 (allreduce 20 GB/s), n1 (allreduce 19 GB/s)");
  EXPECT_EQ(reason.check, "collective.allreduce");
  EXPECT_EQ(reason.rule, "rule.pair_localization");
  EXPECT_EQ(reason.measured, std::optional<double>(21));
  ASSERT_TRUE(reason.limit.has_value());
  EXPECT_NEAR(*reason.limit, 37.76, 0.005);
  EXPECT_EQ(reason.unit, "GB/s");
  EXPECT_FALSE(reason.evidence.empty());
  EXPECT_TRUE(has_note(verdict, "localization.explained"));
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(pairs.retest_plan.empty());
  // The verdict rests on n3's slow pairs first, then on its two re-tests (the last two records).
  ASSERT_EQ(pairs.verdicts.size(), 1u);
  const auto& evidence = pairs.verdicts[0].evidence;
  ASSERT_EQ(evidence.size(), 7u);
  EXPECT_EQ(evidence[5].line, records.size() - 1);
  EXPECT_EQ(evidence[6].line, records.size());
}

// Two leaves of three nodes whose path between them is slow (a leaf uplink or spine port): every
// pair across is slow, every pair within a leaf fine.
double across_leaves(const std::string& a, const std::string& b) {
  const bool left_a = a < "n3";
  const bool left_b = b < "n3";
  return left_a != left_b ? 12.0 : 48.0;
}

TEST(PairLocalization, ASlowSwitchPathIsSuspectedAndReTestedBeforeAnythingIsSaid) {
  auto records = shortfall_with_pairs(across_leaves);
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  // Nobody is blamed, nobody certified on a split not yet measured again.
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive), kNodes);
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n4"), "localization.unresolved").message,
              HasSubstr("slow with every node outside {n3, n4, n5} and fine with each inside: a "
                        "switch path between groups is suspected, not yet measured again"));
  // Two pairs across are measured again, with different nodes on each side.
  const auto plan = localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(plan.retest_plan,
            (std::vector<std::pair<std::string, std::string>>{{"n0", "n3"}, {"n1", "n4"}}));
}

TEST(PairLocalization, ASwitchPathSlowAgainWarnsOnEveryNodeAndBlamesNone) {
  auto records = shortfall_with_pairs(across_leaves);
  records.push_back(pair_record("n0", "n3", 11.0, true));
  records.push_back(pair_record("n1", "n4", 13.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  // The split explains the cluster-wide shortfall: every node certified, each with the warning.
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified), kNodes);
  for (const auto& node : kNodes) {
    SCOPED_TRACE(node);
    const Reason& r =
        fixtures::reason(fixtures::node(verdict, node), "localization.suspect_switch");
    EXPECT_THAT(r.message, HasSubstr("switch path between {n0, n1, n2} and {n3, n4, n5}: every "
                                     "pair across is slow, every pair within a group is fine"));
    EXPECT_THAT(r.message, HasSubstr("slow again when measured again (allreduce 11 GB/s, "
                                     "allreduce 13 GB/s); no node is blamed"));
    EXPECT_FALSE(r.evidence.empty());
  }
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(pairs.retest_plan.empty());
  // One verdict resting on the nine slow pairs across, then the two re-tests (the last records).
  ASSERT_EQ(pairs.verdicts.size(), 1u);
  EXPECT_EQ(pairs.verdicts[0].kind, PairVerdictKind::kSuspectSwitch);
  ASSERT_EQ(pairs.verdicts[0].evidence.size(), 11u);
  EXPECT_EQ(pairs.verdicts[0].evidence[9].line, records.size() - 1);
  EXPECT_EQ(pairs.verdicts[0].evidence[10].line, records.size());
  // The summary names the path once, on a line of its own.
  const std::string text = make_verdict_reporter("text")->render(verdict);
  EXPECT_THAT(text, HasSubstr("\n  suspect switch path between {n0, n1, n2} and {n3, n4, n5}: "));
  EXPECT_EQ(text.find("suspect switch path"), text.rfind("suspect switch path"));
}

TEST(PairLocalization, ASplitThatDoesNotHoldWhenMeasuredAgainIsJudgedPairByPair) {
  // One pair across is fine when measured again: no clean split, and no known-good node (every
  // node was slow with some partner): nothing is blamed and nothing certified.
  auto records = shortfall_with_pairs(across_leaves);
  records.push_back(pair_record("n0", "n3", 11.0, true));
  records.push_back(pair_record("n1", "n4", 47.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kCertified).empty());
  for (const auto& node : kNodes)
    EXPECT_FALSE(fixtures::has_code(fixtures::node(verdict, node), "localization.suspect_switch"));
}

TEST(PairLocalization, ASlowNodeFineWithAKnownGoodPartnerIsNotBlamed) {
  auto records = shortfall_with_pairs(slow_n3);
  records.push_back(pair_record("n3", "n0", 47.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  // The pair with n0 was fine when measured again: noise. The other slow pairs are measured
  // once more before anything is said about them.
  EXPECT_TRUE(has_note(verdict, "localization.noise"));
  // Each of n3's other slow pairs is a link to a node slow with nobody else.
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n1"), "localization.suspect_link").message,
              HasSubstr("n1 passed with every other partner; n3 passed with n0"));
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(pairs.retest_plan.size(), 4u);
  for (const auto& [a, b] : pairs.retest_plan) {
    EXPECT_TRUE(a == "n3" || b == "n3");
    EXPECT_FALSE(a == "n0" || b == "n0");
  }
}

TEST(PairLocalization, WithNoKnownGoodNodeNothingIsBlamed) {
  // Three nodes, every pair slow: each node is slow with both partners and none passed anything.
  const std::vector<std::string> three = {"n0", "n1", "n2"};
  std::vector<Json> records = {fixtures::run_record(three), fixtures::collective(kGiB, 60.0)};
  records.push_back(pair_record("n0", "n1", 10.0));
  records.push_back(pair_record("n0", "n2", 10.0));
  records.push_back(pair_record("n1", "n2", 10.0));
  const Baseline baseline = cluster_floor_baseline("    pairs: {floor_gb_per_s: 40}\n");
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kInconclusive).size(), 3u);
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n1"), "localization.unresolved").message,
              HasSubstr("no known-good node to re-test it against (every node was slow with some "
                        "partner): nothing is blamed on this evidence"));
  EXPECT_TRUE(localize_pairs(fixtures::evidence_of(records), baseline).retest_plan.empty());
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

// Pairs with any of `slow_nodes`, and the `links` themselves, measure `slow`; every other 48.
PairBusbw slow_pairs(std::set<std::string> slow_nodes,
                     std::vector<std::pair<std::string, std::string>> links = {},
                     double slow = 21.0) {
  return [slow_nodes = std::move(slow_nodes), links = std::move(links), slow](
             const std::string& a, const std::string& b) {
    const bool link = std::any_of(links.begin(), links.end(),
                                  [&](const auto& l) { return is_link(a, b, l.first, l.second); });
    return slow_nodes.contains(a) || slow_nodes.contains(b) || link ? slow : 48.0;
  };
}

// The verdict about `node` (by name), or null.
const PairVerdict* verdict_about(const PairLocalization& pairs, const Evidence& evidence,
                                 const std::string& node) {
  for (const auto& v : pairs.verdicts) {
    if (evidence.node_name(v.node) == node) return &v;
  }
  return nullptr;
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
    // 20 % below the healthy pairs' 48 GB/s: 38.40 GB/s.
    EXPECT_EQ(reason.message,
              "link n1<->n4: allreduce 12 GB/s, pairs need 38.40 GB/s at 1 GiB (healthy pairs 48 "
              "GB/s, spread 0 GB/s) (run run1); both nodes pass with their other partners; not "
              "yet re-tested against known-good nodes");
    ASSERT_TRUE(reason.link.has_value());
    EXPECT_EQ(reason.link->type, "hosts");
    EXPECT_EQ(reason.link->index, -1);  // pairwise rounds name no rail
    EXPECT_EQ(reason.link->hosts, (std::vector<std::string>{"n1", "n4"}));
    EXPECT_FALSE(reason.evidence.empty());
  }
  // The summary names the link once, though it shows in no node's line (both are certified).
  const std::string text = make_verdict_reporter("text")->render(verdict);
  EXPECT_THAT(text, HasSubstr("\n  suspect link n1<->n4: allreduce 12 GB/s"));
  EXPECT_EQ(text.find("suspect link"), text.rfind("suspect link"));
  // Before either end is blamed, each is re-tested against a node that passed everything, each
  // with its own, and the slow pair is measured once more.
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  std::map<std::string, std::string> good_of;
  bool pair_again = false;
  for (const auto& [a, b] : pairs.retest_plan) {
    if (is_link(a, b, "n1", "n4")) {
      pair_again = true;
      continue;
    }
    good_of[a] = b;
    EXPECT_NE(b, "n1");
    EXPECT_NE(b, "n4");
  }
  EXPECT_TRUE(pair_again);
  ASSERT_EQ(good_of.size(), 2u);
  EXPECT_NE(good_of["n1"], good_of["n4"]);
}

TEST(PairLocalization, ReTestsConfirmALinkOrBlameTheNodeThatIsSlowAgain) {
  const auto slow_link = [](const std::string& a, const std::string& b) {
    return is_link(a, b, "n1", "n4") ? 12.0 : 48.0;
  };
  auto confirmed = shortfall_with_pairs(slow_link);
  confirmed.push_back(pair_record("n1", "n0", 47.5, true));
  confirmed.push_back(pair_record("n1", "n3", 47.6, true));
  confirmed.push_back(pair_record("n4", "n2", 47.9, true));
  confirmed.push_back(pair_record("n1", "n4", 11.0, true));
  FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(confirmed), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 6u);
  const std::string message =
      fixtures::reason(fixtures::node(verdict, "n4"), "localization.suspect_link").message;
  EXPECT_THAT(message, HasSubstr("slow again when measured again (allreduce 11 GB/s)"));
  EXPECT_THAT(message, HasSubstr("n1 passed with n0, n3; n4 passed with n2"));
  EXPECT_TRUE(localize_pairs(fixtures::evidence_of(confirmed), cluster_floor_baseline())
                  .retest_plan.empty());

  // Slow again with one known-good node: not yet blamed, and no longer a link either.
  auto once = shortfall_with_pairs(slow_link);
  once.push_back(pair_record("n1", "n0", 47.5, true));
  once.push_back(pair_record("n4", "n2", 11.0, true));
  verdict = fixtures::certify(fixtures::evidence_of(once), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_EQ(fixtures::node(verdict, "n4").state, NodeState::kInconclusive);
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n4"), "localization.unresolved").message,
              HasSubstr("slow again with known-good n2 (allreduce 11 GB/s)"));
  EXPECT_FALSE(fixtures::has_code(fixtures::node(verdict, "n4"), "localization.suspect_link"));

  auto blamed = shortfall_with_pairs(slow_link);
  blamed.push_back(pair_record("n1", "n0", 47.5, true));
  blamed.push_back(pair_record("n4", "n2", 11.0, true));
  blamed.push_back(pair_record("n4", "n3", 11.5, true));
  verdict = fixtures::certify(fixtures::evidence_of(blamed), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n4"});
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n4"), "localization.bad_node").message,
              HasSubstr("slow again with known-good n2"));
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kCertified).size(), 5u);
  // The node is blamed, not the link to it: the summary names no link with it.
  EXPECT_THAT(make_verdict_reporter("text")->render(verdict),
              ::testing::Not(HasSubstr("suspect link")));
}

TEST(PairLocalization, APairSlowOnceAndFineWhenMeasuredAgainIsNoise) {
  const auto noisy = [](const std::string& a, const std::string& b) {
    return is_link(a, b, "n1", "n4") ? 12.0 : 48.0;
  };
  auto records = shortfall_with_pairs(noisy);
  records.push_back(pair_record("n1", "n0", 47.5, true));
  records.push_back(pair_record("n4", "n2", 47.9, true));
  records.push_back(pair_record("n1", "n4", 47.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_FALSE(fixtures::has_code(fixtures::node(verdict, "n1"), "localization.suspect_link"));
  const auto note = std::find_if(verdict.notes.begin(), verdict.notes.end(),
                                 [](const InputNote& n) { return n.code == "localization.noise"; });
  ASSERT_NE(note, verdict.notes.end());
  EXPECT_THAT(note->message,
              HasSubstr("pair n1<->n4 was slow in the pairwise rounds (allreduce "
                        "12 GB/s) and fine when measured again (allreduce 47 GB/s): noise, "
                        "nothing is blamed on it"));
  // Noise explains no shortfall: the cluster's figure still blames nobody and certifies nobody.
  EXPECT_TRUE(fixtures::has_code(fixtures::node(verdict, "n0"), "perf.unattributed"));
}

Json sendrecv_pair(const std::string& a, const std::string& b, double busbw_gb,
                   bool listed = false) {
  Json c = pair_record(a, b, busbw_gb, listed);
  c["collective"] = "sendrecv";
  return c;
}

TEST(PairLocalization, EveryCollectiveOfARunIsOneDiagnosis) {
  // A slow link n2<->n3 shows in both collectives; sendrecv is also slow once between n2 and n0.
  // Judged apart, sendrecv would make n2 slow with 2 of 3 partners while allreduce names a link.
  const std::vector<std::string> four = {"n0", "n1", "n2", "n3"};
  std::vector<Json> records = {fixtures::run_record(four)};
  for (std::size_t i = 0; i < four.size(); ++i) {
    for (std::size_t j = i + 1; j < four.size(); ++j) {
      const bool link = is_link(four[i], four[j], "n2", "n3");
      records.push_back(pair_record(four[i], four[j], link ? 5.0 : 48.0));
      const bool noise = is_link(four[i], four[j], "n2", "n0");
      records.push_back(sendrecv_pair(four[i], four[j], link ? 4.0 : noise ? 20.0 : 40.0));
    }
  }
  const Baseline baseline = fixtures::baseline_of(
      "required: [collective.allreduce]\nfleet: {enabled: false}\n"
      "checks:\n  collective.allreduce: {min_bytes: 1G}\n"
      "  collective.sendrecv: {min_bytes: 1G}\n");
  auto first_pass = localize_pairs(fixtures::evidence_of(records), baseline);
  // n2 is slow with 2 of its 3 partners: re-tested against two known-good nodes, first the one
  // that passed everything.
  EXPECT_EQ(first_pass.retest_plan,
            (std::vector<std::pair<std::string, std::string>>{{"n2", "n1"}, {"n2", "n0"}}));
  for (const std::string good : {"n1", "n0"}) {
    records.push_back(pair_record("n2", good, 47.0, true));
    records.push_back(sendrecv_pair("n2", good, 39.0, true));
  }
  // Cleared, n2's slow pair with n3 is measured once more (the one with n0 just was).
  auto second_pass = localize_pairs(fixtures::evidence_of(records), baseline);
  EXPECT_EQ(second_pass.retest_plan,
            (std::vector<std::pair<std::string, std::string>>{{"n2", "n3"}}));
  for (const auto& [a, b] : second_pass.retest_plan) {
    const bool link = is_link(a, b, "n2", "n3");
    records.push_back(pair_record(a, b, link ? 5.0 : 47.0, true));
    records.push_back(sendrecv_pair(a, b, link ? 4.0 : 39.0, true));
  }
  const FleetVerdict verdict = fixtures::certify(fixtures::evidence_of(records), baseline);
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  const std::string message =
      fixtures::reason(fixtures::node(verdict, "n3"), "localization.suspect_link").message;
  EXPECT_THAT(message, HasSubstr("link n2<->n3: allreduce 5 GB/s"));
  EXPECT_THAT(message, HasSubstr("; sendrecv 4 GB/s"));
  EXPECT_TRUE(has_note(verdict, "localization.noise"));
  const std::string text = make_verdict_reporter("text")->render(verdict);
  EXPECT_THAT(text, HasSubstr("suspect link n2<->n3"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("suspect link n0<->n2")));
  EXPECT_TRUE(localize_pairs(fixtures::evidence_of(records), baseline).retest_plan.empty());
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
  // Not a bad-node candidate: its slow pairs are measured once more too.
  const auto plan =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline()).retest_plan;
  EXPECT_NE(std::find(plan.begin(), plan.end(), std::pair<std::string, std::string>{"n0", "n2"}),
            plan.end());

  records.push_back(pair_record("n2", "n1", 14.0, true));
  records.push_back(pair_record("n2", "n3", 14.5, true));
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

// ---- When a pair is slow: every threshold at its limit and one step either side ----------------

// Six nodes' worth of figures is too many to write out: four nodes, six pairs, in this order.
const std::vector<std::pair<std::string, std::string>> kSixPairs = {
    {"n0", "n1"}, {"n0", "n2"}, {"n0", "n3"}, {"n1", "n2"}, {"n1", "n3"}, {"n2", "n3"}};

// The judged series of four nodes whose six pairs measured `figures`.
PairSeries series_of(const std::vector<double>& figures, const std::string& pairs_rule = "") {
  std::vector<Json> records = {fixtures::run_record({"n0", "n1", "n2", "n3"})};
  for (std::size_t i = 0; i < figures.size(); ++i)
    records.push_back(pair_record(kSixPairs[i].first, kSixPairs[i].second, figures[i]));
  PairLocalization judged =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline(pairs_rule));
  EXPECT_EQ(judged.series.size(), 1u);
  return judged.series.empty() ? PairSeries{} : judged.series[0];
}

// Whether the pair that measured the first figure (no other pair measured it) passed.
bool first_pair_passes(const std::vector<double>& figures, const std::string& pairs_rule = "") {
  const PairSeries s = series_of(figures, pairs_rule);
  for (const auto& pair : s.pairs) {
    if (std::abs(pair.busbw_gb_per_s - figures.front()) < 1e-9) return pair.passed;
  }
  ADD_FAILURE() << "no pair measured " << figures.front();
  return false;
}

TEST(PairLimit, OnAQuietRunTheMinimumEffectSizeDecides) {
  // Reference 10, no spread: the limit is 20 % below, 8.
  const PairLimit limit = pair_limit({10, 10, 10, 10, 10, 10}, PairSpec{});
  EXPECT_DOUBLE_EQ(limit.reference_gb_per_s, 10);
  EXPECT_DOUBLE_EQ(limit.spread_gb_per_s, 0);
  EXPECT_DOUBLE_EQ(limit.limit_gb_per_s, 8);
  EXPECT_TRUE(first_pair_passes({8.01, 10, 10, 10, 10, 10}));
  EXPECT_TRUE(first_pair_passes({8.0, 10, 10, 10, 10, 10}));
  EXPECT_FALSE(first_pair_passes({7.99, 10, 10, 10, 10, 10}));
}

TEST(PairLimit, TheRunsSpreadWidensTheLimitToThreeStandardDeviations) {
  // Upper half 9, 10, 11: median absolute deviation 1, spread 1.4826; reference (upper
  // quartile) 10; 10 - 3 * 1.4826 = 5.5522 is further than the effect size's 8.
  const PairLimit limit = pair_limit({5, 6, 7, 9, 10, 11}, PairSpec{});
  EXPECT_DOUBLE_EQ(limit.reference_gb_per_s, 10);
  EXPECT_DOUBLE_EQ(limit.spread_gb_per_s, 1.4826);
  EXPECT_DOUBLE_EQ(limit.limit_gb_per_s, 10 - 3 * 1.4826);
  EXPECT_TRUE(first_pair_passes({5.5523, 6, 7, 9, 10, 11}));
  // (At the limit itself: a figure of 10 - 3 * 1.4826 does not survive the record's bytes/s.)
  EXPECT_FALSE(first_pair_passes({5.5521, 6, 7, 9, 10, 11}));
  // With fewer than three pairs in the upper half there is no spread: the effect size decides.
  const PairLimit few = pair_limit({5, 9, 10, 11}, PairSpec{});
  EXPECT_DOUBLE_EQ(few.spread_gb_per_s, 0);
  EXPECT_DOUBLE_EQ(few.limit_gb_per_s, 0.8 * few.reference_gb_per_s);
}

TEST(PairLimit, UnderAQuarterOfTheReferenceAPairIsSlowWhateverTheSpread) {
  // Upper half 10, 20, 30: spread 14.8 would put the limit below zero; a quarter of the
  // reference (20) is the most the spread may widen it to.
  const PairLimit limit = pair_limit({1, 2, 3, 10, 20, 30}, PairSpec{});
  EXPECT_DOUBLE_EQ(limit.reference_gb_per_s, 20);
  EXPECT_DOUBLE_EQ(limit.limit_gb_per_s, 5);
  EXPECT_TRUE(first_pair_passes({5.01, 1, 2, 10, 20, 30}));
  EXPECT_TRUE(first_pair_passes({5.0, 1, 2, 10, 20, 30}));
  EXPECT_FALSE(first_pair_passes({4.99, 1, 2, 10, 20, 30}));
  // An effect size beyond a quarter is the baseline's choice and stays in force.
  PairSpec lenient;
  lenient.max_deficit_pct = 90;
  EXPECT_DOUBLE_EQ(pair_limit({1, 2, 3, 10, 20, 30}, lenient).limit_gb_per_s, 2);
}

TEST(PairLimit, TheAbsoluteFloorAlwaysApplies) {
  const std::string floor = "    pairs: {floor_gb_per_s: 40}\n";
  EXPECT_TRUE(first_pair_passes({40.01, 48, 48, 48, 48, 48}, floor));
  EXPECT_TRUE(first_pair_passes({40.0, 48, 48, 48, 48, 48}, floor));
  EXPECT_FALSE(first_pair_passes({39.99, 48, 48, 48, 48, 48}, floor));
}

TEST(PairLimit, PairsAreComparedFromMinPairsOn) {
  PairSpec rule;
  rule.min_pairs = 3;
  EXPECT_GT(pair_limit({10, 10, 10}, rule).reference_gb_per_s, 0);
  EXPECT_EQ(pair_limit({10, 10}, rule).reference_gb_per_s, 0);
  EXPECT_EQ(pair_limit({10, 10}, rule).limit_gb_per_s, 0);  // and no floor: nothing to judge
  rule.min_pairs = 4;
  EXPECT_EQ(pair_limit({10, 10, 10}, rule).reference_gb_per_s, 0);
}

// A bad-node candidate fails with more than half of its partners, and at least two.
std::vector<LocalizationFinding> candidates_among(int nodes, int slow_partners_of_n0) {
  std::vector<PairOutcome> outcomes;
  for (int i = 0; i < nodes; ++i) {
    for (int j = i + 1; j < nodes; ++j) {
      outcomes.push_back(
          {fmt::format("n{}", i), fmt::format("n{}", j), !(i == 0 && j <= slow_partners_of_n0)});
    }
  }
  std::vector<LocalizationFinding> out;
  for (auto& finding : attribute_pair_failures(outcomes)) {
    if (finding.kind == LocalizationKind::kBadNode) out.push_back(std::move(finding));
  }
  return out;
}

TEST(PairLimit, ABadNodeCandidateIsSlowWithMoreThanHalfOfItsPartnersAndAtLeastTwo) {
  EXPECT_EQ(candidates_among(5, 3).size(), 1u);  // 3 of 4
  EXPECT_EQ(candidates_among(5, 2).size(), 0u);  // 2 of 4: half is not more than half
  EXPECT_EQ(candidates_among(4, 2).size(), 1u);  // 2 of 3
  EXPECT_EQ(candidates_among(4, 1).size(), 0u);  // 1 of 3
  EXPECT_EQ(candidates_among(2, 1).size(), 0u);  // 1 of 1: most, but one pair is a link
}

// ---- Which records a series holds, and what a verdict says --------------------------------

// Pairs among n0..n3 at `busbw`, each pair measured in place first at `in_place_busbw`.
std::vector<Json> four_nodes_in_both_placements(double in_place_busbw, double busbw) {
  std::vector<Json> records = {fixtures::run_record({"n0", "n1", "n2", "n3"})};
  for (const auto& [a, b] : kSixPairs) {
    Json in_place = pair_record(a, b, in_place_busbw);
    in_place["in_place"] = true;
    records.push_back(in_place);
    records.push_back(pair_record(a, b, busbw));
  }
  return records;
}

// Of a pair's placements the better figure counts, for every pair.
TEST(PairLocalization, EveryPairsBetterPlacementCounts) {
  const PairLocalization pairs = localize_pairs(
      fixtures::evidence_of(four_nodes_in_both_placements(10, 48)), cluster_floor_baseline());
  ASSERT_EQ(pairs.series.size(), 1u);
  ASSERT_EQ(pairs.series[0].pairs.size(), 6u);
  for (const auto& pair : pairs.series[0].pairs)
    EXPECT_DOUBLE_EQ(pair.busbw_gb_per_s, 48);
  EXPECT_TRUE(pairs.verdicts.empty());
}

// A pair record that measured nothing (skipped) is no figure: it neither joins the comparison
// nor makes its pair slow.
TEST(PairLocalization, AnUnmeasuredPairRecordIsNoFigure) {
  std::vector<Json> records = shortfall_with_pairs(healthy);
  const auto first_pair = std::find_if(records.begin(), records.end(), [](const Json& r) {
    return r.value("scope", "") == "pairs";
  });
  ASSERT_NE(first_pair, records.end());
  (*first_pair)["status"] = "skipped";
  (*first_pair)["reason"] = "n0 had no free GPU";
  first_pair->erase("busbw_bytes_per_s");
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  ASSERT_EQ(pairs.series.size(), 1u);
  EXPECT_EQ(pairs.series[0].pairs.size(), 14u);
  EXPECT_TRUE(pairs.verdicts.empty());
}

// Re-tests alone (no round-robin pairs to compare them with) make no series, floor or not.
TEST(PairLocalization, ReTestsAloneMakeNoSeries) {
  const std::vector<Json> records = {fixtures::run_record({"n0", "n1", "n2"}),
                                     pair_record("n0", "n1", 10.0, true),
                                     pair_record("n0", "n2", 48.0, true)};
  EXPECT_TRUE(localize_pairs(fixtures::evidence_of(records),
                             cluster_floor_baseline("    pairs: {floor_gb_per_s: 40}\n"))
                  .series.empty());
}

// The largest size is found whatever order the records come in.
TEST(PairLocalization, TheLargestSizeIsJudgedWhicheverRecordComesFirst) {
  std::vector<Json> records = shortfall_with_pairs(healthy);
  records.insert(records.begin() + 2, pair_record("n0", "n1", 1.0, false, 1 << 20));
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  ASSERT_EQ(pairs.series.size(), 1u);
  EXPECT_EQ(pairs.series[0].bytes, kGiB);
  EXPECT_EQ(pairs.series[0].pairs.size(), 15u);
}

// A fabric slower than 1 GB/s (TCP, say) is judged like any other.
TEST(PairLimit, PairsBelowOneGbPerSecondAreJudged) {
  EXPECT_FALSE(first_pair_passes({0.1, 0.5, 0.5, 0.5, 0.5, 0.5}));
  EXPECT_TRUE(first_pair_passes({0.45, 0.5, 0.5, 0.5, 0.5, 0.5}));
}

// The reference is the upper quartile by nearest rank: the third of four figures, the 79th of
// 105.
TEST(PairLimit, TheReferenceIsTheUpperQuartileByNearestRank) {
  EXPECT_DOUBLE_EQ(pair_limit({1, 2, 3, 4}, PairSpec{}).reference_gb_per_s, 3);
  std::vector<double> many;
  for (int i = 1; i <= 105; ++i)
    many.push_back(i);
  EXPECT_DOUBLE_EQ(pair_limit(many, PairSpec{}).reference_gb_per_s, 79);
}

// Five nodes: n0 slow with every partner (its pairs with n3 and n4 fine when measured again, the
// others not yet), and a slow link n3<->n4 after its pairs in pair order: the link is still judged.
TEST(PairLocalization, AnUnresolvedNodesPairsDoNotEndTheSearchForLinks) {
  auto records = shortfall_with_pairs(slow_pairs({"n0"}, {{"n3", "n4"}}, 12.0), kFiveNodes);
  records.push_back(pair_record("n0", "n3", 48.0, true));
  records.push_back(pair_record("n0", "n4", 48.0, true));
  const Evidence evidence = fixtures::evidence_of(records);
  const PairLocalization pairs = localize_pairs(evidence, cluster_floor_baseline());
  std::vector<std::string> kinds;
  for (const auto& v : pairs.verdicts)
    kinds.push_back(fmt::format("{} {}", static_cast<int>(v.kind), evidence.node_name(v.node)));
  const auto link = std::find_if(pairs.verdicts.begin(), pairs.verdicts.end(), [](const auto& v) {
    return v.kind == PairVerdictKind::kSuspectLink;
  });
  ASSERT_NE(link, pairs.verdicts.end()) << ::testing::PrintToString(kinds);
  EXPECT_EQ(link->failed_partners, 1);
}

// Five nodes: n4 was measured only with n0 (slow), n2<->n3 is a slow link. Nothing shows n4 works
// with anyone, so its pair is no link: both ends stay unresolved, in node order, each planned
// against the one node that passed everything; the link after them in pair order is still found.
TEST(PairLocalization, AnEndThatPassedWithNoPartnerKeepsItsPairUnresolved) {
  const std::vector<std::string>& five = kFiveNodes;
  std::vector<Json> records = {fixtures::run_record(five), fixtures::collective(kGiB, 60.0)};
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = i + 1; j < 4; ++j)
      records.push_back(
          pair_record(five[i], five[j], is_link(five[i], five[j], "n2", "n3") ? 12.0 : 48.0));
  }
  records.push_back(pair_record("n0", "n4", 12.0));
  const Evidence evidence = fixtures::evidence_of(records);
  const PairLocalization pairs = localize_pairs(evidence, cluster_floor_baseline());
  std::vector<std::string> verdicts;
  for (const auto& v : pairs.verdicts) {
    verdicts.push_back(fmt::format(
        "{} {}{}", v.kind == PairVerdictKind::kSuspectLink ? "link" : "unresolved",
        evidence.node_name(v.node), v.other == kNoString ? "" : "-" + evidence.node_name(v.other)));
  }
  EXPECT_EQ(verdicts, (std::vector<std::string>{"unresolved n0", "unresolved n4", "link n2-n3"}));
  EXPECT_EQ(pairs.verdicts[1].retest,
            "passed with no partner: nothing shows either end of its slow pair is good");
  EXPECT_EQ(pairs.retest_plan,
            (std::vector<std::pair<std::string, std::string>>{
                {"n0", "n1"}, {"n4", "n1"}, {"n2", "n3"}, {"n2", "n1"}, {"n3", "n1"}}));
}

// A slow pair already measured again is not planned again.
TEST(PairLocalization, APairMeasuredAgainIsNotPlannedAgain) {
  const auto some = [](const std::string& a, const std::string& b) {
    return is_link(a, b, "n2", "n0") || is_link(a, b, "n2", "n5") ? 15.0 : 48.0;
  };
  auto records = shortfall_with_pairs(some);
  records.push_back(pair_record("n2", "n0", 14.0, true));
  for (const auto& [a, b] :
       localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline()).retest_plan) {
    EXPECT_FALSE(is_link(a, b, "n2", "n0")) << a << " " << b;
  }
}

// A link slow in one collective only shows that one; a node slow in two names each.
TEST(PairLocalization, AVerdictShowsTheCollectivesItWasSlowIn) {
  const std::vector<std::string> four = {"n0", "n1", "n2", "n3"};
  std::vector<Json> link_records = {fixtures::run_record(four)};
  std::vector<Json> node_records = {fixtures::run_record(kNodes)};
  for (std::size_t i = 0; i < four.size(); ++i) {
    for (std::size_t j = i + 1; j < four.size(); ++j) {
      link_records.push_back(
          pair_record(four[i], four[j], is_link(four[i], four[j], "n2", "n3") ? 5.0 : 48.0));
      link_records.push_back(sendrecv_pair(four[i], four[j], 40.0));
    }
  }
  for (std::size_t i = 0; i < kNodes.size(); ++i) {
    for (std::size_t j = i + 1; j < kNodes.size(); ++j) {
      node_records.push_back(pair_record(kNodes[i], kNodes[j], slow_n3(kNodes[i], kNodes[j])));
      node_records.push_back(
          sendrecv_pair(kNodes[i], kNodes[j], slow_n3(kNodes[i], kNodes[j]) - 5.0));
    }
  }
  const Baseline baseline = fixtures::baseline_of(
      "required: [collective.allreduce]\nfleet: {enabled: false}\n"
      "checks:\n  collective.allreduce: {min_bytes: 1G}\n"
      "  collective.sendrecv: {min_bytes: 1G}\n");
  const PairLocalization link = localize_pairs(fixtures::evidence_of(link_records), baseline);
  ASSERT_EQ(link.verdicts.size(), 1u);
  EXPECT_THAT(link.verdicts[0].figures, HasSubstr("allreduce 5 GB/s"));
  EXPECT_THAT(link.verdicts[0].figures, ::testing::Not(HasSubstr("sendrecv")));
  const PairLocalization node = localize_pairs(fixtures::evidence_of(node_records), baseline);
  ASSERT_EQ(node.verdicts.size(), 1u);
  EXPECT_THAT(node.verdicts[0].figures, HasSubstr("allreduce median 21 GB/s"));
  EXPECT_THAT(node.verdicts[0].figures, HasSubstr("; sendrecv median 16 GB/s"));
  EXPECT_EQ(node.verdicts[0].collectives, "allreduce, sendrecv");
}

// A node's partners are its own: n3 was measured with four partners only.
TEST(PairLocalization, AVerdictCountsTheNodesOwnPartners) {
  std::vector<Json> records = shortfall_with_pairs(slow_n3);
  records.erase(
      std::remove_if(
          records.begin(), records.end(),
          [](const Json& r) {
            return r.value("scope", "") == "pairs" && r["group_nodes"] == Json::array({"n3", "n5"});
          }),
      records.end());
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n3"), "localization.unresolved").message,
              HasSubstr("slow with 4 of 4 partners"));
}

// The first node of the run can be the bad one: its slow pairs are shown like any other's.
TEST(PairLocalization, TheRunsFirstNodeSlowAgainIsBlamedWithItsSlowPairs) {
  const auto slow_n0 = [](const std::string& a, const std::string& b) {
    return a == "n0" || b == "n0" ? 21.0 : 47.0 + static_cast<double>(a[1] - '0') * 0.2;
  };
  auto records = shortfall_with_pairs(slow_n0);
  records.push_back(pair_record("n0", "n1", 20.0, true));
  records.push_back(pair_record("n0", "n2", 19.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n0"});
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n0"), "localization.bad_node").message,
              HasSubstr("slow with 5 of 5 partners (median 21 GB/s"));
}

// Re-tests are planned against the known-good nodes in order, from the first.
TEST(PairLocalization, ReTestsStartWithTheFirstKnownGoodNode) {
  const auto records = shortfall_with_pairs(slow_pairs({"n4"}, {}, 12.0), kFiveNodes);
  EXPECT_EQ(localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline()).retest_plan,
            (std::vector<std::pair<std::string, std::string>>{{"n4", "n0"}, {"n4", "n1"}}));
}

// Over seeded random fleets of 4 to 8 nodes (any pair slow, any pair measured again, fast or
// slow): the re-test plan never lists a pair twice, never one already measured again, and
// never a node with itself.
TEST(PairLocalization, TheReTestPlanHoldsEachPairOnceAndNothingMeasuredAgain) {
  for (unsigned seed = 0; seed < 400; ++seed) {
    std::mt19937 random(seed);
    const int n = 4 + static_cast<int>(seed % 5);
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i)
      names.push_back(fmt::format("n{}", i));
    std::vector<Json> records = {fixtures::run_record(names), fixtures::collective(kGiB, 60.0)};
    std::set<std::pair<std::string, std::string>> retested;
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        const bool slow = random() % 6 == 0;
        records.push_back(pair_record(names[i], names[j], slow ? 12.0 : 48.0));
        if (random() % 5 == 0) {
          records.push_back(pair_record(names[i], names[j], random() % 2 ? 12.0 : 48.0, true));
          retested.insert({names[i], names[j]});
        }
      }
    }
    const auto plan =
        localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline()).retest_plan;
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& [a, b] : plan) {
      EXPECT_NE(a, b) << seed;
      const auto ordered = a < b ? std::pair{a, b} : std::pair{b, a};
      EXPECT_TRUE(seen.insert(ordered).second)
          << "planned twice: " << a << " " << b << ", seed " << seed;
      EXPECT_FALSE(retested.contains(ordered))
          << "measured again already: " << a << " " << b << ", seed " << seed;
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// The cited record of a pair is the one with its best figure (of equal figures, the first), so a
// verdict points at the measurement it quotes.
TEST(PairLocalization, APairCitesTheRecordOfItsBestFigure) {
  for (const double second : {13.0, 12.0}) {
    std::vector<Json> records = shortfall_with_pairs(slow_n3);
    Json in_place = pair_record("n3", "n0", 12.0);
    in_place["in_place"] = true;
    records.push_back(in_place);
    records.push_back(pair_record("n3", "n0", second));
    const std::size_t in_place_line = records.size() - 1;
    const Evidence evidence = fixtures::evidence_of(records);
    const PairLocalization pairs = localize_pairs(evidence, cluster_floor_baseline());
    ASSERT_EQ(pairs.series.size(), 1u);
    const auto pair = std::find_if(
        pairs.series[0].pairs.begin(), pairs.series[0].pairs.end(), [&](const PairFigure& p) {
          return evidence.node_name(p.a) == "n0" && evidence.node_name(p.b) == "n3";
        });
    ASSERT_NE(pair, pairs.series[0].pairs.end());
    // n3<->n0 measured 21 in the round-robin pairs first: that stays the best figure.
    EXPECT_DOUBLE_EQ(pair->busbw_gb_per_s, 21.0) << second;
    EXPECT_LT(pair->ref.line, in_place_line) << second;
  }
  // A better figure later is cited by its own record.
  std::vector<Json> records = {fixtures::run_record({"n0", "n1", "n2", "n3"})};
  for (const auto& [a, b] : kSixPairs)
    records.push_back(pair_record(a, b, 30.0));
  // The other placement of two pairs (the same record twice would be read as a duplicate).
  for (const auto& [b, figure] : {std::pair{"n1", 30.0}, std::pair{"n2", 31.0}}) {
    Json in_place = pair_record("n0", b, figure);  // n1: equal, the first is kept; n2: cited
    in_place["in_place"] = true;
    records.push_back(in_place);
  }
  const Evidence evidence = fixtures::evidence_of(records);
  const PairLocalization pairs = localize_pairs(evidence, cluster_floor_baseline());
  ASSERT_EQ(pairs.series.size(), 1u);
  std::map<std::string, std::size_t> cited;
  for (const auto& pair : pairs.series[0].pairs)
    cited[evidence.node_name(pair.a) + "-" + evidence.node_name(pair.b)] = pair.ref.line;
  EXPECT_EQ(cited["n0-n1"], 2u);
  EXPECT_EQ(cited["n0-n2"], records.size());
}

// Only pairs-scope records are pairs: a bisection round's group of two is not.
TEST(PairLocalization, ABisectionGroupOfTwoIsNoPair) {
  Json group = fixtures::collective(kGiB, 5.0, "groups", "n0", {}, "run2");
  group["nranks"] = 2;
  group["nodes"] = 2;
  group["group_nodes"] = {"n0", "n1"};
  group["round"] = 0;
  group["group"] = 0;
  const std::vector<Json> records = {fixtures::run_record({"n0", "n1"}, "run2"), group};
  EXPECT_TRUE(localize_pairs(fixtures::evidence_of(records),
                             cluster_floor_baseline("    pairs: {floor_gb_per_s: 40}\n"))
                  .series.empty());
}

// A pairs-scope record of three nodes is no pair.
TEST(PairLocalization, ARecordOfThreeNodesIsNoPair) {
  Json three = pair_record("n0", "n1", 5.0);
  three["run_id"] = "run2";
  three["group_nodes"] = {"n0", "n1", "n2"};
  three["nranks"] = 3;
  three["nodes"] = 3;
  const std::vector<Json> records = {fixtures::run_record({"n0", "n1", "n2"}, "run2"), three};
  EXPECT_TRUE(localize_pairs(fixtures::evidence_of(records),
                             cluster_floor_baseline("    pairs: {floor_gb_per_s: 40}\n"))
                  .series.empty());
}

// Only the largest size is judged, even where a smaller one measured better.
TEST(PairLocalization, OnlyTheLargestSizeIsJudged) {
  std::vector<Json> records = shortfall_with_pairs(slow_n3);
  for (const std::string partner : {"n0", "n1", "n2", "n4", "n5"})
    records.push_back(pair_record("n3", partner, 48.0, false, 1 << 20));
  const PairLocalization pairs =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  ASSERT_EQ(pairs.verdicts.size(), 1u);
  EXPECT_EQ(pairs.verdicts[0].kind, PairVerdictKind::kUnresolved);
}

// A second run's verdict names its own run.
TEST(PairLocalization, AVerdictNamesItsOwnRun) {
  std::vector<Json> records = shortfall_with_pairs(healthy);
  records.push_back(fixtures::run_record(kNodes, "run2"));
  for (std::size_t i = 0; i < kNodes.size(); ++i) {
    for (std::size_t j = i + 1; j < kNodes.size(); ++j) {
      Json r = pair_record(kNodes[i], kNodes[j], slow_n3(kNodes[i], kNodes[j]));
      r["run_id"] = "run2";
      records.push_back(r);
    }
  }
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n3"), "localization.unresolved").message,
              HasSubstr("run run2"));
}

// Slow again with more known-good partners than it takes (three of five) is blamed all the same.
TEST(PairLocalization, SlowAgainWithMoreKnownGoodPartnersThanNeededIsBlamed) {
  auto records = shortfall_with_pairs(slow_n3);
  for (const std::string good : {"n0", "n1", "n2"})
    records.push_back(pair_record("n3", good, 20.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n3"});
}

// Fine with one known-good partner, a node works, however many others it was slow with: the
// path to them failed (Imbue's pass ratio).
TEST(PairLocalization, FineWithOneKnownGoodPartnerIsNotBlamedWhateverTheOthers) {
  auto records = shortfall_with_pairs(slow_n3);
  records.push_back(pair_record("n3", "n0", 20.0, true));
  records.push_back(pair_record("n3", "n1", 20.0, true));
  records.push_back(pair_record("n3", "n2", 47.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
}

// Re-tests count at the size the pairs were judged at: slow again at another size is no
// re-test of that measurement.
TEST(PairLocalization, ReTestsAtAnotherSizeDoNotCount) {
  auto records = shortfall_with_pairs(slow_n3);
  for (const std::string good : {"n0", "n1"})
    records.push_back(pair_record("n3", good, 20.0, true, 2 * kGiB));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n3"), "localization.unresolved").message,
              HasSubstr("not yet re-tested against a known-good node"));
}

// Where the run has one known-good node, slow again with it is enough to blame (three nodes:
// n1-n2 slow, n0 fine with both).
TEST(PairLocalization, WithOneKnownGoodNodeOneSlowReTestBlames) {
  const std::vector<std::string> three = {"n0", "n1", "n2"};
  std::vector<Json> records = {fixtures::run_record(three),   fixtures::collective(kGiB, 60.0),
                               pair_record("n0", "n1", 48.0), pair_record("n0", "n2", 48.0),
                               pair_record("n1", "n2", 12.0), pair_record("n2", "n0", 11.0, true)};
  const FleetVerdict verdict = fixtures::certify(
      fixtures::evidence_of(records), cluster_floor_baseline("    pairs: {floor_gb_per_s: 40}\n"));
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n2"});
}

// A node slow again with too few known-good partners does not end the judging of the others:
// n4, slow again with two, is blamed after n1, slow again with one.
TEST(PairLocalization, ANodeSlowAgainOnceDoesNotEndTheJudgingOfTheOthers) {
  auto records = shortfall_with_pairs(slow_pairs({"n1", "n4"}));
  records.push_back(pair_record("n1", "n0", 20.0, true));
  records.push_back(pair_record("n4", "n0", 20.0, true));
  records.push_back(pair_record("n4", "n2", 20.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n4"});
  EXPECT_EQ(fixtures::node(verdict, "n1").state, NodeState::kInconclusive);
}

// Two nodes slow again with two known-good partners each are both blamed.
TEST(PairLocalization, EveryNodeSlowAgainIsBlamed) {
  auto records = shortfall_with_pairs(slow_pairs({"n1", "n4"}));
  for (const std::string node : {"n1", "n4"}) {
    records.push_back(pair_record(node, "n0", 20.0, true));
    records.push_back(pair_record(node, "n2", 20.0, true));
  }
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined),
            (std::vector<std::string>{"n1", "n4"}));
}

// A node slow with most partners stays unresolved while one of its slow pairs is unexplained,
// even after the others were fine when measured again (with partners that are suspects
// themselves, so no re-test clears it): six nodes, n5 slow with all, links n0-n1 and n2-n3.
TEST(PairLocalization, ACandidateWithOneUnexplainedSlowPairStaysUnresolved) {
  auto records = shortfall_with_pairs(slow_pairs({"n5"}, {{"n0", "n1"}, {"n2", "n3"}}, 12.0));
  for (const std::string partner : {"n0", "n1", "n2", "n3"})
    records.push_back(pair_record("n5", partner, 47.0, true));
  const Evidence evidence = fixtures::evidence_of(records);
  const PairLocalization pairs = localize_pairs(evidence, cluster_floor_baseline());
  const PairVerdict* n5 = verdict_about(pairs, evidence, "n5");
  ASSERT_NE(n5, nullptr);
  EXPECT_EQ(n5->kind, PairVerdictKind::kUnresolved);
  EXPECT_EQ(n5->retest, "not yet re-tested against a known-good node");
}

// The run's first node, slow with every partner and not yet re-tested, is unresolved like any
// other; and where it is the end that passed with no partner, its pair is no link.
TEST(PairLocalization, TheRunsFirstNodeIsJudgedLikeAnyOther) {
  const FleetVerdict verdict = fixtures::certify(
      fixtures::evidence_of(shortfall_with_pairs(slow_pairs({"n0"}))), cluster_floor_baseline());
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n0"), "localization.unresolved").message,
              HasSubstr("slow with 5 of 5 partners"));
  const std::vector<std::string>& five = kFiveNodes;
  std::vector<Json> records = {fixtures::run_record(five), fixtures::collective(kGiB, 60.0)};
  for (std::size_t i = 1; i < five.size(); ++i) {
    for (std::size_t j = i + 1; j < five.size(); ++j)
      records.push_back(pair_record(five[i], five[j], 48.0));
  }
  records.push_back(pair_record("n0", "n1", 12.0));
  const PairLocalization lonely =
      localize_pairs(fixtures::evidence_of(records), cluster_floor_baseline());
  for (const auto& v : lonely.verdicts)
    EXPECT_NE(v.kind, PairVerdictKind::kSuspectLink);
  EXPECT_EQ(lonely.verdicts.size(), 2u);
}

// Only re-tests against known-good partners count: two slow nodes measured again with each
// other are not blamed for it.
TEST(PairLocalization, ReTestsWithSuspectsDoNotCount) {
  auto records = shortfall_with_pairs(slow_pairs({"n4", "n5"}));
  records.push_back(pair_record("n4", "n5", 20.0, true));
  records.push_back(pair_record("n4", "n0", 20.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_TRUE(fixtures::nodes_in(verdict, NodeState::kQuarantined).empty());
}

// A bad node's slow pair explains its partner's: a node slow with the bad node and on a link
// besides is judged on the link alone (six nodes: n5 slow with all and again with two known-good
// nodes, link n1-n2).
TEST(PairLocalization, ASlowPairWithABadNodeIsExplainedByIt) {
  auto records = shortfall_with_pairs(slow_pairs({"n5"}, {{"n1", "n2"}}, 12.0));
  records.push_back(pair_record("n5", "n0", 11.0, true));
  records.push_back(pair_record("n5", "n3", 11.0, true));
  const FleetVerdict verdict =
      fixtures::certify(fixtures::evidence_of(records), cluster_floor_baseline());
  EXPECT_EQ(fixtures::nodes_in(verdict, NodeState::kQuarantined), std::vector<std::string>{"n5"});
  EXPECT_TRUE(fixtures::has_code(fixtures::node(verdict, "n1"), "localization.suspect_link"));
  EXPECT_FALSE(fixtures::has_code(fixtures::node(verdict, "n1"), "localization.unresolved"));
}

// A link's end judged first does not end the judging of the other flagged nodes: n5, slow with
// all and not yet re-tested, is unresolved for that (six nodes, link n0-n1).
TEST(PairLocalization, EveryFlaggedNodeIsJudged) {
  const Evidence evidence =
      fixtures::evidence_of(shortfall_with_pairs(slow_pairs({"n5"}, {{"n0", "n1"}}, 12.0)));
  const PairLocalization pairs = localize_pairs(evidence, cluster_floor_baseline());
  const PairVerdict* n5 = verdict_about(pairs, evidence, "n5");
  ASSERT_NE(n5, nullptr);
  EXPECT_EQ(n5->retest, "not yet re-tested against a known-good node");
}

// A bad node slow in two collectives explains both collectives' shortfall, and noise in two
// collectives is reported with both figures.
TEST(PairLocalization, EveryCollectiveAVerdictShowsIsExplainedAndNoiseNamesEach) {
  std::vector<Json> records = {fixtures::run_record(kNodes)};
  for (std::size_t i = 0; i < kNodes.size(); ++i) {
    for (std::size_t j = i + 1; j < kNodes.size(); ++j) {
      const bool noise = is_link(kNodes[i], kNodes[j], "n0", "n1");
      const double figure = noise ? 12.0 : slow_n3(kNodes[i], kNodes[j]);
      records.push_back(pair_record(kNodes[i], kNodes[j], figure));
      records.push_back(sendrecv_pair(kNodes[i], kNodes[j], figure - 5.0));
    }
  }
  for (const std::string good : {"n2", "n4"}) {
    records.push_back(pair_record("n3", good, 20.0, true));
    records.push_back(sendrecv_pair("n3", good, 15.0, true));
  }
  records.push_back(pair_record("n0", "n1", 47.0, true));
  records.push_back(sendrecv_pair("n0", "n1", 42.0, true));
  const Baseline baseline = fixtures::baseline_of(
      "required: [collective.allreduce]\nfleet: {enabled: false}\n"
      "checks:\n  collective.allreduce: {min_bytes: 1G}\n"
      "  collective.sendrecv: {min_bytes: 1G}\n");
  const PairLocalization pairs = localize_pairs(fixtures::evidence_of(records), baseline);
  EXPECT_EQ(pairs.explained.size(), 2u);
  ASSERT_EQ(pairs.noise.size(), 1u);
  EXPECT_THAT(pairs.noise[0], HasSubstr("(allreduce 12 GB/s, sendrecv 7 GB/s)"));
}

}  // namespace
}  // namespace commcert
