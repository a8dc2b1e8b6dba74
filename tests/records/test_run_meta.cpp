// meta.json's contract (docs/records.md "meta.json", docs/schema/meta.schema.json): every
// committed meta.json fixture (self-test runs, real H100/H200 runs) reads through the typed
// RunMeta and writes back unchanged, validates against the schema, and a meta.json that is cut
// short, of the wrong type or from a newer commcert is a one-line error naming the file.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "json_schema_subset.hpp"
#include "records/run_meta.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const fs::path kSource = COMMCERT_SOURCE_DIR;

std::vector<fs::path> meta_fixtures() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "tests" / "fixtures")) {
    if (entry.is_regular_file() && entry.path().filename() == "meta.json")
      paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

Json read_json(const fs::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

test_support::JsonSchemaSubset meta_schema() {
  std::ifstream in(kSource / "docs" / "schema" / "meta.schema.json");
  return test_support::JsonSchemaSubset(Json::parse(in));
}

// A meta.json written the way the stages write it: every field, sweep parameters, one earlier
// command of another stage.
Json stage_meta() {
  Json health = {
      {"schema", 1},
      {"run_id", "r1"},
      {"command", "health"},
      {"argv", {"commcert", "health"}},
      {"status", "ok"},
      {"exit_code", 0},
      {"start_time", "2026-11-26T09:14:01.000Z"},
      {"end_time", "2026-11-26T09:14:05.000Z"},
      {"commcert",
       {{"version", "0.1.0"},
        {"git", "v0.1.0"},
        {"build_type", "Release"},
        {"compiler", "GNU 12.2.0"},
        {"features", {{"cuda", true}, {"mpi", true}, {"verbs", false}}}}},
      {"backend", nullptr},
      {"versions",
       {{"mpi", nullptr}, {"nccl", "2.28.9"}, {"cuda_runtime", "13.0"}, {"cuda_driver", "13.0"}}},
      {"libraries",
       {{"nccl",
         {{"available", false},
          {"version", nullptr},
          {"path", nullptr},
          {"origin", nullptr},
          {"detail", "not found"}}}}},
      {"nodes", {"n0"}},
      {"processes", 1},
      {"ranks", Json::array({{{"rank", 0},
                              {"process", 0},
                              {"node", "n0"},
                              {"hostname", "n0"},
                              {"local_rank", 0},
                              {"pid", 42},
                              {"device", "host"},
                              {"gpu", nullptr}}})},
      {"environment", {{"NCCL_DEBUG", "WARN"}}},
      {"warnings", Json::array()},
      {"parameters",
       {{"sysfs_root", "/sys"},
        {"nvml_library", "libnvidia-ml.so.1"},
        {"watch_s", 0.0},
        {"timeout_s", 60.0}}},
      {"fault_injection", nullptr},
      {"interrupted", false}};
  Json sweep = health;
  sweep["command"] = "sweep";
  sweep["status"] = "error";
  sweep["exit_code"] = 3;
  sweep["backend"] = {{"name", "nccl"}, {"selection", "auto"}, {"reason", "GPUs found"}};
  sweep["parameters"] = {{"collectives", {"allreduce"}},
                         {"min_bytes", 1048576},
                         {"iterations", 20},
                         {"check", true},
                         {"timeout_s", 60.0},
                         {"target_ci_pct", nullptr},
                         {"seed", 7165065848756204148ULL},
                         {"scope", "groups"},
                         {"pair_list", nullptr},
                         {"groups", {{"n0"}, {"n1", "n2"}}}};
  sweep["fault_injection"] = "hang:rank=1";
  sweep["error"] = {
      {"command", "sweep"}, {"process", 1}, {"rank", 1}, {"node", "n1"}, {"reason", "boom"}};
  sweep["earlier"] = Json::array({health});
  return sweep;
}

Json ingest_meta() {
  return {{"schema", 1},
          {"run_id", "nt"},
          {"command", "ingest"},
          {"source", "nccl-tests,dcgm"},
          {"argv", {"commcert", "ingest", "a.log"}},
          {"status", "running"},
          {"exit_code", nullptr},
          {"start_time", "2026-11-26T09:14:01.000Z"},
          {"end_time", "2026-11-26T09:14:02.000Z"},
          {"nodes", {"n0"}},
          {"ingest", {{"files", Json::array({{{"path", "a.log"}, {"tests", 1}}})}}}};
}

TEST(RunMetaFixtures, EveryCommittedMetaJsonReadsBackUnchanged) {
  const auto fixtures = meta_fixtures();
  ASSERT_GE(fixtures.size(), 9u) << "the self-test and real-run fixtures are gone";
  std::set<std::string> commands;
  for (const auto& path : fixtures) {
    SCOPED_TRACE(path.string());
    const RunMeta meta = read_run_meta(path);
    EXPECT_EQ(to_json(meta), read_json(path));
    EXPECT_TRUE(meta.unknown.empty()) << meta.unknown.dump();
    // Each stage's parameters read as its own type, none left over as unknown.
    std::vector<const RunMeta*> stages{&meta};
    for (const auto& earlier : meta.earlier)
      stages.push_back(&earlier);
    for (const RunMeta* stage : stages) {
      commands.insert(stage->command.value_or("?"));
      ASSERT_TRUE(stage->parameters.has_value());
      EXPECT_FALSE(std::holds_alternative<OtherParameters>(*stage->parameters));
      std::visit(
          [](const auto& parameters) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(parameters)>, OtherParameters>) {
              EXPECT_TRUE(parameters.unknown.empty()) << parameters.unknown.dump();
            }
          },
          *stage->parameters);
    }
  }
  EXPECT_EQ(commands, (std::set<std::string>{"burn", "health", "membw", "sweep"}));
}

