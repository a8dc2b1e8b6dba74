// A process's error that ends a job of several processes, as the run's files record it
// (cli/stage_failure.hpp): the wire form a failing process sends process 0, and how the files on
// disk are marked by a process that holds neither in memory.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/stage_failure.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

StageFailure failure() {
  return {"sweep", 2, 2, "node2", "injected fault (COMMCERT_FAULT fail:2:3): operation 3 failed",
          3};
}

void write(const std::filesystem::path& path, const Json& json) {
  std::ofstream(path) << json.dump();
}

Json read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

Json running_suite() {
  return {{"suite", "ci"},
          {"status", "running"},
          {"stages",
           {{{"name", "health"}, {"status", "ok"}, {"exit_code", 0}},
            {{"name", "cluster-collectives"}, {"status", "running"}, {"exit_code", nullptr}}}}};
}

TEST(StageFailure, TheWireTextCarriesEveryFieldAndAnythingElseIsNotOne) {
  const auto back = failure_from_wire_text(failure_wire_text(failure()));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back), to_json(failure()));
  EXPECT_EQ(back->exit_code, 3);
  EXPECT_FALSE(failure_from_wire_text("not json").has_value());
  EXPECT_FALSE(failure_from_wire_text(R"({"process": 1})").has_value());
}

TEST(StageFailure, MetaSaysErrorWithTheFailingProcessRankNodeAndReason) {
  const Json fields = failed_meta_fields(failure());
  EXPECT_EQ(fields.at("status"), "error");
  EXPECT_EQ(fields.at("exit_code"), 3);
  EXPECT_TRUE(fields.at("end_time").is_string());
  EXPECT_EQ(fields.at("error"), Json({{"command", "sweep"},
                                      {"process", 2},
                                      {"rank", 2},
                                      {"node", "node2"},
                                      {"reason", failure().reason}}));
}

TEST(StageFailure, RunningFilesOnDiskEndAsErrorTheStageUnderWayWithThem) {
  test_support::TempDirectory run;
  write(run.path() / "meta.json", {{"run_id", "r"}, {"status", "running"}, {"exit_code", nullptr}});
  write(run.path() / "suite.json", running_suite());
  mark_run_failed_on_disk(run.path(), failure(), true);
  const Json meta = read(run.path() / "meta.json");
  EXPECT_EQ(meta.at("run_id"), "r");  // the rest is kept
  EXPECT_EQ(meta.at("status"), "error");
  EXPECT_EQ(meta.at("exit_code"), 3);
  EXPECT_EQ(meta.at("error").at("node"), "node2");
  const Json suite = read(run.path() / "suite.json");
  EXPECT_EQ(suite.at("status"), "error");
  EXPECT_EQ(suite.at("exit_code"), 3);
  EXPECT_EQ(suite.at("error").at("process"), 2);
  EXPECT_EQ(suite.at("stages").at(0).at("status"), "ok");
  const Json& stage = suite.at("stages").at(1);
  EXPECT_EQ(stage.at("status"), "error");
  EXPECT_EQ(stage.at("exit_code"), 3);
  EXPECT_EQ(stage.at("error").at("reason"), failure().reason);
}

TEST(StageFailure, MetaIsLeftToItsOwnerWhenAskedAndAFinishedOrAbsentFileIsLeftAlone) {
  test_support::TempDirectory run;
  const Json meta = {{"status", "running"}};
  write(run.path() / "meta.json", meta);
  write(run.path() / "suite.json", running_suite());
  mark_run_failed_on_disk(run.path(), failure(), false);  // process 0 writes meta from memory
  EXPECT_EQ(read(run.path() / "meta.json"), meta);
  EXPECT_EQ(read(run.path() / "suite.json").at("status"), "error");

  // A timeout recorded first stands; a directory without the files (no shared file system)
  // gets none.
  const Json timed_out = {{"status", "timeout"}, {"exit_code", 4}};
  write(run.path() / "meta.json", timed_out);
  mark_run_failed_on_disk(run.path(), failure(), true);
  EXPECT_EQ(read(run.path() / "meta.json"), timed_out);
  test_support::TempDirectory elsewhere;
  mark_run_failed_on_disk(elsewhere.path(), failure(), true);
  EXPECT_TRUE(elsewhere.entries().empty());
  mark_run_failed_on_disk(elsewhere.path() / "missing", failure(), true);  // never throws
}

}  // namespace
}  // namespace commcert
