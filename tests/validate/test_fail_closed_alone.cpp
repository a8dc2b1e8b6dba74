// Each fail-closed exclusion alone (issue 16 item 2): the excluded record is the node's only
// evidence, so nothing else can carry the verdict, and the node must be inconclusive. Each test
// first certifies the same fleet with the exclusion lifted, so it is the exclusion, not some
// other defect of the fixture, that keeps the node from being certified.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"

namespace commcert {
namespace {

// allreduce busbw judged from 1 GiB up, floor 100 GB/s: the fixtures' 400 GB/s passes it.
Baseline allreduce_with_floor() {
  return fixtures::baseline_of(
      "required: [collective.allreduce]\nchecks:\n  collective.allreduce:\n"
      "    min_bytes: 1073741824\n    busbw_gb_per_s:\n      node: {floor: 100}\n"
      "      cluster: {floor: 100}\n");
}

// n0's one node-scope allreduce of 1 GiB at 400 GB/s, changed by `exclude`.
Json only_record(const std::function<void(Json&)>& exclude) {
  Json r = fixtures::collective(std::uint64_t{1} << 30, 400, "node", "n0");
  exclude(r);
  return r;
}

NodeState state_of(const std::vector<Json>& records, const std::string& node = "n0") {
  const FleetVerdict v = fixtures::certify(fixtures::evidence_of(records), allreduce_with_floor());
  return fixtures::node(v, node).state;
}

TEST(FailClosedAlone, TheUnchangedRecordCertifiesTheNode) {
  EXPECT_EQ(state_of({only_record([](Json&) {})}), NodeState::kCertified);
}

TEST(FailClosedAlone, AOneRankCommunicatorHasNoBusBandwidth) {
  // nranks 1 (node scope, one GPU per node): busbw is 0 by definition and is not judged.
  Json two_ranks = only_record([](Json& r) { r["nranks"] = 2; });
  EXPECT_EQ(state_of({two_ranks}), NodeState::kCertified);
  EXPECT_EQ(state_of({only_record([](Json& r) { r["nranks"] = 1; })}), NodeState::kInconclusive);
}

TEST(FailClosedAlone, UncheckedOutputsAreNoEvidence) {
  EXPECT_EQ(state_of({only_record([](Json& r) { r["check"] = false; })}), NodeState::kInconclusive);
}

TEST(FailClosedAlone, SizesBelowTheBaselinesRangeAreNoEvidence) {
  // The same figure at 1 GiB - 4 bytes, one element below min_bytes.
  const auto below = [](Json& r) {
    r["bytes"] = (std::uint64_t{1} << 30) - 4;
    r["count"] = r["bytes"].get<std::uint64_t>() / 4;
  };
  EXPECT_EQ(state_of({only_record(below)}), NodeState::kInconclusive);
}

TEST(FailClosedAlone, ARecordFromAnotherRunIsNoEvidenceForANodeOutsideThatRun) {
  // run1 holds n0 and n1; run2 holds n1 and n2. A cluster allreduce that claims run2 names n0
  // among its group: n0 took no part in run2, so the record says nothing about n0.
  const auto cluster = [](const std::string& run) {
    Json c = fixtures::collective(std::uint64_t{1} << 30, 400, "cluster", "n1", {}, run);
    c["group_nodes"] = {"n0", "n1"};
    c["nranks"] = 2;
    c["nodes"] = 2;
    return c;
  };
  const Json run1 = fixtures::run_record({"n0", "n1"}, "run1");
  const Json run2 = fixtures::run_record({"n1", "n2"}, "run2");
  EXPECT_EQ(state_of({run1, run2, cluster("run1")}), NodeState::kCertified);
  EXPECT_EQ(state_of({run1, run2, cluster("run2")}), NodeState::kInconclusive);
  EXPECT_EQ(state_of({run1, run2, cluster("run2")}, "n1"), NodeState::kCertified);
}

}  // namespace
}  // namespace commcert
