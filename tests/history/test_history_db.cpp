// The run history: what a run directory is summarized into, the database's no-op re-add, node
// trends, and migrations from an older schema.
#include <fstream>
#include <sqlite3.h>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "history/history_db.hpp"
#include "history/migrations.hpp"
#include "history/run_summary.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using test_support::TempDirectory;
namespace fs = std::filesystem;

std::string collective_line(const std::string& run_id, const std::string& node, double busbw,
                            double mean_s, double cv, bool in_place = false,
                            const std::string& samples = "") {
  return R"({"schema":1,"run_id":")" + run_id +
         R"(","kind":"collective","status":"ok","time":"2026-11-25T12:00:00.000Z","host":"node0","rank":0,"local_rank":0,"gpu":null,"backend":"mpi","collective":"allreduce","dtype":"float","redop":"sum","root":null,"bytes":1048576,"count":262144,"nranks":1,"nodes":1,"scope":"node","round":null,"group":0,"group_nodes":[")" +
         node + R"("],"in_place":)" + (in_place ? "true" : "false") +
         R"(,"cycle":0,"busbw_bytes_per_s":)" + std::to_string(busbw) +
         R"(,"straggler":{"rank":0,"host":")" + node +
         R"(","time_s":0.01,"lead_s":0},"iteration_time":{"count":5,"min_s":0.01,"p50_s":0.01,"p99_s":0.01,"max_s":0.01,"mean_s":)" +
         std::to_string(mean_s) + R"(,"cv":)" + std::to_string(cv) + samples + "}}";
}

fs::path write_run(const fs::path& root, const std::string& run_id,
                   const std::vector<std::string>& lines, const std::string& start_time,
                   const std::string& verdict = "") {
  const fs::path directory = root / run_id;
  fs::create_directories(directory);
  std::ofstream records(directory / "records.jsonl");
  for (const auto& line : lines)
    records << line << "\n";
  std::ofstream(directory / "meta.json")
      << R"({"schema":1,"run_id":")" << run_id << R"(","start_time":")" << start_time << R"("})";
  if (!verdict.empty()) std::ofstream(directory / "verdict.json") << verdict;
  return directory;
}

