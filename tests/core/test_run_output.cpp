#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "core/run_output.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using commcert::test_support::TempDirectory;

std::vector<Json> read_records(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<Json> records;
  for (std::string line; std::getline(in, line);)
    records.push_back(Json::parse(line));
  return records;
}

Json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

TEST(RunOutput, PathsInsideTheRunDirectory) {
  TempDirectory dir;
  RunOutput output(dir.path(), "20261121T233900Z-sweep-3f9a1c", true);
  EXPECT_EQ(output.directory(), dir.path());
  EXPECT_EQ(output.run_id(), "20261121T233900Z-sweep-3f9a1c");
  EXPECT_EQ(output.records_path(), dir.path() / "records.jsonl");
  EXPECT_EQ(output.meta_path(), dir.path() / "meta.json");
}

TEST(RunOutput, NothingIsCreatedUntilSomethingIsWritten) {
  TempDirectory dir;
  RunOutput output(dir.path(), "run", true);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(RunOutput, RecordsAreAppendedInOrder) {
  TempDirectory dir;
  RunOutput output(dir.path(), "run", false);
  for (int i = 0; i < 5; ++i)
    output.append_record({{"kind", "collective"}, {"i", i}});
  const auto records = read_records(output.records_path());
  ASSERT_EQ(records.size(), 5u);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(records[static_cast<std::size_t>(i)].at("i"), i);
}

TEST(RunOutput, AppendsToRecordsOfAnEarlierStage) {
  TempDirectory dir;
  RunOutput(dir.path(), "run", true).append_record({{"stage", 1}});
  RunOutput(dir.path(), "run", true).append_record({{"stage", 2}});
  const auto records = read_records(dir.path() / "records.jsonl");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("stage"), 1);
  EXPECT_EQ(records[1].at("stage"), 2);
}

TEST(RunOutput, MetaIsMergedAndRewrittenAtomically) {
  TempDirectory dir;
  RunOutput output(dir.path(), "run", true);
  output.update_meta({{"schema", 1}, {"status", "running"}, {"exit_code", nullptr}});
  EXPECT_EQ(read_json(output.meta_path()).at("status"), "running");
  output.update_meta({{"status", "ok"}, {"exit_code", 0}, {"end_time", "t"}});
  const Json meta = read_json(output.meta_path());
  EXPECT_EQ(meta.at("schema"), 1);  // kept from the first update
  EXPECT_EQ(meta.at("status"), "ok");
  EXPECT_EQ(meta.at("exit_code"), 0);
  EXPECT_EQ(meta.at("end_time"), "t");
  // Fields stay in the order they were first set.
  std::vector<std::string> keys;
  for (const auto& [key, value] : meta.items())
    keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "status", "exit_code", "end_time"}));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"meta.json"}) << "no temporary file left";
}

TEST(RunOutput, AnEarlierStagesMetaIsKeptNotOverwritten) {
  TempDirectory dir;
  RunOutput(dir.path(), "run", true).update_meta({{"command", "health"}, {"status", "ok"}});
  RunOutput(dir.path(), "run", true).update_meta({{"command", "sweep"}, {"status", "running"}});
  RunOutput third(dir.path(), "run", true);
  third.update_meta({{"command", "sweep"}, {"status", "fail"}});
  Json meta = read_json(third.meta_path());
  EXPECT_EQ(meta.at("command"), "sweep");
  EXPECT_EQ(meta.at("status"), "fail");
  ASSERT_EQ(meta.at("earlier").size(), 2u);
  EXPECT_EQ(meta.at("earlier")[0], (Json{{"command", "health"}, {"status", "ok"}}));
  EXPECT_EQ(meta.at("earlier")[1], (Json{{"command", "sweep"}, {"status", "running"}}));
  EXPECT_EQ(meta.items().begin().key(), "command");  // the latest command's fields first

  // A meta.json that cannot be read is set aside, not lost.
  std::ofstream(third.meta_path()) << "{\"command\": \"bur";
  RunOutput(dir.path(), "run", true).update_meta({{"command", "membw"}});
  meta = read_json(third.meta_path());
  EXPECT_FALSE(meta.contains("earlier"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "meta.json.unreadable"));
}

TEST(RunOutput, OnlyTheOwnerWritesMeta) {
  TempDirectory dir;
  RunOutput output(dir.path(), "run", false);
  output.update_meta({{"status", "running"}});
  EXPECT_FALSE(std::filesystem::exists(output.meta_path()));
  output.append_record({{"kind", "error"}});  // any process may append a record
  EXPECT_EQ(read_records(output.records_path()).size(), 1u);
}

TEST(RunOutput, ConcurrentWritersNeverInterleaveLines) {
  // The watchdog thread writes a timeout record while the main thread may be writing too.
  TempDirectory dir;
  RunOutput output(dir.path(), "run", true);
  constexpr int kPerThread = 25;
  const std::string payload(2000, 'p');  // long lines make torn writes visible
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        output.append_record({{"thread", t}, {"i", i}, {"payload", payload}});
        if (i % 10 == 0) output.update_meta({{"last_" + std::to_string(t), i}});
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  const auto records = read_records(output.records_path());  // throws on a torn line
  ASSERT_EQ(records.size(), 3u * kPerThread);
  std::vector<int> next(3, 0);
  for (const auto& record : records) {
    const int t = record.at("thread");
    EXPECT_EQ(record.at("i"), next[static_cast<std::size_t>(t)]++) << "per-thread order";
    EXPECT_EQ(record.at("payload"), payload);
  }
  const Json meta = read_json(output.meta_path());
  for (int t = 0; t < 3; ++t)
    EXPECT_EQ(meta.at("last_" + std::to_string(t)), 20);
}

}  // namespace
}  // namespace commcert
