#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/json.hpp"
#include "core/records_file.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using commcert::test_support::TempDirectory;

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  const std::string text = read_all(path);
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', start)) {
    lines.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  EXPECT_EQ(start, text.size()) << "the file must end with a complete line";
  return lines;
}

TEST(RecordsFile, EachAppendIsOneLineOfValidJson) {
  TempDirectory dir;
  const auto path = dir.path() / "records.jsonl";
  {
    RecordsFile file(path);
    EXPECT_EQ(file.path(), path);
    file.append({{"kind", "run"}, {"n", 0}});
    file.append({{"kind", "collective"}, {"n", 1}, {"nested", {{"a", {1, 2, 3}}}}});
    // A string with a newline, a quote and a tab must not break the line structure.
    file.append({{"kind", "error"}, {"n", 2}, {"reason", "line one\nline \"two\"\tend"}});
  }
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 3u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Json record = Json::parse(lines[i]);
    EXPECT_EQ(record.at("n"), static_cast<int>(i));
  }
  EXPECT_EQ(Json::parse(lines[2]).at("reason"), "line one\nline \"two\"\tend");
  EXPECT_EQ(Json::parse(lines[1]).at("nested").at("a"), Json::array({1, 2, 3}));
}

TEST(RecordsFile, KeepsTheOrderOfFields) {
  TempDirectory dir;
  const auto path = dir.path() / "records.jsonl";
  Json record = Json::object();
  record["schema"] = 1;
  record["zeta"] = true;
  record["alpha"] = nullptr;
  RecordsFile(path).append(record);
  EXPECT_EQ(lines_of(path).at(0), R"({"schema":1,"zeta":true,"alpha":null})");
}

TEST(RecordsFile, ReopeningAppendsAndKeepsEarlierRecords) {
  TempDirectory dir;
  const auto path = dir.path() / "records.jsonl";
  RecordsFile(path).append({{"stage", "sweep"}});
  RecordsFile(path).append({{"stage", "burn"}});
  {
    RecordsFile file(path);
    file.append({{"stage", "health"}});
  }
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(Json::parse(lines[0]).at("stage"), "sweep");
  EXPECT_EQ(Json::parse(lines[1]).at("stage"), "burn");
  EXPECT_EQ(Json::parse(lines[2]).at("stage"), "health");
}

TEST(RecordsFile, InvalidUtf8IsReplacedNotFatal) {
  // A hostname or error text can carry arbitrary bytes; the record must still be JSON.
  TempDirectory dir;
  const auto path = dir.path() / "records.jsonl";
  RecordsFile(path).append({{"reason", std::string("bad \xff\xfe byte")}});
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 1u);
  const Json record = Json::parse(lines[0]);
  EXPECT_EQ(record.at("reason").get<std::string>().substr(0, 4), "bad ");
}

TEST(RecordsFile, OpeningWhereNoFileCanBeIsARuntimeFailure) {
  TempDirectory dir;
  EXPECT_THROW(RecordsFile(dir.path() / "missing" / "records.jsonl"), RuntimeFailure);
  EXPECT_THROW(RecordsFile{dir.path()}, RuntimeFailure);  // a directory
}

TEST(WriteJsonFileAtomically, WritesReadableJsonAndLeavesNoTemporary) {
  TempDirectory dir;
  const auto path = dir.path() / "meta.json";
  write_json_file_atomically(path, {{"status", "running"}, {"exit_code", nullptr}});
  EXPECT_EQ(Json::parse(read_all(path)).at("status"), "running");
  EXPECT_EQ(read_all(path).back(), '\n');
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"meta.json"});
}

TEST(WriteJsonFileAtomically, ReplacesTheWholeFile) {
  TempDirectory dir;
  const auto path = dir.path() / "meta.json";
  Json big = Json::object();
  for (int i = 0; i < 200; ++i)
    big["key" + std::to_string(i)] = std::string(50, 'x');
  write_json_file_atomically(path, big);
  write_json_file_atomically(path, {{"status", "ok"}});
  // The shorter document replaced the longer one entirely: no leftover tail.
  EXPECT_EQ(Json::parse(read_all(path)), (Json{{"status", "ok"}}));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"meta.json"});
}

TEST(WriteJsonFileAtomically, FailureIsARuntimeFailure) {
  TempDirectory dir;
  EXPECT_THROW(write_json_file_atomically(dir.path() / "missing" / "meta.json", {{"a", 1}}),
               RuntimeFailure);
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
}  // namespace commcert