TEST(RunMetaFixtures, EveryCommittedMetaJsonFollowsTheSchema) {
  const auto schema = meta_schema();
  for (const auto& path : meta_fixtures()) {
    EXPECT_THAT(schema.errors(read_json(path)), ::testing::IsEmpty()) << path.string();
  }
}

TEST(RunMetaFixtures, TheH100RunReadsAsTypedFields) {
  const RunMeta meta =
      read_run_meta(kSource / "tests/fixtures/records/h100/quick-one-gpu/meta.json");
  EXPECT_EQ(meta.command, "sweep");
  EXPECT_EQ(meta.status, "ok");
  ASSERT_EQ(meta.earlier.size(), 3u);
  EXPECT_EQ(meta.earlier[0].command, "health");
  EXPECT_EQ(meta.earlier[1].command, "burn");
  const auto& sweep = std::get<SweepParameters>(*meta.parameters);
  EXPECT_EQ(sweep.collectives, (std::vector<std::string>{"allreduce", "allgather"}));
  EXPECT_EQ(sweep.min_bytes, std::uint64_t{268435456});
  ASSERT_TRUE(sweep.target_ci_pct.has_value()) << "written as null";
  EXPECT_FALSE(sweep.target_ci_pct->has_value());
  const auto& burn = std::get<BurnParameters>(*meta.earlier[1].parameters);
  EXPECT_EQ(burn.kernel, "gemm_bf16");
  EXPECT_EQ(burn.duration_s, 60.0);
  EXPECT_EQ(meta.first_start_time(), *meta.earlier[0].start_time);
  EXPECT_EQ(meta.statuses(), (std::vector<std::string>{"ok", "ok", "ok", "ok"}));
}

TEST(RunMetaRoundTrip, EveryFieldAndEveryStageWritesBackAsRead) {
  for (const Json& json : {stage_meta(), ingest_meta()}) {
    SCOPED_TRACE(json.dump());
    const RunMeta meta = run_meta_from_json(json);
    EXPECT_EQ(to_json(meta), json);
    EXPECT_EQ(to_json(meta).dump(), json.dump()) << "fields in the written order";
  }
  const RunMeta meta = run_meta_from_json(stage_meta());
  EXPECT_EQ(meta.error->node, "n1");
  EXPECT_EQ(meta.fault_plan(), "hang:rank=1");
  ASSERT_TRUE(meta.backend && *meta.backend);
  EXPECT_EQ((*meta.backend)->name, "nccl");
  ASSERT_TRUE(meta.earlier.front().backend.has_value());
  EXPECT_FALSE(meta.earlier.front().backend->has_value()) << "null: no data plane";
  EXPECT_EQ(meta.statuses(), (std::vector<std::string>{"error", "ok"}));
}

