// The thin part that runs processes, without a Slurm: a dry run runs nothing, and each action's
// argument vector is run as given (here plain programs stand for scontrol's success, refusal and
// hang, and a fake `scontrol` first on PATH records the arguments it was given and answers as
// scontrol does). The real scontrol is tested by tests/integration/test_slurm_pool.py.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "pool/scontrol_answers.hpp"
#include "pool/slurm_actions.hpp"
#include "pool/slurm_client.hpp"
#include "scoped_environment.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using test_support::ScopedEnvironment;

PoolAction action(PoolActionKind kind, std::string node, std::vector<std::string> command,
                  std::string reason = "", std::string why = "") {
  PoolAction a;
  a.kind = kind;
  a.node = std::move(node);
  a.command = std::move(command);
  a.reason = std::move(reason);
  a.why = std::move(why);
  return a;
}

// What apply_slurm_actions printed, and what it returned.
struct Applied {
  std::vector<AppliedAction> results;
  std::string printed;
};

Applied apply(const std::vector<PoolAction>& actions, bool dry_run, double timeout = 30) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::tmpfile(), &std::fclose);
  Applied applied;
  applied.results = apply_slurm_actions(actions, dry_run, out.get(), timeout);
  std::rewind(out.get());
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, out.get()) != nullptr)
    applied.printed += buffer;
  return applied;
}

TEST(ApplySlurmActions, ADryRunRunsNothingAndSaysSoForEveryAction) {
  // `false` would fail every action if it were run.
  const Applied applied = apply({action(PoolActionKind::kDrain, "node3", {"false"}, "commcert: x"),
                                 action(PoolActionKind::kResume, "node1", {"false"}),
                                 action(PoolActionKind::kLeave, "node2", {}, "", "inconclusive")},
                                true);
  EXPECT_EQ(applied.printed,
            "drain  node3: commcert: x (dry run)\nresume node1 (dry run)\nleave  node2: "
            "inconclusive\n");
  ASSERT_EQ(applied.results.size(), 3u);
  for (const auto& result : applied.results)
    EXPECT_TRUE(result.ok) << result.action.node;
}

TEST(ApplySlurmActions, RunsEachCommandAndReportsEachFailureWithoutStopping) {
  const Applied applied = apply(
      {action(PoolActionKind::kDrain, "node3",
              {"sh", "-c", "echo 'Access denied' >&2; echo second >&2; exit 1"}, "commcert: x"),
       action(PoolActionKind::kResume, "node1", {"true"}),
       action(PoolActionKind::kLeave, "node2", {"false"}, "", "certified; in service")},
      false);
  EXPECT_EQ(applied.printed,
            "FAILED drain  node3: Access denied\nresume node1\nleave  node2: certified; in "
            "service\n");
  ASSERT_EQ(applied.results.size(), 3u);
  EXPECT_FALSE(applied.results[0].ok);
  EXPECT_EQ(applied.results[0].error, "Access denied");
  EXPECT_TRUE(applied.results[1].ok);
  EXPECT_TRUE(applied.results[2].ok);  // leaving a node alone runs nothing, not even `false`
}

TEST(ApplySlurmActions, AnActionPastItsTimeoutFailsAsTimedOut) {
  const Applied applied =
      apply({action(PoolActionKind::kResume, "node1", {"sleep", "30"})}, false, 0.2);
  ASSERT_EQ(applied.results.size(), 1u);
  EXPECT_FALSE(applied.results[0].ok);
  EXPECT_EQ(applied.results[0].error, "timed out");
  EXPECT_EQ(applied.printed, "FAILED resume node1: timed out\n");
}

TEST(QuerySlurmNodes, AMissingSlurmConfIsRefusedWithoutRunningScontrol) {
  test_support::TempDirectory dir;
  const std::string conf = (dir.path() / "slurm.conf").string();
  const char* before = std::getenv("SLURM_CONF");
  const std::string saved = before ? before : "";
  ::setenv("SLURM_CONF", conf.c_str(), 1);
  try {
    (void)query_slurm_nodes(5);
    ADD_FAILURE() << "no RuntimeFailure";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()),
              "SLURM_CONF=" + conf + ": no such file; Slurm cannot be reached from here");
  }
  if (before) {
    ::setenv("SLURM_CONF", saved.c_str(), 1);
  } else {
    ::unsetenv("SLURM_CONF");
  }
}