TEST(RunSummaryTest, SummarizesCollectivesPerNodeAndPlacement) {
  TempDirectory tmp;
  const fs::path run = write_run(
      tmp.path(), "r1",
      {collective_line("r1", "node0", 1e9, 0.002, 0.1),
       collective_line("r1", "node1", 2e9, 0.001, 0.2),
       collective_line("r1", "node0", 0.9e9, 0.003, 0.1, true), "not json at all"},
      "2026-11-25T12:00:00.000Z",
      R"({"nodes":[{"node":"node0","state":"certified","first_reason":null},{"node":"node1","state":"quarantined","first_reason":{"code":"perf.floor","message":"busbw below the floor","action":"x"}}]})");
  std::size_t unreadable = 0;
  const RunSummary summary = summarize_run(run, &unreadable);
  EXPECT_EQ(unreadable, 1u);
  EXPECT_EQ(summary.run_id, "r1");
  EXPECT_EQ(summary.started, "2026-11-25T12:00:00.000Z");
  EXPECT_EQ(summary.source, "commcert");
  ASSERT_EQ(summary.metrics.size(), 3u);
  EXPECT_EQ(summary.metrics[0].node, "node0");
  EXPECT_EQ(summary.metrics[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(summary.metrics[0].value, 1e9);
  ASSERT_TRUE(summary.metrics[0].moments);
  EXPECT_EQ(summary.metrics[0].moments->count, 5u);
  EXPECT_NEAR(summary.metrics[0].moments->stddev, 0.0002, 1e-12);
  EXPECT_NE(summary.metrics[0].key(), summary.metrics[2].key());  // in-place is its own figure
  ASSERT_EQ(summary.outcomes.size(), 2u);
  EXPECT_EQ(summary.outcomes[1].state, "quarantined");
  EXPECT_EQ(summary.outcomes[1].first_reason, "perf.floor: busbw below the floor");
}

TEST(RunSummaryTest, UsesPerIterationSamplesWhenTheRecordHasThem) {
  TempDirectory tmp;
  const fs::path run = write_run(
      tmp.path(), "r1",
      {collective_line("r1", "node0", 1e9, 0.5, 0.9, false, R"(,"samples_s":[1.0,2.0,4.0])")},
      "2026-11-25T12:00:00.000Z");
  const RunSummary summary = summarize_run(run);
  ASSERT_TRUE(summary.metrics[0].moments);
  EXPECT_EQ(summary.metrics[0].moments->count, 3u);
  EXPECT_NEAR(summary.metrics[0].moments->mean, 7.0 / 3, 1e-12);
}

TEST(RunSummaryTest, ADirectoryWithoutRecordsIsAUsageError) {
  TempDirectory tmp;
  EXPECT_THROW((void)summarize_run(tmp.path()), UsageError);
}

TEST(HistoryDbTest, AddingTheSameRunTwiceIsANoOp) {
  TempDirectory tmp;
  const fs::path run =
      write_run(tmp.path(), "r1", {collective_line("r1", "node0", 1e9, 0.002, 0.1)},
                "2026-11-25T12:00:00.000Z");
  const RunSummary summary = summarize_run(run);
  HistoryDb db(tmp.path() / "db" / "history.db");
  EXPECT_EQ(db.schema_version(), HistoryDb::kSchemaVersion);
  EXPECT_TRUE(db.add(summary));
  EXPECT_FALSE(db.add(summary));
  // The same content read again (another path, same records) is the same run.
  fs::copy(run, tmp.path() / "copy", fs::copy_options::recursive);
  EXPECT_FALSE(db.add(summarize_run(tmp.path() / "copy")));
  const auto runs = db.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(db.metrics(runs[0].id).size(), 1u);
}

TEST(HistoryDbTest, KeepsFiguresAndMomentsAndFindsANodesRunsInOrder) {
  TempDirectory tmp;
  HistoryDb db(tmp.path() / "history.db");
  const fs::path later =
      write_run(tmp.path(), "later", {collective_line("later", "node0", 0.5e9, 0.004, 0.1)},
                "2026-11-26T12:00:00.000Z");
  const fs::path earlier =
      write_run(tmp.path(), "earlier",
                {collective_line("earlier", "node0", 1e9, 0.002, 0.1),
                 collective_line("earlier", "node1", 1e9, 0.002, 0.1)},
                "2026-11-25T12:00:00.000Z", R"({"nodes":[{"node":"node0","state":"certified"}]})");
  ASSERT_TRUE(db.add(summarize_run(later)));
  ASSERT_TRUE(db.add(summarize_run(earlier)));
  const auto history = db.node_history("node0");
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].run.run_id, "earlier");
  EXPECT_EQ(history[0].state, "certified");
  EXPECT_EQ(history[1].state, "");
  ASSERT_EQ(history[1].metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(history[1].metrics[0].value, 0.5e9);
  ASSERT_TRUE(history[1].metrics[0].moments);
  EXPECT_DOUBLE_EQ(history[1].metrics[0].moments->mean, 0.004);
  EXPECT_EQ(db.node_history("node1").size(), 1u);
  EXPECT_TRUE(db.node_history("node").empty());  // a prefix of a name is not the name
  EXPECT_TRUE(db.node_history("node9").empty());
  EXPECT_EQ(db.runs("2026-11-26T00:00:00.000Z").size(), 1u);
}

TEST(HistoryDbTest, ANodesTrendHasTheFiguresOfTheGroupsItWasIn) {
  TempDirectory tmp;
  std::string group = collective_line("g", "node0", 1e9, 0.002, 0.1);
  const auto at = group.find(R"("group_nodes":["node0"])");
  ASSERT_NE(at, std::string::npos);
  group.replace(at, 23, R"("group_nodes":["node0","node1"])");
  HistoryDb db(tmp.path() / "history.db");
  ASSERT_TRUE(
      db.add(summarize_run(write_run(tmp.path(), "g", {group}, "2026-11-25T12:00:00.000Z"))));
  const auto history = db.node_history("node1");
  ASSERT_EQ(history.size(), 1u);
  ASSERT_EQ(history[0].metrics.size(), 1u);
  EXPECT_EQ(history[0].metrics[0].node, "node0+node1");
  EXPECT_TRUE(db.node_history("node").empty());
}

// A database left at schema version 1 by an older commcert: opening it migrates in place and
// keeps every run.
TEST(HistoryDbTest, MigratesAnOlderSchemaKeepingItsRuns) {
  TempDirectory tmp;
  const fs::path path = tmp.path() / "history.db";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::string v1 = std::string(history_migrations()[0]) +
                         "INSERT INTO runs VALUES (1, 'f', 'old-run', '2026-01-01T00:00:00.000Z', "
                         "'2026-01-01T00:00:00.000Z', 'commcert', '/x', '{}');"
                         "INSERT INTO metrics VALUES (1, 'node0', '', 'allreduce', 'v', 8, "
                         "'busbw_bytes_per_s', 5.0, NULL, NULL, NULL, '');"
                         "PRAGMA user_version = 1;";
  ASSERT_EQ(sqlite3_exec(raw, v1.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);

  HistoryDb db(path);
  EXPECT_EQ(db.schema_version(), HistoryDb::kSchemaVersion);
  const auto history = db.node_history("node0");
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].run.run_id, "old-run");
  EXPECT_FALSE(history[0].metrics[0].moments);
}

TEST(HistoryDbTest, RefusesADatabaseFromANewerCommcert) {
  TempDirectory tmp;
  const fs::path path = tmp.path() / "history.db";
  { HistoryDb db(path); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_THROW(HistoryDb{path}, UsageError);
}

TEST(HistoryDbTest, RefusesAFileThatIsNotADatabase) {
  TempDirectory tmp;
  const fs::path path = tmp.path() / "notes.txt";
  std::ofstream(path) << "these are not the pages of a database, just text that is long enough\n";
  EXPECT_THROW(HistoryDb{path}, UsageError);
}

}  // namespace
}  // namespace commcert