TEST(RunMetaRoundTrip, EachStagesParametersAreTyped) {
  const std::vector<std::pair<std::string, Json>> stages = {
      {"burn", {{"kernel", "gemm_bf16"}, {"size", 8192}, {"seed", 1651864174}}},
      {"membw", {{"buffer_bytes", 1073741824}, {"memtest_fraction", 0.9}}},
      {"p2p", {{"bytes", 268435456}, {"methods", "ce,sm,latency"}, {"chase_loads", 100000}}},
      {"links",
       {{"transport", "verbs"},
        {"tests", {"write_bw", "read_lat"}},
        {"sizes", {65536, 4194304}},
        {"window", 4}}},
      {"health", {{"sysfs_root", "/sys"}, {"watch_s", 2.0}}},
  };
  for (const auto& [command, parameters] : stages) {
    SCOPED_TRACE(command);
    const StageParameters typed = stage_parameters_from_json(command, parameters);
    EXPECT_EQ(to_json(typed), parameters);
    EXPECT_FALSE(std::holds_alternative<OtherParameters>(typed));
  }
  EXPECT_EQ(std::get<LinksParameters>(stage_parameters_from_json("links", stages[3].second)).sizes,
            (std::vector<std::uint64_t>{65536, 4194304}));
  // A command this version does not know keeps its parameters as written.
  const Json other = {{"anything", {1, 2}}};
  EXPECT_EQ(to_json(stage_parameters_from_json("future", other)), other);
}

TEST(RunMetaSchema, TodaysShapesValidateAndBrokenOnesDoNot) {
  const auto schema = meta_schema();
  EXPECT_THAT(schema.errors(stage_meta()), ::testing::IsEmpty());
  EXPECT_THAT(schema.errors(ingest_meta()), ::testing::IsEmpty());
  Json bad = stage_meta();
  bad["status"] = "finished";
  EXPECT_FALSE(schema.errors(bad).empty());
  bad = stage_meta();
  bad["parameters"]["min_byte"] = 1;  // a misspelt parameter
  EXPECT_FALSE(schema.errors(bad).empty());
  bad = stage_meta();
  bad["earlier"][0]["parameters"]["watch_s"] = "2";
  EXPECT_FALSE(schema.errors(bad).empty());
  bad = ingest_meta();
  bad.erase("source");
  EXPECT_FALSE(schema.errors(bad).empty());
}

// The documented handling (docs/records.md "meta.json"): absent fields are "not said", fields
// of a newer version are kept but not read, the rest is an error naming file and field.
TEST(RunMetaErrors, AbsentFieldsAreNotSaidUnknownOnesAreKept) {
  const RunMeta minimal = run_meta_from_json({{"run_id", "r1"}, {"status", "running"}});
  EXPECT_FALSE(minimal.schema.has_value());
  EXPECT_FALSE(minimal.command.has_value());
  EXPECT_FALSE(minimal.parameters.has_value());
  EXPECT_EQ(minimal.first_start_time(), "");

  Json newer = stage_meta();
  newer["power_profile"] = "max";
  newer["parameters"]["new_flag"] = true;
  const RunMeta meta = run_meta_from_json(newer);
  EXPECT_EQ(meta.unknown, (Json{{"power_profile", "max"}}));
  EXPECT_EQ(std::get<SweepParameters>(*meta.parameters).unknown, (Json{{"new_flag", true}}));
  EXPECT_EQ(to_json(meta)["power_profile"], "max");
  EXPECT_EQ(to_json(meta)["parameters"]["new_flag"], true);
}

// The message of the wrong-type error reading `json` gives; a failure when it reads.
std::string wrong_type_error_for(const Json& json) {
  try {
    (void)run_meta_from_json(json);
  } catch (const RunMetaError& error) {
    EXPECT_EQ(error.problem(), RunMetaError::Problem::kWrongType);
    return error.what();
  }
  ADD_FAILURE() << "read " << json.dump().substr(0, 200);
  return "";
}

// A rank identity's integers are 32-bit integers: a fraction, a boolean or a number out of
// range is a wrong type naming the field, not an int made of it (1e300 found by fuzz_run_meta:
// converting it was undefined behaviour).
TEST(RunMetaErrors, RankIdentityIntegersAreCheckedNotConverted) {
  for (const Json& bad : {Json(1e300), Json(1.5), Json(true), Json(4294967296LL), Json("0")}) {
    SCOPED_TRACE(bad.dump());
    for (const char* key : {"rank", "process", "local_rank", "pid"}) {
      Json meta = stage_meta();
      meta["ranks"][0][key] = bad;
      EXPECT_THAT(wrong_type_error_for(meta),
                  StartsWith(std::string("ranks[0].") + key + ": expected an "));
      meta = stage_meta();
      meta["earlier"][0]["ranks"][0][key] = bad;
      EXPECT_THAT(wrong_type_error_for(meta),
                  StartsWith(std::string("earlier[0].ranks[0].") + key + ": "));
    }
    Json meta = stage_meta();
    meta["ranks"][0]["gpu"] = {{"index", bad}, {"uuid", "GPU-0"}};
    EXPECT_THAT(wrong_type_error_for(meta), StartsWith("ranks[0].gpu.index: expected an "));
  }
  Json good = stage_meta();
  good["ranks"][0]["gpu"] = {{"index", 3}, {"uuid", "GPU-0"}};
  const RunMeta meta = run_meta_from_json(good);
  ASSERT_EQ(meta.ranks->size(), 1U);
  EXPECT_EQ(meta.ranks->front().gpu->index, 3);
}