TEST(QuerySlurmNodes, AnScontrolThatRefusesIsAnErrorNotAnEmptyPool) {
  // A program named scontrol, first on PATH, answers as scontrol does when slurmctld is down.
  // Read as an empty answer, `commcert pool` would find no node to drain or resume and report
  // success; the user must see the refusal instead.
  test_support::TempDirectory dir;
  const auto scontrol = dir.path() / "scontrol";
  {
    std::ofstream script(scontrol);
    script << "#!/bin/sh\necho 'slurm_load_node error: Unable to contact slurm controller' >&2\n"
              "exit 1\n";
  }
  std::filesystem::permissions(scontrol, std::filesystem::perms::owner_all);
  const char* path = std::getenv("PATH");
  ScopedEnvironment on_path("PATH", dir.path().string() + ":" + (path ? path : "/usr/bin:/bin"));
  ScopedEnvironment no_conf("SLURM_CONF", "");
  try {
    (void)query_slurm_nodes(30);
    ADD_FAILURE() << "no RuntimeFailure";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()),
              "scontrol show node failed (exit 1): slurm_load_node error: Unable to contact "
              "slurm controller");
  }
}

TEST(ApplySlurmActions, WhatWasDoneIsWrittenOutBeforeItReturns) {
  // The lines reach the file itself, not only the stream's buffer: what the pool did to Slurm
  // is on record even if the process is killed right after (the file descriptor is read
  // directly, bypassing the stream).
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::tmpfile(), &std::fclose);
  (void)apply_slurm_actions({action(PoolActionKind::kResume, "node1", {"true"})}, false, out.get(),
                            30);
  char buffer[64] = {};
  const ssize_t read = ::pread(::fileno(out.get()), buffer, sizeof buffer - 1, 0);
  EXPECT_EQ(std::string(buffer, read > 0 ? static_cast<std::size_t>(read) : 0), "resume node1\n");
}

// A program named scontrol, first on PATH for the test's lifetime: it appends its arguments
// (NUL-separated, one call per line) to calls.log, prints `answer` on stdout and `error` on
// stderr, and exits with `status`; or, given `sleep`, sleeps that long instead of answering.
class FakeScontrol {
 public:
  explicit FakeScontrol(const std::string& answer, int status = 0, const std::string& error = "",
                        double sleep = 0)
      : no_conf_("SLURM_CONF", "") {
    std::ofstream(dir_.path() / "answer.txt") << answer;
    std::ofstream(dir_.path() / "error.txt") << error;
    const auto script = dir_.path() / "scontrol";
    {
      std::ofstream out(script);
      // exec: a timed-out scontrol is killed itself, not a shell whose child keeps the pipes.
      out << "#!/bin/sh\n"
          << "for a in \"$@\"; do printf '%s\\000' \"$a\"; done >> '" << calls_path().string()
          << "'\nprintf '\\n' >> '" << calls_path().string() << "'\n"
          << (sleep > 0 ? "exec sleep " + std::to_string(sleep) + "\n" : "") << "cat '"
          << (dir_.path() / "answer.txt").string() << "'\n"
          << "cat '" << (dir_.path() / "error.txt").string() << "' >&2\n"
          << "exit " << status << "\n";
    }
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const char* path = std::getenv("PATH");
    on_path_ = std::make_unique<ScopedEnvironment>(
        "PATH", dir_.path().string() + ":" + (path ? path : "/usr/bin:/bin"));
  }

  // Every call's argument vector, in order.
  [[nodiscard]] std::vector<std::vector<std::string>> calls() const {
    std::vector<std::vector<std::string>> calls;
    std::ifstream in(calls_path());
    for (std::string line; std::getline(in, line);) {
      std::vector<std::string> args;
      std::stringstream fields(line);
      for (std::string arg; std::getline(fields, arg, '\0');)
        args.push_back(arg);
      calls.push_back(args);
    }
    return calls;
  }
  [[nodiscard]] const std::filesystem::path& directory() const { return dir_.path(); }

 private:
  [[nodiscard]] std::filesystem::path calls_path() const { return dir_.path() / "calls.log"; }

  test_support::TempDirectory dir_;
  ScopedEnvironment no_conf_;
  std::unique_ptr<ScopedEnvironment> on_path_;
};

using Argv = std::vector<std::string>;

TEST(QuerySlurmNodes, AnAnswerWithoutANodeIsAnErrorNotAnEmptyPool) {
  for (const char* answer : {"", "\n", "No nodes in the system\n"}) {
    SCOPED_TRACE(answer);
    const FakeScontrol scontrol(answer);
    try {
      (void)query_slurm_nodes(30);
      ADD_FAILURE() << "no RuntimeFailure";
    } catch (const RuntimeFailure& e) {
      EXPECT_EQ(std::string(e.what()),
                "scontrol show node listed no node: nothing can be drained or resumed from here "
                "(is SLURM_CONF this cluster's?)");
    }
  }
  // One node is a pool.
  const FakeScontrol one("NodeName=node1 State=IDLE\n");
  EXPECT_EQ(query_slurm_nodes(30).size(), 1u);
}

