// The thin part that runs processes, without a Slurm: a dry run runs nothing, and each action's
// argument vector is run as given (here plain programs stand for scontrol's success, refusal and
// hang). The real scontrol is tested by tests/integration/test_slurm_pool.py.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "pool/slurm_client.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

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

// Sets an environment variable for one test and puts the old value back.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
    const char* before = std::getenv(name);
    had_ = before != nullptr;
    if (had_) saved_ = before;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    if (had_) {
      ::setenv(name_, saved_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string saved_;
};

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

}  // namespace
}  // namespace commcert
