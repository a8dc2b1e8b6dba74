// What every stage shares at its edges: the flags declared once (StageFlags) and how a stage's
// process leaves once its records are written (leave_stage).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/stage_flags.hpp"
#include "cli/stage_session.hpp"
#include "core/errors.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

// A stage with every shared flag, as p2p declares them.
StageFlagSpec every_flag() {
  return StageFlagSpec("120", "Bound on any one wait for a GPU")
      .with_iterations(5, 10000, "Timed samples per test (median kept)")
      .with_warmup(1, 1000, "Untimed samples before them")
      .with_gpus_per_process(0);
}

// COMMCERT_TIMEOUT unset for the test, as it was.
class StageFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* value = std::getenv("COMMCERT_TIMEOUT")) saved_ = value;
    ::unsetenv("COMMCERT_TIMEOUT");
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("COMMCERT_TIMEOUT", saved_->c_str(), 1);
    } else {
      ::unsetenv("COMMCERT_TIMEOUT");
    }
  }

  // The CLI11 error parsing `args` raises, or "" when it parses.
  static std::string parse_error(StageFlagSpec spec, const std::string& args) {
    CLI::App app;
    StageFlags flags(std::move(spec));
    flags.add_to(app);
    try {
      app.parse(args, false);
    } catch (const CLI::ParseError& error) {
      return error.what();
    }
    return "";
  }

  std::optional<std::string> saved_;
};

TEST_F(StageFlagsTest, DefaultsComeFromTheStagesSpec) {
  CLI::App app;
  StageFlags flags(every_flag());
  flags.add_to(app);
  app.parse(std::string(), false);
  EXPECT_EQ(flags.iterations(), 5);
  EXPECT_EQ(flags.warmup(), 1);
  EXPECT_EQ(flags.gpus_per_process(), 0);
  EXPECT_DOUBLE_EQ(flags.timeout_s(), 120);
  EXPECT_EQ(flags.output().results_root, "results");
  EXPECT_FALSE(flags.output().quiet);
}

TEST_F(StageFlagsTest, EachFlagParsesInItsShortAndLongForm) {
  for (const std::string args :
       {"-n 7 -w 2 -g 4 -T 90s --out /tmp/r --run-id r1 --node-name n1 -q",
        "--iterations 7 --warmup 2 --ngpus 4 --timeout 1.5m --out /tmp/r --run-id r1 "
        "--node-name n1 --quiet"}) {
    CLI::App app;
    StageFlags flags(every_flag());
    flags.add_to(app);
    app.parse(args, false);
    EXPECT_EQ(flags.iterations(), 7) << args;
    EXPECT_EQ(flags.warmup(), 2) << args;
    EXPECT_EQ(flags.gpus_per_process(), 4) << args;
    EXPECT_DOUBLE_EQ(flags.timeout_s(), 90) << args;
    EXPECT_EQ(flags.output().results_root, "/tmp/r") << args;
    EXPECT_EQ(flags.output().run_id, "r1") << args;
    EXPECT_EQ(flags.output().node_name, "n1") << args;
    EXPECT_TRUE(flags.output().quiet) << args;
  }
}

TEST_F(StageFlagsTest, TheTimeoutComesFromTheEnvironmentWithoutTheFlag) {
  ::setenv("COMMCERT_TIMEOUT", "45", 1);
  CLI::App app;
  StageFlags flags(every_flag());
  flags.add_to(app);
  app.parse(std::string(), false);
  EXPECT_DOUBLE_EQ(flags.timeout_s(), 45);
}

TEST_F(StageFlagsTest, AValueOutOfRangeOrOfTheWrongKindIsAParseErrorNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases{{"-n 0", "--iterations"},
                                                               {"-n 10001", "--iterations"},
                                                               {"--iterations ten", "--iterations"},
                                                               {"--warmup=-1", "--warmup"},
                                                               {"-w 1001", "--warmup"},
                                                               {"-g 65", "--ngpus"},
                                                               {"--ngpus all", "--ngpus"}};
  for (const auto& [args, flag] : cases) {
    const std::string error = parse_error(every_flag(), args);
    EXPECT_NE(error.find(flag), std::string::npos) << args << ": " << error;
  }
}

TEST_F(StageFlagsTest, AFlagTheStageDoesNotHaveIsAParseErrorNamingIt) {
  // health: -T and the output flags only.
  const StageFlagSpec health("300", "Bound on any one wait for a peer process");
  for (const std::string flag : {"-n", "-w", "-g", "--iterations", "--ngpus"}) {
    const std::string error = parse_error(health, flag + " 1");
    EXPECT_NE(error.find(flag), std::string::npos) << flag << ": " << error;
  }
  EXPECT_EQ(parse_error(health, "-T 10"), "");
}

TEST_F(StageFlagsTest, ATimeoutThatIsNoPositiveDurationIsAUsageErrorNamingTheFlag) {
  for (const std::string value : {"0", "soon", "-5"}) {
    CLI::App app;
    StageFlags flags(
        StageFlagSpec("300", "Bound").with_zero_timeout_note("a burn is always bounded"));
    flags.add_to(app);
    app.parse("--timeout=" + value, false);
    try {
      (void)flags.timeout_s();
      FAIL() << "accepted -T " << value;
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find("-T/--timeout"), std::string::npos) << error.what();
    }
  }
  // The stage's note says why 0 (no bound) is refused.
  CLI::App app;
  StageFlags flags(
      StageFlagSpec("300", "Bound").with_zero_timeout_note("a burn is always bounded"));
  flags.add_to(app);
  app.parse(std::string("-T 0"), false);
  try {
    (void)flags.timeout_s();
    FAIL() << "accepted -T 0";
  } catch (const UsageError& error) {
    EXPECT_STREQ(error.what(), "-T/--timeout: must be longer than 0 s (a burn is always bounded)");
  }
}

TEST(LeaveStage, WithoutAnAbandonedWorkerTheStatusGoesBackToTheCliEdge) {
  std::optional<int> ended;
  EXPECT_EQ(leave_stage(3, false, [&](int code) { ended = code; }), 3);
  EXPECT_FALSE(ended.has_value());
}

TEST(LeaveStage, AnAbandonedWorkerEndsTheProcessAtOnceWithTheStatus) {
  std::optional<int> ended;
  (void)leave_stage(4, true, [&](int code) { ended = code; });
  EXPECT_EQ(ended, 4);
}

TEST(LeaveStage, EndingAtOnceFlushesWhatStdioStillHolds) {
  test_support::TempDirectory dir;
  const std::string path = (dir.path() / "buffered.txt").string();
  EXPECT_EXIT(
      {
        std::FILE* file = std::fopen(path.c_str(), "w");
        static char buffer[4096];
        std::setvbuf(file, buffer, _IOFBF, sizeof(buffer));
        std::fputs("written before the end", file);
        (void)leave_stage(4, true);
      },
      ::testing::ExitedWithCode(4), "");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "written before the end");
}

}  // namespace
}  // namespace commcert