TEST(QuerySlurmNodes, AsksScontrolForEveryNodeOnOneLineAndReadsTheAnswer) {
  const FakeScontrol scontrol(
      "NodeName=node1 Arch=x86_64 CoresPerSocket=8 State=IDLE ThreadsPerCore=1\n"
      "NodeName=node2 Arch=x86_64 State=IDLE+DRAIN Reason=commcert: busbw 12 GB/s "
      "[root@2026-01-01T00:00:00]\n"
      "\n"
      "no node here\n");
  const auto nodes = query_slurm_nodes(30);
  EXPECT_EQ(scontrol.calls(), (std::vector<Argv>{{"-o", "show", "node"}}));
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes.at("node1").state, "IDLE");
  EXPECT_EQ(nodes.at("node1").reason, "");
  EXPECT_EQ(nodes.at("node2").state, "IDLE+DRAIN");
  EXPECT_EQ(nodes.at("node2").reason, "commcert: busbw 12 GB/s");
  EXPECT_TRUE(nodes.at("node2").drained_by_commcert());
}

// node1 and node10 are two nodes: neither is read, drained or resumed as the other.
TEST(QuerySlurmNodes, NodesAreKnownByTheirExactNames) {
  const FakeScontrol scontrol(
      "NodeName=node10 State=IDLE+DRAIN Reason=commcert: old [root@2026-01-01T00:00:00]\n"
      "NodeName=node1 State=IDLE\n"
      "NodeName=node100 State=ALLOCATED\n");
  const auto nodes = query_slurm_nodes(30);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes.count("node"), 0u);
  EXPECT_EQ(nodes.at("node1").state, "IDLE");
  EXPECT_EQ(nodes.at("node10").state, "IDLE+DRAIN");
  EXPECT_EQ(nodes.at("node100").state, "ALLOCATED");

  // node1 quarantined, node10 certified: node1 is drained and node10 resumed, each by its own
  // name; node11, which Slurm does not know, is left alone though node1 and node10 are known.
  const auto actions =
      plan_slurm_actions({{"node1", NodeDecisionState::kQuarantined, "busbw 3 GB/s"},
                          {"node10", NodeDecisionState::kCertified, ""},
                          {"node11", NodeDecisionState::kQuarantined, "x"}},
                         nodes);
  const Applied applied = apply(actions, false);
  const std::vector<Argv> calls = scontrol.calls();
  ASSERT_EQ(calls.size(), 3u);  // the query, then one call per action
  EXPECT_EQ(calls[1],
            (Argv{"update", "NodeName=node1", "State=DRAIN", "Reason=commcert: busbw 3 GB/s"}));
  EXPECT_EQ(calls[2], (Argv{"update", "NodeName=node10", "State=RESUME"}));
  EXPECT_EQ(applied.printed,
            "drain  node1: commcert: busbw 3 GB/s\nresume node10\nleave  node11: not a Slurm "
            "node here\n");
}

// A reason reaches scontrol as one argument, with no shell to read it: quotes, `;`, `$( )` and
// backquotes are characters; line breaks and control characters are one space; and the reason is
// cut to 200 characters ("commcert: " included), at the limit and one either side.
TEST(ApplySlurmActions, AReasonIsOneArgumentNeverReadByAShellAndCutAtItsLimit) {
  const FakeScontrol scontrol("");
  const std::string marker = (scontrol.directory() / "ran").string();
  const std::string hostile = "it's \"bad\"; touch " + marker + " $(touch " + marker + ") `touch " +
                              marker + "`\nnext\tline\x01|&<>";
  const std::map<std::string, SlurmNodeStatus> idle = {{"node1", {"IDLE", ""}},
                                                       {"node2", {"IDLE", ""}},
                                                       {"node3", {"IDLE", ""}},
                                                       {"node4", {"IDLE", ""}}};
  const std::size_t room = kMaxReasonLength - kReasonPrefix.size();  // 190 characters of text
  const auto actions =
      plan_slurm_actions({{"node1", NodeDecisionState::kQuarantined, hostile},
                          {"node2", NodeDecisionState::kQuarantined, std::string(room - 1, 'a')},
                          {"node3", NodeDecisionState::kQuarantined, std::string(room, 'b')},
                          {"node4", NodeDecisionState::kQuarantined, std::string(room + 1, 'c')}},
                         idle);
  const Applied applied = apply(actions, false);
  const std::vector<Argv> calls = scontrol.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0], (Argv{"update", "NodeName=node1", "State=DRAIN",
                            "Reason=commcert: it's \"bad\"; touch " + marker + " $(touch " +
                                marker + ") `touch " + marker + "` next line |&<>"}));
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_EQ(calls[1][3], "Reason=commcert: " + std::string(room - 1, 'a'));
  EXPECT_EQ(calls[2][3], "Reason=commcert: " + std::string(room, 'b'));
  EXPECT_EQ(calls[2][3].size(), kMaxReasonLength + std::string("Reason=").size());
  EXPECT_EQ(calls[3][3], "Reason=commcert: " + std::string(room - 3, 'c') + "...");
  EXPECT_EQ(calls[3][3].size(), kMaxReasonLength + std::string("Reason=").size());
  for (const auto& result : applied.results)
    EXPECT_TRUE(result.ok) << result.action.node;
}