// A meta.json nested deeper than 64 levels is refused before it is read: reading `earlier`, and
// copying or writing a value nested millions deep (a file within the 16 MiB bound), ran out of
// stack (found by fuzz_run_meta). As deep as allowed still reads and writes back.
TEST(RunMetaErrors, NestingDeeperThan64LevelsIsRefused) {
  const auto nested = [](const std::string& open, const std::string& inner,
                         const std::string& close, int levels) {
    std::string text;
    for (int i = 0; i < levels; ++i)
      text += open;
    text += inner;
    for (int i = 0; i < levels; ++i)
      text += close;
    return Json::parse(text);
  };
  const std::string refused = "meta.json: nested deeper than 64 levels";
  // The top level is the first: 63 arrays under it are 64 levels, 64 arrays 65.
  const Json deepest = nested(R"({"x":)", nested("[", "1", "]", 63).dump(), "}", 1);
  EXPECT_EQ(to_json(run_meta_from_json(deepest)), deepest);
  EXPECT_EQ(wrong_type_error_for(nested(R"({"x":)", nested("[", "1", "]", 64).dump(), "}", 1)),
            refused);
  EXPECT_EQ(wrong_type_error_for(nested("[", "", "]", 200000)), refused);
  EXPECT_EQ(wrong_type_error_for(nested(R"({"earlier":[)", "{}", "]}", 100000)), refused);
  EXPECT_EQ(wrong_type_error_for(nested(R"({"x":)", R"({"y":[[]]})", "}", 100000)), refused);
}

RunMetaError error_reading(const fs::path& path) {
  try {
    (void)read_run_meta(path);
  } catch (const RunMetaError& error) {
    return error;
  }
  ADD_FAILURE() << "read " << path;
  return RunMetaError(RunMetaError::Problem::kUnreadable, "");
}

TEST(RunMetaErrors, BrokenFilesAreOneLineErrorsNamingTheFile) {
  const fs::path dir =
      fs::temp_directory_path() / ("commcert-run-meta-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const std::string whole = stage_meta().dump();
  struct Case {
    fs::path path;
    RunMetaError::Problem problem;
    std::string says;
  };
  Json newer = stage_meta();
  newer["earlier"][0]["schema"] = 2;
  Json wrong = stage_meta();
  wrong["earlier"][0]["parameters"]["timeout_s"] = "60";
  Json negative = stage_meta();
  negative["parameters"]["min_bytes"] = -1;
  const std::vector<Case> cases = {
      {write("truncated.json", whole.substr(0, whole.size() / 2)),
       RunMetaError::Problem::kUnreadable, "not valid JSON"},
      {write("array.json", "[1]"), RunMetaError::Problem::kUnreadable, "expected a JSON object"},
      {write("newer.json", newer.dump()), RunMetaError::Problem::kNewerSchema,
       "earlier[0].schema: schema 2 is newer than this commcert reads (1)"},
      {write("wrong.json", wrong.dump()), RunMetaError::Problem::kWrongType,
       "earlier[0].parameters.timeout_s: expected a number, found string \"60\""},
      {write("negative.json", negative.dump()), RunMetaError::Problem::kWrongType,
       "parameters.min_bytes: expected a non-negative integer, found number -1"},
      {write("status.json", R"({"run_id": "r1", "status": 5})"), RunMetaError::Problem::kWrongType,
       "status: expected a string, found number 5"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path.string());
    const RunMetaError error = error_reading(c.path);
    EXPECT_EQ(error.problem(), c.problem);
    EXPECT_THAT(error.what(), StartsWith(c.path.string() + ": "));
    EXPECT_THAT(error.what(), HasSubstr(c.says));
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace commcert
