// What commcert asks scontrol and reads from its answers, without a Slurm: the process-running
// half (slurm_client.cpp) is proven against a real Slurm by tests/integration/test_slurm_pool.py.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "pool/scontrol_answers.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

TEST(ScontrolAnswers, AsksForEveryNodeOneLineEach) {
  // -o: one line per node, which parse_scontrol_nodes relies on.
  EXPECT_EQ(show_nodes_command(), (std::vector<std::string>{"scontrol", "-o", "show", "node"}));
}

TEST(ScontrolAnswers, AMissingSlurmConfIsRefusedBeforeAskingAnExistingOneIsNot) {
  EXPECT_EQ(missing_slurm_conf(nullptr), std::nullopt);  // unset: Slurm's own default
  EXPECT_EQ(missing_slurm_conf(""), std::nullopt);
  test_support::TempDirectory dir;
  const std::string conf = (dir.path() / "slurm.conf").string();
  EXPECT_EQ(missing_slurm_conf(conf.c_str()),
            "SLURM_CONF=" + conf + ": no such file; Slurm cannot be reached from here");
  std::ofstream(conf) << "ClusterName=test\n";
  EXPECT_EQ(missing_slurm_conf(conf.c_str()), std::nullopt);
  // The path is the user's text: escaped, so the message stays one line.
  EXPECT_EQ(missing_slurm_conf("/no/such\nslurm.conf"),
            "SLURM_CONF=/no/such\\nslurm.conf: no such file; Slurm cannot be reached from here");
}

TEST(ScontrolAnswers, TheFailureLineIsTheLastFatalLineElseTheFirstLine) {
  EXPECT_EQ(scontrol_failure_line("scontrol: error: resolve_ctls_from_dns_srv: res_nsearch error\n"
                                  "fatal: Could not establish a configuration source\n"
                                  "fatal: Unable to process configuration file\n"),
            "fatal: Unable to process configuration file");
  EXPECT_EQ(scontrol_failure_line("\nslurm_load_node error: Unable to contact slurm controller\n"
                                  "second line\n"),
            "slurm_load_node error: Unable to contact slurm controller");
  EXPECT_EQ(scontrol_failure_line("only line, no newline"), "only line, no newline");
  EXPECT_EQ(scontrol_failure_line(""), "no message");
  EXPECT_EQ(scontrol_failure_line("\n\n"), "no message");
}

ProcessResult answered(int exit_code, std::string output, std::string error = "") {
  return {exit_code, false, std::move(output), std::move(error)};
}

TEST(ScontrolAnswers, ShowNodesFailsOnATimeoutOrANonZeroExitOnly) {
  EXPECT_EQ(show_nodes_failure(answered(0, "NodeName=n1 State=IDLE\n"), 30), std::nullopt);
  EXPECT_EQ(show_nodes_failure(answered(0, ""), 30), std::nullopt);  // no nodes is an answer
  EXPECT_EQ(show_nodes_failure({-1, true, "", ""}, 2.5),
            "scontrol show node timed out after 2.5 s (is slurmctld running?)");
  EXPECT_EQ(show_nodes_failure(answered(1, "", "fatal: no controller\n"), 30),
            "scontrol show node failed (exit 1): fatal: no controller");
  // Could not start (not installed): run_process says why in `error`.
  EXPECT_EQ(show_nodes_failure(answered(-1, "", "scontrol: No such file or directory"), 30),
            "scontrol show node failed (exit -1): scontrol: No such file or directory");
}

TEST(ScontrolAnswers, ReadsEveryNodeLineOfTheAnswer) {
  const auto nodes = parse_scontrol_nodes(
      "NodeName=node1 Arch=x86_64 State=IDLE Partitions=debug\n"
      "NodeName=node2 State=IDLE+DRAIN Reason=hw: fan [root@2026-11-22T01:00:00]\n"
      "\n"
      "No nodes in the system\n"
      "NodeName=node3 State=DOWN+DRAIN Reason=commcert: slow");  // no newline at the end
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes.at("node1").state, "IDLE");
  EXPECT_EQ(nodes.at("node2").reason, "hw: fan");
  EXPECT_TRUE(nodes.at("node3").drained_by_commcert());
  EXPECT_TRUE(parse_scontrol_nodes("").empty());
}

TEST(ScontrolAnswers, AFailedActionReportsATimeoutOrTheFirstLineOfItsError) {
  EXPECT_EQ(action_failure({-1, true, "", "partial\n"}), "timed out");
  EXPECT_EQ(action_failure(answered(1, "", "slurm_update error: Invalid node name\nmore\n")),
            "slurm_update error: Invalid node name");
  EXPECT_EQ(action_failure(answered(1, "", "Access denied")), "Access denied");
}

PoolAction action(PoolActionKind kind, std::string node, std::string reason = "",
                  std::string why = "") {
  PoolAction a;
  a.kind = kind;
  a.node = std::move(node);
  a.reason = std::move(reason);
  a.why = std::move(why);
  return a;
}

TEST(ScontrolAnswers, OneLinePerActionAsTheOperatorReadsIt) {
  const PoolAction drain = action(PoolActionKind::kDrain, "node3", "commcert: slow allreduce");
  const PoolAction resume = action(PoolActionKind::kResume, "node1");
  EXPECT_EQ(action_line(drain, ActionOutcome::kDone), "drain  node3: commcert: slow allreduce\n");
  EXPECT_EQ(action_line(resume, ActionOutcome::kDone), "resume node1\n");
  EXPECT_EQ(action_line(drain, ActionOutcome::kDryRun),
            "drain  node3: commcert: slow allreduce (dry run)\n");
  EXPECT_EQ(action_line(resume, ActionOutcome::kDryRun), "resume node1 (dry run)\n");
  EXPECT_EQ(action_line(drain, ActionOutcome::kFailed, "Access denied"),
            "FAILED drain  node3: Access denied\n");
  EXPECT_EQ(action_line(resume, ActionOutcome::kFailed, "timed out"),
            "FAILED resume node1: timed out\n");
}

