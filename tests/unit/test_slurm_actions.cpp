#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pool/slurm_actions.hpp"

namespace commcert {
namespace {

NodeDecision decide(const std::string& node, NodeDecisionState state,
                    const std::string& reason = "") {
  return {node, state, reason};
}

PoolAction only(const std::vector<PoolAction>& actions) {
  EXPECT_EQ(actions.size(), 1u);
  return actions.front();
}

TEST(SlurmReason, PrefixedPrintableCollapsedAndCut) {
  EXPECT_EQ(slurm_reason("gpu 3: 12 remapped-row failures"),
            "commcert: gpu 3: 12 remapped-row failures");
  EXPECT_EQ(slurm_reason("line one\nline\ttwo  \x01 end"), "commcert: line one line two end");
  EXPECT_EQ(slurm_reason("caf\xc3\xa9"), "commcert: caf");
  const std::string cut = slurm_reason(std::string(500, 'x'));
  EXPECT_EQ(cut.size(), kMaxReasonLength);
  EXPECT_TRUE(cut.ends_with("..."));
}

TEST(PlanSlurmActions, QuarantinedNodeIsDrainedWithACommcertReason) {
  const auto action = only(plan_slurm_actions(
      {decide("node2", NodeDecisionState::kQuarantined, "allreduce: 340 wrong elements on rank 2")},
      {{"node2", {"IDLE", ""}}}));
  EXPECT_EQ(action.kind, PoolActionKind::kDrain);
  EXPECT_EQ(action.reason, "commcert: allreduce: 340 wrong elements on rank 2");
  EXPECT_EQ(action.command,
            (std::vector<std::string>{"scontrol", "update", "NodeName=node2", "State=DRAIN",
                                      "Reason=commcert: allreduce: 340 wrong elements on rank 2"}));
}

TEST(PlanSlurmActions, NodeDrainedBySomeoneElseKeepsTheirReason) {
  const auto& action =
      only(plan_slurm_actions({decide("node3", NodeDecisionState::kQuarantined, "bad")},
                              {{"node3", {"IDLE+DRAIN", "fan replacement"}}}));
  EXPECT_EQ(action.kind, PoolActionKind::kLeave);
  EXPECT_NE(action.why.find("fan replacement"), std::string::npos);
}

TEST(PlanSlurmActions, CommcertDrainIsUpdatedOnlyWhenTheReasonChanged) {
  EXPECT_EQ(only(plan_slurm_actions({decide("n", NodeDecisionState::kQuarantined, "old")},
                                    {{"n", {"IDLE+DRAIN", "commcert: old"}}}))
                .kind,
            PoolActionKind::kLeave);
  EXPECT_EQ(only(plan_slurm_actions({decide("n", NodeDecisionState::kQuarantined, "new")},
                                    {{"n", {"IDLE+DRAIN", "commcert: old"}}}))
                .kind,
            PoolActionKind::kDrain);
}

TEST(PlanSlurmActions, CertifiedNodeIsResumedOnlyFromACommcertDrain) {
  const auto resumed = only(plan_slurm_actions({decide("n1", NodeDecisionState::kCertified)},
                                               {{"n1", {"IDLE+DRAIN", "commcert: gpu 0 slow"}}}));
  EXPECT_EQ(resumed.kind, PoolActionKind::kResume);
  EXPECT_EQ(resumed.command,
            (std::vector<std::string>{"scontrol", "update", "NodeName=n1", "State=RESUME"}));
  EXPECT_EQ(only(plan_slurm_actions({decide("n1", NodeDecisionState::kCertified)},
                                    {{"n1", {"IDLE+DRAIN", "NHC: check_fs_mount failed"}}}))
                .kind,
            PoolActionKind::kLeave);
  EXPECT_EQ(only(plan_slurm_actions({decide("n1", NodeDecisionState::kCertified)},
                                    {{"n1", {"IDLE+DRAIN", ""}}}))
                .kind,
            PoolActionKind::kLeave);  // drained with no reason: a person did it
  EXPECT_EQ(only(plan_slurm_actions({decide("n1", NodeDecisionState::kCertified)},
                                    {{"n1", {"IDLE", ""}}}))
                .kind,
            PoolActionKind::kLeave);
}

TEST(PlanSlurmActions, InconclusiveNodesAreNeverResumedNorDrained) {
  for (const SlurmNodeStatus& status :
       {SlurmNodeStatus{"IDLE+DRAIN", "commcert: earlier fault"}, SlurmNodeStatus{"IDLE", ""}}) {
    const auto action = only(plan_slurm_actions(
        {decide("n", NodeDecisionState::kInconclusive, "no burn record")}, {{"n", status}}));
    EXPECT_EQ(action.kind, PoolActionKind::kLeave);
    EXPECT_TRUE(action.command.empty());
  }
}

TEST(PlanSlurmActions, UnknownOrInvalidNodeNamesAreLeftAlone) {
  const auto actions =
      plan_slurm_actions({decide("ghost", NodeDecisionState::kQuarantined, "x"),
                          decide("n1;reboot", NodeDecisionState::kQuarantined, "x")},
                         {{"n1", {"IDLE", ""}}});
  ASSERT_EQ(actions.size(), 2u);
  for (const auto& action : actions) {
    EXPECT_EQ(action.kind, PoolActionKind::kLeave);
    EXPECT_TRUE(action.command.empty());
  }
  EXPECT_NE(actions[1].why.find("invalid node name"), std::string::npos);
}

TEST(ParseScontrolNode, ReadsStateAndFreeTextReason) {
  const auto parsed = parse_scontrol_node(
      "NodeName=node2 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=IDLE+DRAIN ThreadsPerCore=1 "
      "Partitions=debug Reason=commcert: allreduce 64 KiB: 340 wrong elements "
      "[root@2026-11-22T01:00:00]");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, "node2");
  EXPECT_EQ(parsed->second.state, "IDLE+DRAIN");
  EXPECT_EQ(parsed->second.reason, "commcert: allreduce 64 KiB: 340 wrong elements");
  EXPECT_TRUE(parsed->second.drained_by_commcert());

  const auto idle = parse_scontrol_node("NodeName=node1 State=IDLE Partitions=debug");
  ASSERT_TRUE(idle);
  EXPECT_EQ(idle->second.reason, "");
  EXPECT_FALSE(idle->second.drained());
  EXPECT_FALSE(parse_scontrol_node("No nodes in the system"));
}

TEST(ParseScontrolNode, AKeyIsMatchedOnlyAtAFieldBoundary) {
  // "State=" also ends "NextState=": the node's state is the field of its own, wherever the
  // other one stands; a key found only inside other fields is absent.
  const auto parsed =
      parse_scontrol_node("NodeName=node3 NextState=RESUME State=DOWN+DRAIN Partitions=debug");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->second.state, "DOWN+DRAIN");
  const auto without = parse_scontrol_node("NodeName=node3 NextState=RESUME Partitions=debug");
  ASSERT_TRUE(without);
  EXPECT_EQ(without->second.state, "");
  EXPECT_FALSE(parse_scontrol_node("OldNodeName=node3 State=IDLE"));
}

TEST(ParseScontrolNode, ANullReasonIsNoReason) {
  // scontrol prints Reason=(null) for a node nobody gave a reason.
  const auto parsed = parse_scontrol_node("NodeName=node4 State=IDLE+DRAIN Reason=(null)");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->second.reason, "");
  EXPECT_FALSE(parsed->second.drained_by_commcert());
}

}  // namespace
}  // namespace commcert
