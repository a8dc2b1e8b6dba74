// What `commcert history add` reads of a run: records through the validator's reader (the one
// reader of records.jsonl, as certify reads it) and meta.json through the typed RunMeta
// (records/run_meta.hpp), so a run the validator cannot read is not summarized differently here.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/json.hpp"
#include "history/run_summary.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using test_support::TempDirectory;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

Json collective(const std::string& node, double busbw, std::uint64_t bytes = 1048576) {
  return {{"schema", 1},
          {"run_id", "r1"},
          {"kind", "collective"},
          {"status", "ok"},
          {"time", "2026-11-25T12:00:00.000Z"},
          {"host", "node0"},
          {"rank", 0},
          {"local_rank", 0},
          {"gpu", nullptr},
          {"backend", "mpi"},
          {"collective", "allreduce"},
          {"dtype", "float"},
          {"redop", "sum"},
          {"root", nullptr},
          {"bytes", bytes},
          {"count", bytes / 4},
          {"nranks", 1},
          {"nodes", 1},
          {"scope", "node"},
          {"round", nullptr},
          {"group", 0},
          {"group_nodes", {node}},
          {"in_place", false},
          {"cycle", 0},
          {"busbw_bytes_per_s", busbw},
          {"iteration_time",
           {{"count", 5},
            {"min_s", 0.01},
            {"p50_s", 0.01},
            {"p99_s", 0.01},
            {"max_s", 0.01},
            {"mean_s", 0.002},
            {"cv", 0.1}}}};
}

fs::path write_run(const fs::path& root, const std::string& records, const std::string& meta) {
  const fs::path directory = root / "r1";
  fs::create_directories(directory);
  std::ofstream(directory / "records.jsonl") << records;
  if (!meta.empty()) std::ofstream(directory / "meta.json") << meta;
  return directory;
}

const std::string kMeta = R"({"schema":1,"run_id":"r1","command":"sweep","status":"ok",)"
                          R"("start_time":"2026-11-25T11:59:00.000Z"})";

TEST(RunSummaryInputs, RecordsAreReadAsTheValidatorReadsThem) {
  TempDirectory tmp;
  Json wrong_schema = collective("node2", 3e9);
  wrong_schema["schema"] = 9;
  const std::string repeated = collective("node0", 1e9).dump() + "\n";
  const std::string records = repeated + repeated  // an exact repeat counts once
                              + collective("node1", 2e9).dump() + "\n" + wrong_schema.dump() +
                              "\n" + collective("node3", 4e9).dump().substr(0, 80);  // cut short
  std::size_t unreadable = 0;
  const RunSummary summary = summarize_run(write_run(tmp.path(), records, kMeta), &unreadable);
  EXPECT_EQ(unreadable, 2u) << "the newer schema and the cut-short line";
  ASSERT_EQ(summary.metrics.size(), 2u);
  EXPECT_EQ(summary.metrics[0].node, "node0");
  EXPECT_DOUBLE_EQ(summary.metrics[0].value, 1e9) << "the repeat is not pooled as a second sample";
  ASSERT_TRUE(summary.metrics[0].moments);
  EXPECT_EQ(summary.metrics[0].moments->count, 5u);
  EXPECT_EQ(summary.metrics[1].node, "node1");
}

// JSON as other tools write it (Python's json.dumps: a space after each colon and comma) reads
// as commcert's own compact lines do.
TEST(RunSummaryInputs, SpacedJsonReadsLikeCompactJson) {
  TempDirectory tmp;
  std::string spaced = collective("node0", 1e9).dump();
  for (const std::string from : {"\":", ",\""}) {
    const std::string to = from == "\":" ? "\": " : ", \"";
    for (auto at = spaced.find(from); at != std::string::npos; at = spaced.find(from, at + 2))
      spaced.replace(at, from.size(), to);
  }
  ASSERT_NE(spaced.find("\"kind\": \"collective\""), std::string::npos) << spaced;
  std::size_t unreadable = 0;
  const RunSummary summary =
      summarize_run(write_run(tmp.path(), spaced + "\n", kMeta), &unreadable);
  EXPECT_EQ(unreadable, 0u);
  ASSERT_EQ(summary.metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(summary.metrics[0].value, 1e9);
}

TEST(RunSummaryInputs, TheFingerprintIsOfTheFileWhateverIsReadOfIt) {
  TempDirectory a;
  TempDirectory b;
  const std::string line = collective("node0", 1e9).dump() + "\n";
  const auto first = summarize_run(write_run(a.path(), line, kMeta));
  const auto repeated = summarize_run(write_run(b.path(), line + line, kMeta));
  EXPECT_EQ(first.metrics.size(), repeated.metrics.size());
  EXPECT_NE(first.fingerprint, repeated.fingerprint) << "different files are different runs";
  EXPECT_EQ(first.fingerprint, summarize_run(a.path() / "r1").fingerprint);
}

TEST(RunSummaryInputs, MetaJsonIsReadThroughItsType) {
  TempDirectory tmp;
  const std::string records = collective("node0", 1e9).dump() + "\n";
  const RunSummary summary = summarize_run(write_run(tmp.path(), records, kMeta));
  EXPECT_EQ(summary.started, "2026-11-25T11:59:00.000Z") << "meta.json's start, not the record's";
  EXPECT_EQ(Json::parse(summary.meta_json), Json::parse(kMeta));
}

TEST(RunSummaryInputs, AMetaJsonCutShortLeavesTheRunToItsRecords) {
  TempDirectory tmp;
  const std::string records = collective("node0", 1e9).dump() + "\n";
  const RunSummary summary =
      summarize_run(write_run(tmp.path(), records, kMeta.substr(0, kMeta.size() / 2)));
  EXPECT_EQ(summary.started, "2026-11-25T12:00:00.000Z") << "the first record's time";
  EXPECT_EQ(summary.meta_json, "");
  EXPECT_EQ(summary.metrics.size(), 1u);
}

TEST(RunSummaryInputs, AMetaJsonThatSaysSomethingWrongIsAnErrorNamingFileAndField) {
  TempDirectory tmp;
  const std::string records = collective("node0", 1e9).dump() + "\n";
  for (const auto& [meta, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"run_id":"r1","start_time":7})", "start_time: expected a string, found number 7"},
           {R"({"run_id":"r1","schema":2})", "schema 2 is newer than this commcert reads (1)"}}) {
    const fs::path run = write_run(tmp.path(), records, meta);
    try {
      (void)summarize_run(run);
      ADD_FAILURE() << "accepted " << meta;
    } catch (const UsageError& error) {
      EXPECT_THAT(error.what(), HasSubstr((run / "meta.json").string() + ": "));
      EXPECT_THAT(error.what(), HasSubstr(says));
    }
  }
}

}  // namespace
}  // namespace commcert
