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

// The cut keeps the prefix and the reason's start; a reason exactly at the length limit is whole.
// DEL (0x7f) is a control character; leading whitespace adds no space after the prefix.
TEST(SlurmReason, TheLimitAndTheEdgesOfPrintable) {
  const std::string exact(kMaxReasonLength - kReasonPrefix.size(), 'x');
  EXPECT_EQ(slurm_reason(exact), std::string(kReasonPrefix) + exact);
  const std::string cut = slurm_reason(exact + "y");
  EXPECT_EQ(cut.size(), kMaxReasonLength);
  EXPECT_TRUE(cut.starts_with("commcert: xxx"));
  EXPECT_EQ(slurm_reason("a\x7f"
                         "b"),
            "commcert: a b");
  EXPECT_EQ(slurm_reason("  \tleading"), "commcert: leading");
}

// Every decision of one plan gets its action and the words `commcert pool plan` prints for it.
TEST(PlanSlurmActions, EveryDecisionIsPlannedAndSaysWhy) {
  struct Case {
    std::string node;
    NodeDecisionState state;
    SlurmNodeStatus status;
    PoolActionKind kind;
    std::string why;
  };
  using enum NodeDecisionState;
  const std::vector<Case> cases = {
      {"q-idle", kQuarantined, {"IDLE", ""}, PoolActionKind::kDrain, "quarantined"},
      {"q-stale",
       kQuarantined,
       {"IDLE", "commcert: bad"},
       PoolActionKind::kDrain,
       "quarantined"},  // a commcert reason on a node in service is no drain
      {"q-other",
       kQuarantined,
       {"IDLE+DRAIN", "fan replacement"},
       PoolActionKind::kLeave,
       "already drained by someone else (fan replacement); their reason is kept"},
      {"q-anon",
       kQuarantined,
       {"DOWN+DRAIN", ""},
       PoolActionKind::kLeave,
       "already drained by someone else (no reason); their reason is kept"},
      {"q-same",
       kQuarantined,
       {"IDLE+DRAIN", "commcert: bad"},
       PoolActionKind::kLeave,
       "already drained for this reason"},
      {"q-newer",
       kQuarantined,
       {"IDLE+DRAIN", "commcert: bac"},
       PoolActionKind::kDrain,
       "quarantined"},
      {"c-ours",
       kCertified,
       {"IDLE+DRAIN", "commcert: gpu 0 slow"},
       PoolActionKind::kResume,
       "certified; it was drained by commcert"},
      {"c-failed",
       kCertified,
       {"IDLE+FAIL", "commcert: gpu 0 slow"},
       PoolActionKind::kResume,
       "certified; it was drained by commcert"},
      {"c-other",
       kCertified,
       {"IDLE+DRAIN", "NHC: check_fs_mount failed"},
       PoolActionKind::kLeave,
       "certified, but drained by someone else (NHC: check_fs_mount failed); left drained"},
      {"c-anon",
       kCertified,
       {"IDLE+DRAIN", ""},
       PoolActionKind::kLeave,
       "certified, but drained by someone else (no reason); left drained"},
      {"c-idle",
       kCertified,
       {"IDLE", "commcert: stale"},
       PoolActionKind::kLeave,
       "certified; in service"},
      {"i-ours",
       kInconclusive,
       {"IDLE+DRAIN", "commcert: bad"},
       PoolActionKind::kLeave,
       "inconclusive: neither drained nor resumed"},
  };
  // The two left alone come before any judged node: neither ends the plan.
  std::vector<NodeDecision> decisions = {
      decide("n1;reboot", NodeDecisionState::kQuarantined, "bad"),
      decide("ghost", NodeDecisionState::kQuarantined, "bad")};
  std::map<std::string, SlurmNodeStatus> current;
  for (const auto& c : cases) {
    decisions.push_back(decide(c.node, c.state, "bad"));
    current[c.node] = c.status;
  }
  const auto actions = plan_slurm_actions(decisions, current);
  ASSERT_EQ(actions.size(), cases.size() + 2);
  EXPECT_EQ(actions[0].node, "n1;reboot");
  EXPECT_EQ(actions[0].why.rfind("invalid node name 'n1;reboot' from the verdict: ", 0), 0u);
  EXPECT_EQ(actions[1].node, "ghost");
  EXPECT_EQ(actions[1].why, "not a Slurm node here");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].node);
    EXPECT_EQ(actions[i + 2].node, cases[i].node);
    EXPECT_EQ(actions[i + 2].kind, cases[i].kind);
    EXPECT_EQ(actions[i + 2].why, cases[i].why);
    EXPECT_EQ(actions[i + 2].command.empty(), cases[i].kind == PoolActionKind::kLeave);
  }
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
  // Fields are separated by spaces: "State=" after a tab is inside another field's value.
  const auto tabbed = parse_scontrol_node("NodeName=node3 Comment=a\tState=DOWN State=IDLE");
  ASSERT_TRUE(tabbed);
  EXPECT_EQ(tabbed->second.state, "IDLE");
}

TEST(ParseScontrolNode, ANullReasonIsNoReason) {
  // scontrol prints Reason=(null) for a node nobody gave a reason.
  const auto parsed = parse_scontrol_node("NodeName=node4 State=IDLE+DRAIN Reason=(null)");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->second.reason, "");
  EXPECT_FALSE(parsed->second.drained_by_commcert());
}

// Values are read whole (a long name, one at the end of the line), a name that is empty is no
// node, trailing spaces before the stamp are dropped (all of them, down to none), and only the
// literal "(null)" is no reason.
TEST(ParseScontrolNode, ValuesAreReadWholeAndReasonsTrimmed) {
  const auto long_name = parse_scontrol_node("NodeName=gpu-node-with-a-long-name-0042 State=IDLE");
  ASSERT_TRUE(long_name);
  EXPECT_EQ(long_name->first, "gpu-node-with-a-long-name-0042");
  const auto at_end = parse_scontrol_node("State=IDLE NodeName=node-at-the-end");
  ASSERT_TRUE(at_end);
  EXPECT_EQ(at_end->first, "node-at-the-end");
  EXPECT_FALSE(parse_scontrol_node("NodeName= State=IDLE"));
  const auto spaced = parse_scontrol_node("NodeName=n State=IDLE+DRAIN Reason=fan   [root@t]");
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->second.reason, "fan");
  const auto blank = parse_scontrol_node("NodeName=n State=IDLE+DRAIN Reason=   [root@t]");
  ASSERT_TRUE(blank);
  EXPECT_EQ(blank->second.reason, "");
  const auto parenthesised =
      parse_scontrol_node("NodeName=n State=IDLE+DRAIN Reason=(broken fan) [root@t]");
  ASSERT_TRUE(parenthesised);
  EXPECT_EQ(parenthesised->second.reason, "(broken fan)");
}

}  // namespace
}  // namespace commcert
