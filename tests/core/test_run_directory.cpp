#include <chrono>
#include <ctime>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/json.hpp"
#include "core/run_directory.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using commcert::test_support::TempDirectory;

TEST(MakeRunId, SortableTimestampCommandAndSalt) {
  const std::string id = make_run_id("sweep");
  std::smatch match;
  ASSERT_TRUE(std::regex_match(
      id, match, std::regex(R"((\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-sweep-[0-9a-f]{6})")))
      << id;
  // The timestamp is now, in UTC.
  std::tm utc{};
  utc.tm_year = std::stoi(match[1]) - 1900;
  utc.tm_mon = std::stoi(match[2]) - 1;
  utc.tm_mday = std::stoi(match[3]);
  utc.tm_hour = std::stoi(match[4]);
  utc.tm_min = std::stoi(match[5]);
  utc.tm_sec = std::stoi(match[6]);
  const std::time_t stamped = ::timegm(&utc);
  EXPECT_LE(std::abs(std::difftime(std::time(nullptr), stamped)), 5.0) << id;
  EXPECT_NO_THROW(validate_run_id(id));
}

TEST(MakeRunId, ConcurrentRunsGetDifferentIds) {
  std::set<std::string> ids;
  for (int i = 0; i < 50; ++i)
    ids.insert(make_run_id("burn"));
  EXPECT_EQ(ids.size(), 50u);
}

TEST(ValidateRunId, AcceptsDirectoryNameSafeIds) {
  for (const char* good :
       {"a", "20261121T233900Z-sweep-3f9a1c", "nightly_2026.11.21", "A-1", "_private", "0"}) {
    EXPECT_NO_THROW(validate_run_id(good)) << good;
  }
  EXPECT_NO_THROW(validate_run_id(std::string(128, 'r')));
}

TEST(ValidateRunId, RejectsAnythingThatIsNotOneSafePathComponent) {
  for (const char* bad : {"",    ".",    "..",        "../etc", "a/b", "/abs", ".hidden",  "-rf",
                          "a b", "a;b",  "$(reboot)", "`id`",   "a|b", "a&b",  "a>b",      "a*",
                          "a?",  "a\\b", "a\nb",      "a:b",    "a'b", "a\"b", "r\xc3\xa9"}) {
    EXPECT_THROW(validate_run_id(bad), UsageError) << bad;
  }
  EXPECT_THROW(validate_run_id(std::string(129, 'r')), UsageError);
  try {
    validate_run_id("a;b");
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--run-id"), std::string::npos) << error.what();
  }
}

TEST(ValidateRunId, AgreesWithTheRecordSchema) {
  // Every id the writer accepts must pass the validator's schema, and the schema must not
  // admit ids the writer refuses: records of a run would otherwise be judged malformed.
  std::ifstream in(std::string(COMMCERT_SOURCE_DIR) + "/docs/schema/record.schema.json");
  ASSERT_TRUE(in) << "record.schema.json not found";
  const Json schema = Json::parse(in);
  const std::regex pattern(schema.at("properties").at("run_id").at("pattern").get<std::string>());
  for (const std::string id : {"a", "20261121T233900Z-sweep-3f9a1c", "nightly_2026.11.21", "A-1",
                               "_private", "0", "x.", "y-"}) {
    EXPECT_NO_THROW(validate_run_id(id)) << id;
    EXPECT_TRUE(std::regex_match(id, pattern)) << id << " is refused by the schema";
  }
  for (const std::string& id :
       std::vector<std::string>{"", ".a", "-a", "a b", "a/b", std::string(129, 'r')}) {
    EXPECT_THROW(validate_run_id(id), UsageError) << id;
    EXPECT_FALSE(std::regex_match(id, pattern)) << id << " is admitted by the schema";
  }
}

TEST(CreateRunDirectory, CreatesTheRootAndTheRun) {
  TempDirectory dir;
  const auto root = dir.path() / "results" / "nested";
  const auto run = create_run_directory(root, "run-1");
  EXPECT_EQ(run, root / "run-1");
  EXPECT_TRUE(std::filesystem::is_directory(run));
}

TEST(CreateRunDirectory, ReusesAnExistingRunWithoutRemovingAnything) {
  TempDirectory dir;
  const auto run = create_run_directory(dir.path(), "run-1");
  std::ofstream(run / "records.jsonl") << "{\"stage\":\"sweep\"}\n";
  EXPECT_EQ(create_run_directory(dir.path(), "run-1"), run);
  std::ifstream in(run / "records.jsonl");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "{\"stage\":\"sweep\"}");
}

TEST(CreateRunDirectory, InvalidIdCreatesNothing) {
  TempDirectory dir;
  EXPECT_THROW((void)create_run_directory(dir.path() / "results", "../escape"), UsageError);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(CreateRunDirectory, UnwritableRootIsARuntimeFailure) {
  TempDirectory dir;
  std::ofstream(dir.path() / "file") << "x";  // a file where the root directory should be
  EXPECT_THROW((void)create_run_directory(dir.path() / "file", "run"), RuntimeFailure);
}

}  // namespace
}  // namespace commcert
