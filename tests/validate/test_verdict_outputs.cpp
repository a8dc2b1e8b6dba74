// `--report NAME=PATH` and `--format NAME`: which outputs a command writes, what is refused before
// anything is judged, and how files are written (atomically, one rendering per output).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "report/verdict_outputs.hpp"
#include "support.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

FleetVerdict small_verdict() {
  FleetVerdict v;
  v.sku = "cpu-mpi-ci";
  v.baseline_path = "suites/baselines/cpu-mpi-ci.yaml";
  v.required = {"collective.allreduce"};
  NodeVerdict ok;
  ok.node = "node1";
  ok.state = NodeState::kCertified;
  ok.checks = {{"collective.allreduce", "pass"}};
  v.nodes = {ok};
  return v;
}

std::string usage_error_of(const std::optional<std::string>& format,
                           const std::vector<std::string>& reports) {
  try {
    (void)plan_verdict_outputs(format, reports, "text");
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(VerdictOutputs, TheDefaultFormatGoesToStdoutWhenNothingElseDoes) {
  const auto outputs = plan_verdict_outputs(std::nullopt, {}, "text");
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].format->name, "text");
  EXPECT_FALSE(outputs[0].file);

  // A file beside it keeps the default on stdout.
  fixtures::TempDir dir;
  const auto with_file =
      plan_verdict_outputs(std::nullopt, {"json=" + (dir.path() / "v.json").string()}, "text");
  ASSERT_EQ(with_file.size(), 2u);
  EXPECT_EQ(stdout_format(with_file)->name, "text");
  EXPECT_EQ(*with_file[1].file, dir.path() / "v.json");
}

TEST(VerdictOutputs, ReportToDashReplacesTheDefaultOnStdout) {
  const auto outputs = plan_verdict_outputs(std::nullopt, {"nhc=-"}, "text");
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(stdout_format(outputs)->name, "nhc");
  EXPECT_EQ(stdout_format(plan_verdict_outputs(std::string("json"), {}, "text"))->name, "json");
}

TEST(VerdictOutputs, EveryFormatInTheTableIsAcceptedByBothFlags) {
  fixtures::TempDir dir;
  for (const VerdictFormat& format : verdict_formats()) {
    const std::string name(format.name);
    EXPECT_EQ(stdout_format(plan_verdict_outputs(name, {}, "text")), &format);
    const auto outputs =
        plan_verdict_outputs(std::nullopt, {name + "=" + (dir.path() / name).string()}, "text");
    EXPECT_EQ(outputs.back().format, &format);
  }
}

TEST(VerdictOutputs, BadSpecsAreRefusedNamingTheFlag) {
  fixtures::TempDir dir;
  const std::string known = verdict_format_names();
  EXPECT_EQ(usage_error_of(std::string("xml"), {}),
            "--format: unknown format 'xml' (known: " + known + ")");
  EXPECT_EQ(usage_error_of(std::nullopt, {"xml=-"}),
            "--report: unknown format 'xml' (known: " + known + ")");
  EXPECT_THAT(usage_error_of(std::nullopt, {"json"}),
              StartsWith("--report: 'json' is not NAME=PATH"));
  EXPECT_THAT(usage_error_of(std::nullopt, {"json="}), StartsWith("--report: 'json=' names no"));
  const std::string missing = (dir.path() / "no" / "v.json").string();
  EXPECT_EQ(
      usage_error_of(std::nullopt, {"json=" + missing}),
      "--report: " + missing + ": directory " + (dir.path() / "no").string() + " does not exist");
  EXPECT_THAT(usage_error_of(std::nullopt, {"json=" + dir.path().string()}),
              HasSubstr("is a directory"));
}

TEST(VerdictOutputs, StdoutAndEachFileTakeOneOutput) {
  fixtures::TempDir dir;
  const std::string file = (dir.path() / "v.out").string();
  EXPECT_THAT(usage_error_of(std::nullopt, {"json=-", "nhc=-"}),
              StartsWith("--report nhc=-: stdout already shows json"));
  EXPECT_THAT(usage_error_of(std::string("text"), {"nhc=-"}),
              StartsWith("--report nhc=-: stdout already shows text"));
  EXPECT_THAT(usage_error_of(std::nullopt, {"json=" + file, "nhc=" + file}),
              HasSubstr("is already written as json"));
  // The same file spelled another way is still the same file.
  const std::string respelled = (dir.path() / "." / "v.out").string();
  EXPECT_THAT(usage_error_of(std::nullopt, {"json=" + file, "nhc=" + respelled}),
              HasSubstr("is already written as json"));
}

TEST(VerdictOutputs, EachOutputGetsItsOwnFormatAndFilesReplaceOldOnes) {
  fixtures::TempDir dir;
  const auto json_path = dir.write("v.json", "old contents\n");
  const auto nhc_path = dir.path() / "v.nhc";
  const auto outputs = plan_verdict_outputs(
      std::nullopt, {"json=" + json_path.string(), "nhc=" + nhc_path.string()}, "text");
  std::FILE* captured = std::tmpfile();
  ASSERT_NE(captured, nullptr);
  const FleetVerdict verdict = small_verdict();
  EXPECT_TRUE(write_verdict_outputs(verdict, outputs, captured).empty());
  std::rewind(captured);
  std::string stdout_text;
  for (int c = std::fgetc(captured); c != EOF; c = std::fgetc(captured))
    stdout_text.push_back(static_cast<char>(c));
  std::fclose(captured);

  EXPECT_EQ(stdout_text, make_verdict_reporter("text")->render(verdict));
  EXPECT_EQ(fixtures::read_text(nhc_path), make_verdict_reporter("nhc")->render(verdict));
  const Json written = Json::parse(fixtures::read_text(json_path));
  EXPECT_EQ(written["nodes"][0]["node"], "node1");
  // Only the outputs are left: no temporary file beside them.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"v.json", "v.nhc"}));
}

TEST(VerdictOutputs, AFileThatCannotBeWrittenIsReportedAndTheOthersAreStillWritten) {
  fixtures::TempDir dir;
  const auto gone = dir.path() / "gone";
  std::filesystem::create_directory(gone);
  const auto nhc_path = dir.path() / "v.nhc";
  const auto outputs = plan_verdict_outputs(
      std::nullopt, {"json=" + (gone / "v.json").string(), "nhc=" + nhc_path.string()}, "text");
  std::filesystem::remove(gone);  // after the check, before the write
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  const auto failures = write_verdict_outputs(small_verdict(), outputs, sink);
  std::fclose(sink);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].format, "json");
  EXPECT_EQ(failures[0].file, gone / "v.json");
  EXPECT_TRUE(std::filesystem::exists(nhc_path));
}

}  // namespace
}  // namespace commcert