TEST(ScontrolAnswers, ALeaveLineIsTheSameWhateverTheOutcomeAndEscapesItsText) {
  const PoolAction leave =
      action(PoolActionKind::kLeave, "node\n5", "", "inconclusive: neither drained nor resumed");
  for (const auto outcome : {ActionOutcome::kDryRun, ActionOutcome::kDone, ActionOutcome::kFailed})
    EXPECT_EQ(action_line(leave, outcome),
              "leave  node\\n5: inconclusive: neither drained nor "
              "resumed\n");
}

TEST(ScontrolAnswers, AMissingSlurmConfWhoseNameIsNotAsciiIsRefusedToo) {
  // A relative path in UTF-8 starts with a byte above 127 (a negative char here): it is a path
  // like any other, not "unset".
  const std::string relative = "\xc3\xa9t\xc3\xa9/no-such-slurm.conf";
  EXPECT_NE(missing_slurm_conf(relative.c_str()), std::nullopt);
}

TEST(ScontrolAnswers, EachNodeLineIsReadAloneAndKeepsItsOwnStateAndReason) {
  // A node without a reason followed by one commcert drained: node1 must not take node2's
  // state or reason (it would read as drained by commcert, and be resumed).
  const auto nodes = parse_scontrol_nodes(
      "NodeName=node0 State=ALLOCATED\n"
      "NodeName=node1 State=IDLE\n"
      "NodeName=node2 State=IDLE+DRAIN Reason=commcert: slow [root@2026-11-26T10:00:00]\n");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes.at("node1").state, "IDLE");
  EXPECT_EQ(nodes.at("node1").reason, "");
  EXPECT_FALSE(nodes.at("node1").drained_by_commcert());
  EXPECT_EQ(nodes.at("node2").reason, "commcert: slow");
}

// Names that are prefixes, suffixes or substrings of each other, and an FQDN beside its short
// name, are different nodes: each keeps its own state, and a drain or resume names exactly the
// node the verdict names (an FQDN in a verdict is not Slurm's short-named node: left alone).
TEST(ScontrolAnswers, LookalikeNodeNamesAreDifferentNodes) {
  const auto nodes = parse_scontrol_nodes(
      "NodeName=node10 State=IDLE+DRAIN Reason=commcert: slow [root@t]\n"
      "NodeName=node1 State=IDLE\n"
      "NodeName=node100 State=IDLE+DRAIN Reason=hw: fan [root@t]\n"
      "NodeName=gpu-a1 State=IDLE\n"
      "NodeName=gpu-a10 State=IDLE+DRAIN Reason=commcert: x [root@t]\n"
      "NodeName=xn1 State=IDLE\n"
      "NodeName=n1 State=IDLE+DRAIN Reason=commcert: y [root@t]\n");
  ASSERT_EQ(nodes.size(), 7u);
  EXPECT_FALSE(nodes.at("node1").drained());
  EXPECT_TRUE(nodes.at("node10").drained_by_commcert());
  EXPECT_EQ(nodes.at("node100").reason, "hw: fan");
  EXPECT_FALSE(nodes.at("gpu-a1").drained());
  EXPECT_FALSE(nodes.at("xn1").drained());
  EXPECT_TRUE(nodes.at("n1").drained_by_commcert());

  const auto actions =
      plan_slurm_actions({{"node10", NodeDecisionState::kQuarantined, "allreduce slow"},
                          {"node1", NodeDecisionState::kCertified, ""},
                          {"gpu-a10", NodeDecisionState::kCertified, ""},
                          {"xn1", NodeDecisionState::kQuarantined, "bad"},
                          {"node1.cluster.local", NodeDecisionState::kQuarantined, "bad"}},
                         nodes);
  ASSERT_EQ(actions.size(), 5u);
  EXPECT_EQ(actions[0].kind, PoolActionKind::kDrain);
  EXPECT_EQ(actions[0].command.at(2), "NodeName=node10");
  EXPECT_EQ(actions[1].kind, PoolActionKind::kLeave);  // node1 in service, not node10's drain
  EXPECT_EQ(actions[2].kind, PoolActionKind::kResume);
  EXPECT_EQ(actions[2].command.at(2), "NodeName=gpu-a10");
  EXPECT_EQ(actions[3].kind, PoolActionKind::kDrain);
  EXPECT_EQ(actions[3].command.at(2), "NodeName=xn1");  // not n1, drained already
  EXPECT_EQ(actions[4].kind, PoolActionKind::kLeave);
  EXPECT_EQ(actions[4].why, "not a Slurm node here");
}

// A NodeName that is no valid node name (the check of --node-name) is one error naming its
// line, never a name changed into another that could be a different node's.
TEST(ScontrolAnswers, ANodeNameThatIsNoValidNodeNameIsAnErrorNamingItsLine) {
  const std::string good = "NodeName=node1 State=IDLE\n";
  for (const std::string& bad : std::vector<std::string>{
           "node1;reboot", "-node1", ".node1", "node\x1b[2J", "n\tState=X", std::string(65, 'n')}) {
    try {
      (void)parse_scontrol_nodes(good + "\nNodeName=" + bad + " State=IDLE\n");
      ADD_FAILURE() << bad;
    } catch (const RuntimeFailure& error) {
      const std::string what = error.what();
      EXPECT_NE(what.find("from scontrol show node, line 3: "), std::string::npos) << what;
      EXPECT_EQ(what.find_first_of("\n\x1b\t"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace commcert
