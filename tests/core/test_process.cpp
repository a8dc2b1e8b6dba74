#include <gtest/gtest.h>

#include "core/clock.hpp"
#include "core/process.hpp"

namespace commcert {
namespace {

TEST(RunProcess, PassesArgumentsVerbatimWithoutAShell) {
  const auto result = run_process({"printf", "%s|", "a b", "$(id)", "; reboot"}, 10);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output, "a b|$(id)|; reboot|");
}

TEST(RunProcess, ReportsExitStatusAndStderr) {
  const auto result = run_process({"sh", "-c", "echo oops >&2; exit 3"}, 10);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.error, "oops\n");
}

TEST(RunProcess, MissingProgramIsAnErrorNotACrash) {
  const auto result = run_process({"commcert-no-such-program"}, 10);
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_NE(result.error.find("cannot run commcert-no-such-program"), std::string::npos);
}

TEST(RunProcess, KillsAProgramThatOverrunsItsTimeout) {
  const auto start = SteadyClock::now();
  const auto result = run_process({"sleep", "30"}, 0.3);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, -1);
  EXPECT_LT(seconds_between(start, SteadyClock::now()), 10.0);
}

}  // namespace
}  // namespace commcert