// A node name with shell metacharacters (from an edited verdict, or answered by scontrol) is not
// a node name: it is left alone, and scontrol is never run for it.
TEST(ApplySlurmActions, NodeNamesWithShellMetacharactersAreRefusedAndRunNothing) {
  const FakeScontrol scontrol("");
  std::map<std::string, SlurmNodeStatus> current;
  std::vector<NodeDecision> decisions;
  for (const std::string name :
       {"node1;reboot", "node1 node2", "$(reboot)", "`id`", "node1|x", "node1&", "-node1",
        "node1\nnode2", "node1>x", "node*", "node'1"}) {
    current[name] = {"IDLE+DRAIN", "commcert: x"};
    decisions.push_back({name, NodeDecisionState::kQuarantined, "y"});
    decisions.push_back({name, NodeDecisionState::kCertified, ""});
  }
  const auto actions = plan_slurm_actions(decisions, current);
  ASSERT_EQ(actions.size(), decisions.size());
  for (const auto& action : actions) {
    EXPECT_EQ(action.kind, PoolActionKind::kLeave) << action.node;
    EXPECT_TRUE(action.command.empty()) << action.node;
    EXPECT_NE(action.why.find("invalid node name"), std::string::npos) << action.why;
  }
  const Applied applied = apply(actions, false);
  EXPECT_TRUE(scontrol.calls().empty());
  // Each stays one line on the operator's output, the newline escaped.
  EXPECT_EQ(std::count(applied.printed.begin(), applied.printed.end(), '\n'),
            static_cast<std::ptrdiff_t>(actions.size()));
  EXPECT_NE(applied.printed.find("node1\\nnode2"), std::string::npos);
}

TEST(QuerySlurmNodes, AnScontrolPastItsTimeoutIsAnErrorNotAnEmptyPool) {
  const FakeScontrol scontrol("NodeName=node1 State=IDLE\n", 0, "", 30);
  try {
    (void)query_slurm_nodes(0.3);
    ADD_FAILURE() << "no RuntimeFailure";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()),
              "scontrol show node timed out after 0.3 s (is slurmctld running?)");
  }
}

TEST(QuerySlurmNodes, TheLastFatalLineOfAFailureIsReportedPrintably) {
  const FakeScontrol scontrol("", 2, "retrying\nfatal: first\nnoise\nfatal: Unable\x1b[31m\n");
  try {
    (void)query_slurm_nodes(30);
    ADD_FAILURE() << "no RuntimeFailure";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()), "scontrol show node failed (exit 2): fatal: Unable\\x1b[31m");
  }
}

TEST(QuerySlurmNodes, NoScontrolOnThePathIsAnError) {
  test_support::TempDirectory empty;
  ScopedEnvironment on_path("PATH", empty.path().string());
  ScopedEnvironment no_conf("SLURM_CONF", "");
  EXPECT_THROW((void)query_slurm_nodes(5), RuntimeFailure);
}

// A drain that scontrol refuses is reported with its first line, and the next node is still
// drained.
TEST(ApplySlurmActions, ARefusedDrainIsReportedAndTheRestStillRun) {
  const FakeScontrol scontrol("", 1, "slurm_update error: Invalid node name specified\nmore\n");
  const auto actions = plan_slurm_actions({{"node1", NodeDecisionState::kQuarantined, "a"},
                                           {"node2", NodeDecisionState::kQuarantined, "b"}},
                                          {{"node1", {"IDLE", ""}}, {"node2", {"MIXED", ""}}});
  const Applied applied = apply(actions, false);
  EXPECT_EQ(scontrol.calls().size(), 2u);
  ASSERT_EQ(applied.results.size(), 2u);
  for (const auto& result : applied.results) {
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.error, "slurm_update error: Invalid node name specified");
  }
  EXPECT_EQ(applied.printed,
            "FAILED drain  node1: slurm_update error: Invalid node name specified\n"
            "FAILED drain  node2: slurm_update error: Invalid node name specified\n");
}

}  // namespace
}  // namespace commcert
