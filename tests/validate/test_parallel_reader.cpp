// The reader parses chunks of a file on several threads and appends their evidence in file
// order: whatever the number of threads and the chunk size, the evidence and the verdict must
// be those of reading every line on one thread.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "scoped_environment.hpp"
#include "support.hpp"
#include "validate/record_reader.hpp"
#include "validate/verdict.hpp"

namespace commcert {
namespace {

using fixtures::Fault;
using fixtures::FaultKind;

// A fleet with a fault of many kinds (wrong data, a hang, a straggler, health and burn faults,
// a truncated line), plus what only the reader notices: a records file copied into a second run
// directory, garbage, a record of a kind nobody judges and a blank line.
std::vector<std::filesystem::path> write_inputs(const std::filesystem::path& root) {
  fixtures::FleetSpec spec;
  spec.nodes = 24;
  spec.seed = 11;
  spec.collectives = {"allreduce", "allgather"};
  spec.faults = {{FaultKind::kWrongData, 3},
                 {FaultKind::kHang, 5},
                 {FaultKind::kStraggler, 6, 0, 0, 0.5},
                 {FaultKind::kBurnMiscompare, 7, 2},
                 {FaultKind::kEcc, 8, 1, 0, 2},
                 {FaultKind::kIbDown, 9, 0, 2},
                 {FaultKind::kMembwSlow, 10, 1, 0, 0.1},
                 {FaultKind::kXid, 11, 4, 0, 79},
                 {FaultKind::kTruncated, 12}};
  fixtures::write_fleet(spec, root);
  std::filesystem::create_directories(root / "copy");
  std::filesystem::copy_file(root / "burn" / "records.jsonl", root / "copy" / "records.jsonl");
  std::ofstream extra(root / "collectives-node" / "records.jsonl", std::ios::app);
  extra << "{not json\n\n"
        << R"({"schema":1,"kind":"thermal","run_id":"x","status":"fail","host":"node2","time":"t"})"
        << "\n";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().filename() == "records.jsonl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Evidence read_all(const std::vector<std::filesystem::path>& files, RecordReader::Options options) {
  Evidence evidence;
  RecordReader reader(evidence, options);
  for (const auto& file : files)
    reader.read_file(file);
  evidence.finish();
  return evidence;
}

std::vector<std::string> pool(const StringPool& strings) {
  std::vector<std::string> out;
  for (StringId id = 0; id < strings.size(); ++id)
    out.push_back(strings.at(id));
  return out;
}

std::vector<std::string> issues(const Evidence& evidence) {
  std::vector<std::string> out;
  for (const auto& i : evidence.issues) {
    out.push_back(fmt::format("{} {}:{} {} node {} run {}", i.code, i.ref.file, i.ref.line,
                              i.detail, i.node, i.run));
  }
  return out;
}

// verdict.json as certify writes it, less the time it was written.
std::string verdict_text(const Evidence& evidence, const Baseline& baseline) {
  Json verdict = to_json(fixtures::certify(evidence, baseline));
  verdict.erase("time");
  return verdict.dump(2);
}

TEST(ParallelReader, GivesTheEvidenceAndVerdictOfOneThreadWhateverTheChunking) {
  fixtures::TempDir dir;
  const auto files = write_inputs(dir.path());
  const Baseline baseline = fixtures::shipped_baseline("h100-sxm-8gpu-ndr400");
  const Evidence one = read_all(files, {1});
  const std::string expected = verdict_text(one, baseline);
  // What the fleet must show for the comparison to mean anything.
  ASSERT_GT(one.files.size(), 5u);
  ASSERT_GT(one.faults.size(), 3u);
  ASSERT_FALSE(one.timeouts.empty());
  ASSERT_GT(std::count_if(one.files.begin(), one.files.end(),
                          [](const auto& f) { return f.duplicates > 0; }),
            0);
  for (const std::size_t chunk_bytes : {std::size_t{1} << 12, std::size_t{1} << 16}) {
    for (const std::size_t threads : {2u, 3u}) {
      SCOPED_TRACE(fmt::format("{} threads, {}-byte chunks", threads, chunk_bytes));
      const Evidence many = read_all(files, {threads, chunk_bytes});
      EXPECT_EQ(pool(many.nodes), pool(one.nodes));
      EXPECT_EQ(pool(many.strings), pool(one.strings));
      EXPECT_EQ(issues(many), issues(one));
      ASSERT_EQ(many.files.size(), one.files.size());
      for (std::size_t f = 0; f < one.files.size(); ++f) {
        EXPECT_EQ(many.files[f].lines, one.files[f].lines);
        EXPECT_EQ(many.files[f].records, one.files[f].records);
        EXPECT_EQ(many.files[f].duplicates, one.files[f].duplicates);
        EXPECT_EQ(many.files[f].unreadable, one.files[f].unreadable);
        EXPECT_EQ(many.files[f].truncated, one.files[f].truncated);
      }
      EXPECT_EQ(many.groups, one.groups);
      EXPECT_EQ(many.collectives.size(), one.collectives.size());
      EXPECT_EQ(many.faults.size(), one.faults.size());
      EXPECT_EQ(verdict_text(many, baseline), expected);
    }
  }
}

// A chunk that cannot be read stops the file with the same error, and no thread is left behind.
TEST(ParallelReader, ALineLongerThanAnyRecordStopsTheFileAsWithOneThread) {
  fixtures::TempDir dir;
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += fixtures::burn("n" + std::to_string(i), i % 8, 700).dump() + "\n";
  text += std::string(std::size_t{65} << 20, 'x');
  const auto file = dir.write("records.jsonl", text);
  for (const std::size_t threads : {1u, 3u}) {
    Evidence evidence;
    RecordReader reader(evidence, {threads, std::size_t{1} << 16});
    EXPECT_THROW(reader.read_file(file), UsageError) << threads << " threads";
  }
}

// The number of parsing threads from COMMCERT_PARSE_THREADS: 1 to 64, anything else refused
// naming the variable rather than read as some other number.
TEST(ParallelReader, AThreadCountOutsideOneTo64IsRefusedNamingTheVariable) {
  fixtures::TempDir dir;
  const auto file = dir.write("records.jsonl", fixtures::burn("n0", 0, 700).dump() + "\n");
  for (const char* accepted : {"1", "2", "64", ""}) {
    test_support::ScopedEnvironment threads("COMMCERT_PARSE_THREADS", accepted);
    Evidence evidence;
    RecordReader reader(evidence);
    reader.read_file(file);
    EXPECT_EQ(evidence.burns.size(), 1u) << "'" << accepted << "'";
  }
  for (const char* refused : {"0", "65", "two", "4x", "-1", " 2", "\xc3\xa9", "\x1b[2J"}) {
    test_support::ScopedEnvironment threads("COMMCERT_PARSE_THREADS", refused);
    Evidence evidence;
    try {
      RecordReader reader(evidence);
      ADD_FAILURE() << "'" << refused << "' was accepted";
    } catch (const UsageError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("COMMCERT_PARSE_THREADS: expected a number of threads from 1 to 64"),
                std::string::npos)
          << message;
      EXPECT_EQ(message.find('\x1b'), std::string::npos) << "the terminal escape is shown raw";
    }
  }
}

TEST(ParallelReader, ByDefaultOneThreadPerCoreFromOneToFour) {
  EXPECT_EQ(RecordReader::default_parse_threads(0), 1u);  // the count is unknown
  EXPECT_EQ(RecordReader::default_parse_threads(1), 1u);
  EXPECT_EQ(RecordReader::default_parse_threads(2), 2u);
  EXPECT_EQ(RecordReader::default_parse_threads(3), 3u);
  EXPECT_EQ(RecordReader::default_parse_threads(4), 4u);
  EXPECT_EQ(RecordReader::default_parse_threads(5), 4u);
  EXPECT_EQ(RecordReader::default_parse_threads(192), 4u);
}

}  // namespace
}  // namespace commcert
