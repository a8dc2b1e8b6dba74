#include <cstdint>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support.hpp"
#include "validate/detail/line_set.hpp"
#include "validate/inputs.hpp"
#include "validate/record_reader.hpp"

namespace commcert {
namespace {

using fixtures::TempDir;
using ::testing::HasSubstr;

Evidence read_text(const TempDir& dir, const std::string& text) {
  const auto file = dir.write("records.jsonl", text);
  Evidence evidence;
  RecordReader reader(evidence);
  reader.read_file(file);
  evidence.finish();
  return evidence;
}

std::vector<std::string> issue_codes(const Evidence& evidence) {
  std::vector<std::string> out;
  for (const auto& issue : evidence.issues)
    out.push_back(issue.code);
  return out;
}

TEST(RecordReader, ReadsEveryKindTheValidatorJudges) {
  TempDir dir;
  std::string text;
  for (const auto& r : {fixtures::run_record({"n0", "n1"}), fixtures::collective(1 << 20, 2.5),
                        fixtures::burn("n0", 0, 700), fixtures::membw("n0", 0, 2500),
                        fixtures::gpu_health("n1", 3)}) {
    text += r.dump() + "\n";
  }
  const Evidence e = read_text(dir, text);
  EXPECT_EQ(e.files[0].records, 5u);
  ASSERT_EQ(e.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(e.collectives[0].busbw_bytes_per_s, 2.5e9);
  EXPECT_EQ(e.collectives[0].bytes, 1u << 20);
  EXPECT_TRUE(e.collectives[0].checked);
  EXPECT_EQ(e.participants(e.collectives[0]).size(), 2u);  // from the run record's rank map
  ASSERT_EQ(e.burns.size(), 1u);
  EXPECT_EQ(e.burns[0].tflops, 700);
  EXPECT_EQ(e.burns[0].gpu.index, 0);
  EXPECT_EQ(e.text(e.burns[0].gpu.uuid), "GPU-n0-0");
  ASSERT_EQ(e.membws.size(), 1u);
  EXPECT_EQ(e.membws[0].copy, 2500e9);
  ASSERT_EQ(e.gpu_health.size(), 1u);
  EXPECT_EQ(e.gpu_health[0].nvlinks->size(), 18u);
  EXPECT_EQ(e.node_name(e.gpu_health[0].node), "n1");
  EXPECT_TRUE(e.issues.empty());
}

TEST(RecordReader, TruncatedLastLineIsReportedAndAttributedToItsNode) {
  TempDir dir;
  const std::string good = fixtures::burn("n0", 0, 700).dump();
  const std::string cut = fixtures::burn("n7", 1, 700).dump();
  const Evidence e = read_text(dir, good + "\n" + cut.substr(0, cut.size() / 2));
  EXPECT_EQ(e.files[0].records, 1u);
  EXPECT_TRUE(e.files[0].truncated);
  EXPECT_EQ(e.files[0].unreadable, 1u);
  ASSERT_EQ(e.issues.size(), 1u);
  EXPECT_EQ(e.issues[0].code, "input.truncated");
  EXPECT_EQ(e.issues[0].ref.line, 2u);
  ASSERT_NE(e.issues[0].node, kNoString);
  EXPECT_EQ(e.node_name(e.issues[0].node), "n7");
}

TEST(RecordReader, GarbageInTheMiddleIsUnparsableNotTruncated) {
  TempDir dir;
  const Evidence e =
      read_text(dir, fixtures::burn("n0", 0, 700).dump() + "\n{\"schema\":1,\"kind\":\n" +
                         fixtures::burn("n0", 1, 700).dump() + "\n");
  EXPECT_EQ(e.burns.size(), 2u);
  EXPECT_EQ(issue_codes(e), std::vector<std::string>{"input.unparsable"});
  EXPECT_EQ(e.issues[0].ref.line, 2u);
  EXPECT_FALSE(e.files[0].truncated);
}

TEST(RecordReader, WrongFieldTypeLosesTheRecordLoudly) {
  TempDir dir;
  Json bad = fixtures::collective(1 << 20, 2.5);
  bad["busbw_bytes_per_s"] = "fast";
  const Evidence e = read_text(dir, bad.dump() + "\n");
  EXPECT_TRUE(e.collectives.empty());
  ASSERT_EQ(issue_codes(e), std::vector<std::string>{"input.unparsable"});
  EXPECT_THAT(e.issues[0].detail, HasSubstr("busbw_bytes_per_s"));
  ASSERT_NE(e.issues[0].run, kNoString);  // a collective: attributed to its run, not its writer
}

TEST(RecordReader, AHostThatIsNoNodeNameLosesTheRecordNamingFieldAndName) {
  // A node name ends up in Slurm commands, file names and every report: a record that names a
  // node by anything else is lost as unreadable, one line naming the field and the name.
  TempDir dir;
  Json markup = fixtures::collective(1 << 20, 2.5, "cluster", "<img src=x onerror=alert(1)>");
  Json straggler = fixtures::collective(2 << 20, 2.5);
  straggler["straggler"] = {{"rank", 1}, {"host", "n1\n\x1b[2J"}, {"time_s", 0.1}, {"lead_s", 0}};
  const Evidence e = read_text(dir, markup.dump() + "\n" + straggler.dump() + "\n");
  EXPECT_TRUE(e.collectives.empty());
  ASSERT_EQ(issue_codes(e), (std::vector<std::string>{"input.unparsable", "input.unparsable"}));
  EXPECT_THAT(e.issues[0].detail,
              HasSubstr("host: invalid node name '<img src=x onerror=alert(1)>'"));
  EXPECT_THAT(e.issues[1].detail, HasSubstr("invalid node name 'n1\\n\\x1b[2J'"));
  for (const auto& issue : e.issues)
    EXPECT_EQ(issue.detail.find('\n'), std::string::npos);
  EXPECT_FALSE(e.nodes.find("<img src=x onerror=alert(1)>"));
}

TEST(RecordReader, ALongInvalidNodeNameIsShownCutAtACharacter) {
  TempDir dir;
  const std::string name = std::string(63, 'x') + "\u00e9" + std::string(65536, 'y');
  const Evidence e =
      read_text(dir, fixtures::collective(1 << 20, 2.5, "cluster", name).dump() + "\n");
  ASSERT_EQ(issue_codes(e), std::vector<std::string>{"input.unparsable"});
  EXPECT_THAT(e.issues[0].detail, HasSubstr("'" + std::string(63, 'x') + "...': longer than 64"));
}

TEST(RecordReader, ANegativeCountIsRefusedNamingItsFieldAndZeroIsRead) {
  // A count of errors, pages or miscompares below zero is no count: read as one it would pass
  // every "at most N" limit (and a negative time would hide the event it times). The record is
  // lost loudly, as any malformed record is.
  Json gpu = fixtures::gpu_health("n0", 0);
  gpu["retired_pages"] = {{"single_bit", 0}, {"double_bit", 0}, {"pending", false}};
  Json port = fixtures::record("health", "n0");
  port["component"] = "ib_port";
  port["device"] = "mlx5_0";
  port["port"] = 1;
  port["counters"] = {{"symbol_error", 0}, {"link_downed", 0}};
  Json burn_throttled = fixtures::burn("n0", 0, 700);
  burn_throttled["telemetry"] = {{"throttle", {{{"reason", "hw_slowdown"}, {"seconds", 1.0}}}}};
  const std::vector<std::pair<Json, std::string>> counts = {
      {gpu, "/ecc/volatile/uncorrected"},
      {gpu, "/ecc/volatile/corrected"},
      {gpu, "/remapped_rows/correctable"},
      {gpu, "/remapped_rows/uncorrectable"},
      {gpu, "/retired_pages/single_bit"},
      {gpu, "/retired_pages/double_bit"},
      {gpu, "/pcie/replay_count"},
      {gpu, "/nvlink/3/replay_errors"},
      {gpu, "/nvlink/3/recovery_errors"},
      {gpu, "/nvlink/3/crc_flit_errors"},
      {gpu, "/nvlink/3/crc_data_errors"},
      {port, "/counters/symbol_error"},
      {fixtures::burn("n0", 0, 700), "/miscompares"},
      {fixtures::membw("n0", 0, 2500), "/integrity/errors"},
      {fixtures::membw("n0", 0, 2500), "/integrity/bytes_tested"},
      {fixtures::collective(1 << 20, 2.5), "/wrong_elements"},
      {burn_throttled, "/telemetry/throttle/0/seconds"}};
  for (const auto& [record, pointer] : counts) {
    SCOPED_TRACE(pointer);
    const std::string field = pointer.substr(pointer.rfind('/') + 1);
    for (const int value : {0, -1}) {
      Json r = record;
      r[Json::json_pointer(pointer)] = value;
      TempDir dir;
      const Evidence e = read_text(dir, r.dump() + "\n");
      if (value == 0) {
        EXPECT_TRUE(e.issues.empty());
        continue;
      }
      ASSERT_EQ(issue_codes(e), std::vector<std::string>{"input.unparsable"});
      EXPECT_THAT(e.issues[0].detail, HasSubstr(field + ": negative (-1)"));
    }
  }
}

TEST(RecordReader, MissingEvidenceFieldsAreNullNotZero) {
  TempDir dir;
  Json r = fixtures::burn("n0", 0, 700);
  r["tflops"] = nullptr;
  r.erase("peer_mismatch");
  const Evidence e = read_text(dir, r.dump() + "\n");
  ASSERT_EQ(e.burns.size(), 1u);
  EXPECT_FALSE(e.burns[0].tflops.has_value());
  EXPECT_FALSE(e.burns[0].peer_mismatch.has_value());
}

TEST(RecordReader, NvlinkCountersKeepNoneApartFromZeroUpToTheLargestCount) {
  // The counters are held in 8 bytes, none being a value no count can take: null must stay none
  // (the rule then reads no errors, as NVML reports for an unsupported counter), 0 stay 0 and
  // the largest count survive, so that a link with errors is never read as one without.
  TempDir dir;
  Json r = fixtures::gpu_health("n0", 0);
  r["nvlink"][0]["replay_errors"] = nullptr;
  r["nvlink"][1]["replay_errors"] = 0;
  r["nvlink"][2]["replay_errors"] = std::numeric_limits<std::int64_t>::max();
  r["nvlink"][3].erase("crc_data_errors");
  const Evidence e = read_text(dir, r.dump() + "\n");
  ASSERT_EQ(e.gpu_health.size(), 1u);
  const auto& links = e.gpu_health[0].nvlinks.value();
  ASSERT_GE(links.size(), 4u);
  EXPECT_FALSE(links[0].replay_errors.has_value());
  EXPECT_EQ(links[0].replay_errors, std::nullopt);
  EXPECT_EQ(links[0].replay_errors.value_or(-1), -1);
  EXPECT_TRUE(links[1].replay_errors.has_value());
  EXPECT_EQ(links[1].replay_errors, 0);
  EXPECT_EQ(links[2].replay_errors.get(), std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(links[3].crc_data_errors);
  EXPECT_TRUE(links[3].crc_flit_errors);
}

TEST(RecordReader, ExactDuplicatesAreReadOnceAndCounted) {
  TempDir dir;
  const std::string line = fixtures::burn("n0", 0, 700).dump() + "\n";
  const Evidence e = read_text(dir, line + line + line);
  EXPECT_EQ(e.burns.size(), 1u);
  EXPECT_EQ(e.files[0].duplicates, 2u);
  EXPECT_EQ(issue_codes(e), std::vector<std::string>{"input.duplicate_records"});
}

// Two 32-byte lines that wyhash, the fingerprint's primary hash, cannot tell apart: their first
// word equals its published secret, which makes the first product 0 whatever the second word
// (where the lines differ) holds.
std::pair<std::string, std::string> lines_sharing_the_primary_hash() {
  std::string first =
      "\xdb\x28\xb4\xa0\xd1\x7e\x03\xe7"
      "AAAAAAAA"
      "same tail, 16 B.";
  std::string second = first;
  second.replace(8, 8, "BBBBBBBB");
  return {first, second};
}

TEST(RecordReader, LinesSharingOnlyThePrimaryHashAreBothRead) {
  const auto [first, second] = lines_sharing_the_primary_hash();
  const auto first_print = detail::LineSet::fingerprint(first);
  const auto second_print = detail::LineSet::fingerprint(second);
  ASSERT_EQ(first_print.primary, second_print.primary);  // the collision is real
  EXPECT_NE(first_print.check, second_print.check);
  TempDir dir;
  const Evidence e = read_text(dir, first + "\n" + second + "\n" + second + "\n");
  EXPECT_EQ(e.files[0].duplicates, 1u);  // the third line only
  EXPECT_EQ(issue_codes(e), (std::vector<std::string>{"input.unparsable", "input.unparsable",
                                                      "input.duplicate_records"}));
}

TEST(RecordReader, AFingerprintIsARepeatOnlyWhenBothHashesMatch) {
  // Pairs of fingerprints share a primary hash (and so a probe sequence); enough of them to make
  // the table grow twice, so that growth is shown to keep each entry's check hash.
  detail::LineSet seen;
  constexpr std::uint32_t kEntries = 4000;
  const auto print = [](std::uint32_t i) {
    return detail::LineFingerprint{1 + i / 2, 0x9e3779b97f4a7c15ull * (i + 1)};
  };
  for (std::uint32_t i = 0; i < kEntries; ++i)
    ASSERT_FALSE(seen.insert_fingerprinted(print(i), {0, i + 1})) << i;
  for (std::uint32_t i = 0; i < kEntries; ++i) {
    const auto first = seen.insert_fingerprinted(print(i), {1, i + 1});
    ASSERT_TRUE(first) << i;
    EXPECT_EQ(first->file, 0u);
    EXPECT_EQ(first->line, i + 1);
  }
}

TEST(RecordReader, NewerSchemaAndUnknownKindsAreReportedNotGuessed) {
  TempDir dir;
  Json newer = fixtures::burn("n0", 0, 700);
  newer["schema"] = 2;
  Json future = fixtures::record("kind_of_the_future", "n0");
  const Evidence e = read_text(dir, newer.dump() + "\n" + future.dump() + "\n");
  EXPECT_TRUE(e.burns.empty());
  EXPECT_EQ(issue_codes(e),
            (std::vector<std::string>{"input.unsupported_schema", "input.unknown_kind"}));
  EXPECT_THAT(e.issues[1].detail, HasSubstr("'kind_of_the_future'"));
}

TEST(RecordReader, ToleratesBlankLinesAndCarriageReturns) {
  TempDir dir;
  const std::string line = fixtures::burn("n0", 0, 700).dump();
  const Evidence e = read_text(dir, "\n" + line + "\r\n\n   \n");
  EXPECT_EQ(e.burns.size(), 1u);
  EXPECT_TRUE(e.issues.empty());
}

TEST(RecordReader, UnknownFieldsAreIgnored) {
  TempDir dir;
  Json r = fixtures::burn("n0", 0, 700);
  r["added_in_a_later_version"] = {{"nested", Json::array({1, 2})}};
  const Evidence e = read_text(dir, r.dump() + "\n");
  EXPECT_EQ(e.burns.size(), 1u);
  EXPECT_TRUE(e.issues.empty());
}

// Lines longer than the reader's buffer (a cluster-wide record with every rank's time).
TEST(RecordReader, ReadsLinesLongerThanItsBuffer) {
  TempDir dir;
  Json c = fixtures::collective(1 << 20, 2.5);
  c["rank_time_s"] = std::vector<double>(3'000'000, 0.123456789);
  const Evidence e = read_text(dir, c.dump() + "\n" + fixtures::burn("n0", 0, 1).dump() + "\n");
  EXPECT_EQ(e.collectives.size(), 1u);
  EXPECT_EQ(e.burns.size(), 1u);
}

// The reader works in 16 MiB chunks on a background thread: no line may be lost or split
// where one chunk ends and the next begins.
TEST(RecordReader, NoLineIsLostAcrossChunkBoundaries) {
  TempDir dir;
  std::string text;
  constexpr int kRecords = 120000;  // about 30 MiB: two chunk boundaries
  for (int i = 0; i < kRecords; ++i)
    text += fixtures::burn("n" + std::to_string(i), i % 8, 700).dump() + "\n";
  const Evidence e = read_text(dir, text);
  EXPECT_EQ(e.files[0].records, static_cast<std::size_t>(kRecords));
  EXPECT_EQ(e.files[0].lines, static_cast<std::size_t>(kRecords));
  EXPECT_EQ(e.burns.size(), static_cast<std::size_t>(kRecords));
  EXPECT_EQ(e.node_name(e.burns.back().node), "n" + std::to_string(kRecords - 1));
  EXPECT_TRUE(e.issues.empty());
}

TEST(LoadInputs, ResolvesRunDirectoriesRootsAndFiles) {
  TempDir dir;
  dir.write("a/records.jsonl", fixtures::burn("n0", 0, 700).dump() + "\n");
  dir.write("b/records.jsonl", fixtures::burn("n1", 0, 700).dump() + "\n");
  dir.write("b/meta.json",
            R"({"run_id": "b", "status": "running", "fault_injection": "corrupt:2"})");
  const LoadedInputs root = load_inputs({dir.path().string()});
  EXPECT_EQ(root.evidence.files.size(), 2u);
  EXPECT_EQ(root.evidence.burns.size(), 2u);
  std::vector<std::string> notes;
  for (const auto& n : root.notes)
    notes.push_back(n.code);
  EXPECT_EQ(notes, (std::vector<std::string>{"input.run_unfinished", "input.fault_injection"}));

  const LoadedInputs twice =
      load_inputs({(dir.path() / "a").string(), (dir.path() / "a/records.jsonl").string()});
  EXPECT_EQ(twice.evidence.files.size(), 1u);
  ASSERT_EQ(twice.notes.size(), 1u);
  EXPECT_EQ(twice.notes[0].code, "input.duplicate_file");
  EXPECT_EQ(twice.first_directory, dir.path() / "a");
}

TEST(LoadInputs, EmptyOrMissingResultsAreErrorsNotPasses) {
  TempDir dir;
  EXPECT_THROW((void)load_inputs({}), UsageError);
  EXPECT_THROW((void)load_inputs({(dir.path() / "nope").string()}), UsageError);
  std::filesystem::create_directories(dir.path() / "empty");
  EXPECT_THROW((void)load_inputs({(dir.path() / "empty").string()}), UsageError);
  dir.write("blank/records.jsonl", "");
  try {
    (void)load_inputs({(dir.path() / "blank").string()});
    FAIL() << "an empty records file certified nothing and was accepted";
  } catch (const UsageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("nothing to certify"));
  }
}

}  // namespace
}  // namespace commcert
