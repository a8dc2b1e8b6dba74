// The report's run section from meta.json read through its type (records/run_meta.hpp), and its
// per-GPU figures from the records the validator's reader kept: a real H100 run of `commcert
// run` (health, burn, sweep stages in one directory), as `commcert report` reads it.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../validate/support.hpp"
#include "report/run_details.hpp"
#include "validate/inputs.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;

RunDetails details_of(const fs::path& run) {
  GpuRecordLines gpu_lines;
  InputOptions options;
  options.on_record = gpu_lines.observer();
  LoadedInputs inputs = load_inputs({run.string()}, options);
  const Baseline baseline = fixtures::shipped_baseline("h100-sxm-8gpu-ndr400");
  const FleetVerdict verdict = judge(inputs.evidence, baseline, nullptr, std::move(inputs.notes));
  return collect_run_details(inputs.evidence, baseline, verdict, gpu_lines);
}

TEST(RunDetailsMeta, EveryStageOfARealRunIsDescribedFromItsTypedMeta) {
  const RunDetails details =
      details_of(fixtures::source_path("tests/fixtures/records/h100/quick-one-gpu"));
  ASSERT_EQ(details.runs.size(), 1u);
  const RunDescription& run = details.runs.front();
  EXPECT_EQ(run.suite, "quick");
  std::vector<std::string> commands;
  for (const auto& stage : run.commands) {
    commands.push_back(stage.command);
    EXPECT_EQ(stage.status, "ok");
    ASSERT_FALSE(stage.argv.empty());
    EXPECT_EQ(stage.argv.front(), "commcert");
  }
  EXPECT_EQ(commands, (std::vector<std::string>{"health", "burn", "sweep", "sweep"}));
  // The run spans its stages: the first stage's start, the latest command's end.
  EXPECT_EQ(run.start_time, "2026-11-26T17:16:46.331Z");
  EXPECT_EQ(run.end_time, "2026-11-26T17:17:51.640Z");
  EXPECT_EQ(run.fault_injection, "");
  const std::vector<std::pair<std::string, std::string>> build = {
      {"version", "0.1.0"},       {"git", "4cc0032"},       {"build_type", "RelWithDebInfo"},
      {"compiler", "GNU 12.2.0"}, {"feature cuda", "true"}, {"feature mpi", "true"},
      {"feature verbs", "true"}};
  EXPECT_EQ(run.build, build);
  ASSERT_FALSE(run.versions.empty());
  EXPECT_EQ(run.versions.front(), (std::pair<std::string, std::string>{"mpi", "Open MPI v4.1.6"}));
  // The burn stage's telemetry comes from the record the validator kept, not a second read.
  ASSERT_FALSE(details.burns.empty());
  EXPECT_TRUE(details.burns.front().timeline.has_value());
  EXPECT_TRUE(details.burns.front().sm_clock_mhz.median.has_value());
}

TEST(RunDetailsMeta, AMetaJsonThatCannotBeReadIsLeftOutNotAnError) {
  fixtures::TempDir dir;
  const fs::path source = fixtures::source_path("tests/fixtures/records/h100/quick-one-gpu");
  fs::create_directories(dir.path() / "run");
  fs::copy_file(source / "records.jsonl", dir.path() / "run" / "records.jsonl");
  const std::string meta = fixtures::read_text(source / "meta.json");
  dir.write("run/meta.json", meta.substr(0, meta.size() / 2));
  EXPECT_TRUE(details_of(dir.path() / "run").runs.empty());
}

}  // namespace
}  // namespace commcert
