// Reading nccl-tests text output: every layout in tests/fixtures/nccl_tests (written from the
// published format, docs/ingest.md), launcher prefixes, odd cells, and what becomes records.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "ingest/nccl_tests_json.hpp"
#include "ingest/nccl_tests_log.hpp"
#include "ingest/nccl_tests_records.hpp"

namespace commcert {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(COMMCERT_SOURCE_DIR) + "/tests/fixtures/nccl_tests/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

IngestedLog ingest(const NcclTestsLog& log, const std::string& file = "x.log") {
  return nccl_tests_records(log, IngestOptions{"run1", file, std::nullopt}, true);
}

IngestedLog ingest_on(const NcclTestsLog& log, const std::string& node,
                      const std::string& file = "all_reduce_perf.log") {
  return nccl_tests_records(log, IngestOptions{"run1", file, std::nullopt, node}, true);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kParameters =
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 5 agg "
    "iters: 1 validation: 1\n";
const std::string kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
    "time   algbw   busbw  #wrong\n";

// A row of all_reduce_perf with the given bandwidths in both placements, as printed.
std::string row(const std::string& algbw, const std::string& busbw,
                const std::string& size = "67108864") {
  return "  " + size + "  16777216  float  sum  -1  1000.0  " + algbw + "  " + busbw +
         "  0  1000.0  " + algbw + "  " + busbw + "  0\n";
}

// What a pasted table becomes on node `node`: its records, or why it was refused.
IngestedLog pasted(const std::string& rows, const std::string& node = "gpu-07",
                   const std::string& file = "all_reduce_perf.log") {
  return ingest_on(parse_nccl_tests_log(kParameters + kHeader + rows), node, file);
}

TEST(LauncherPrefixTest, RemovesOpenMpiTagsSrunLabelsAndBracketedRanks) {
  EXPECT_EQ(strip_launcher_prefix("[1,0]<stdout>:#  Rank  0"), "#  Rank  0");
  EXPECT_EQ(strip_launcher_prefix("[1,12]<stderr>:text"), "text");
  EXPECT_EQ(strip_launcher_prefix("[0] text"), " text");
  EXPECT_EQ(strip_launcher_prefix("0: # Avg"), "# Avg");
  EXPECT_EQ(strip_launcher_prefix(" 12: row"), "row");
  // A table row is not a label: its first number is followed by spaces, not a colon.
  EXPECT_EQ(strip_launcher_prefix("     1048576        262144"), "     1048576        262144");
  EXPECT_EQ(strip_launcher_prefix("[node01] text"), "[node01] text");
}

TEST(NcclTestsLogTest, ReadsTheCurrentLayout) {
  const NcclTestsLog log = parse_nccl_tests_log(fixture("allreduce_2nodes_v2.19.log"));
  EXPECT_TRUE(log.unreadable.empty());
  ASSERT_EQ(log.runs.size(), 1u);
  const NcclTestsRun& run = log.runs[0];
  EXPECT_EQ(run.program, "all_reduce_perf");
  EXPECT_EQ(run.version, "2.19.6");
  EXPECT_EQ(run.iterations, 20);
  EXPECT_EQ(run.warmup_iterations, 1);
  EXPECT_EQ(run.validation, 1);
  ASSERT_EQ(run.devices.size(), 4u);
  EXPECT_EQ(run.devices[2].host, "gpu-a02");
  EXPECT_EQ(run.devices[2].pci_bus_id, "0000:18:00");
  EXPECT_EQ(run.devices[3].device, 1);
  EXPECT_EQ(run.devices[3].name, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(run.rows.size(), 4u);
  const NcclTestsRow& last = run.rows[3];
  EXPECT_EQ(last.size_bytes, 67108864u);
  EXPECT_EQ(last.count, 16777216u);
  EXPECT_EQ(last.type, "float");
  EXPECT_EQ(last.redop, "sum");
  EXPECT_FALSE(last.root);
  ASSERT_TRUE(last.out_of_place && last.in_place);
  EXPECT_DOUBLE_EQ(last.out_of_place->time_us, 1117.24);
  EXPECT_DOUBLE_EQ(last.out_of_place->busbw_gb_s, 90.10);
  EXPECT_DOUBLE_EQ(last.in_place->busbw_gb_s, 88.30);
  EXPECT_EQ(last.out_of_place->wrong_elements, 0.0);
  EXPECT_TRUE(run.concluded);
  EXPECT_NEAR(*run.avg_busbw_gb_s, 67.3695, 1e-9);
  EXPECT_EQ(run.out_of_bounds, 0);
}

TEST(NcclTestsLogTest, TheOldErrorColumnIsNotACountOfWrongElements) {
  const NcclTestsLog log = parse_nccl_tests_log(fixture("all_reduce_perf_v2.11_error_column.log"));
  EXPECT_TRUE(log.unreadable.empty());
  ASSERT_EQ(log.runs.size(), 1u);
  const NcclTestsRun& run = log.runs[0];
  EXPECT_TRUE(run.program.empty());
  EXPECT_FALSE(run.wrong_is_count);
  ASSERT_EQ(run.devices.size(), 2u);
  EXPECT_EQ(run.devices[1].pci_bus_id, "0x0f");
  ASSERT_EQ(run.rows.size(), 4u);
  EXPECT_FALSE(run.rows[0].out_of_place->wrong_elements);
  // Not named in the log: the file name says which test it is, and nothing is data-verified.
  const IngestedLog records = ingest(log, "logs/all_reduce_perf_v2.11_error_column.log");
  EXPECT_EQ(records.tests, 1u);
  EXPECT_EQ(records.records[1]["collective"], "allreduce");
  EXPECT_EQ(records.records[1]["check"], false);
  EXPECT_TRUE(records.records[1]["wrong_elements"].is_null());
  // Without a name in the log or the file, the test is refused, not guessed.
  const IngestedLog anonymous = ingest(log, "logs/job-1234.out");
  EXPECT_EQ(anonymous.tests, 0u);
  ASSERT_EQ(anonymous.refused.size(), 1u);
  EXPECT_NE(anonymous.refused[0].why.find("--collective"), std::string::npos);
}

TEST(NcclTestsLogTest, LauncherPrefixesAndNcclInfoLinesDoNotChangeWhatIsRead) {
  const NcclTestsLog plain = parse_nccl_tests_log(fixture("allreduce_2nodes_v2.19.log"));
  for (const char* name : {"allreduce_tag_output.log", "allreduce_srun_label.log"}) {
    const NcclTestsLog log = parse_nccl_tests_log(fixture(name));
    EXPECT_TRUE(log.unreadable.empty()) << name;
    ASSERT_EQ(log.runs.size(), 1u) << name;
    EXPECT_EQ(log.runs[0].devices.size(), 4u) << name;
    ASSERT_EQ(log.runs[0].rows.size(), plain.runs[0].rows.size()) << name;
    EXPECT_DOUBLE_EQ(log.runs[0].rows[2].in_place->busbw_gb_s,
                     plain.runs[0].rows[2].in_place->busbw_gb_s);
  }
  EXPECT_EQ(parse_nccl_tests_log(fixture("allreduce_tag_output.log")).foreign_lines.size(), 2u);
}

TEST(NcclTestsLogTest, PerIterationColumnsAndTimestamps) {
  const NcclTestsLog log = parse_nccl_tests_log(fixture("allreduce_per_iteration_timestamps.log"));
  EXPECT_TRUE(log.unreadable.empty());
  ASSERT_EQ(log.runs.size(), 1u);
  ASSERT_EQ(log.runs[0].rows.size(), 4u);
  const NcclTestsPlacement& in_place = *log.runs[0].rows[0].in_place;
  EXPECT_DOUBLE_EQ(in_place.busbw_gb_s, 37.73);
  EXPECT_DOUBLE_EQ(*in_place.iteration_cv_pct, 3.10);
  EXPECT_DOUBLE_EQ(*in_place.iteration_min_us, 39.60);
  const IngestedLog records = ingest(log);
  const Json& first = records.records[1];
  EXPECT_EQ(first["iteration_time"]["count"], 20);
  EXPECT_NEAR(first["iteration_time"]["cv"].get<double>(), 0.031, 1e-12);
  EXPECT_TRUE(first["iteration_time"]["p50_s"].is_null());
}

TEST(NcclTestsLogTest, SeveralTestsInOneFile) {
  const NcclTestsLog log = parse_nccl_tests_log(fixture("several_tests.log"));
  EXPECT_TRUE(log.unreadable.empty());
  ASSERT_EQ(log.runs.size(), 4u);
  EXPECT_EQ(log.runs[1].program, "all_gather_perf");
  EXPECT_EQ(log.runs[1].rows[0].redop, "");  // "none"
  EXPECT_EQ(log.runs[2].rows[0].root, 0);
  EXPECT_EQ(log.runs[3].rows.size(), 2u);  // hypercube's empty redop field
  const IngestedLog records = ingest(log);
  EXPECT_EQ(records.tests, 3u);
  ASSERT_EQ(records.refused.size(), 1u);
  EXPECT_NE(records.refused[0].why.find("hypercube_perf"), std::string::npos);
  EXPECT_EQ(records.measurements, 24u);
  int run_records = 0;
  for (const auto& record : records.records)
    run_records += record["kind"] == "run";
  EXPECT_EQ(run_records, 1);
}

TEST(NcclTestsLogTest, ATruncatedLogKeepsItsWholeRowsAndSaysItWasCutOff) {
  const NcclTestsLog log = parse_nccl_tests_log(fixture("allreduce_truncated.log"));
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].rows.size(), 2u);
  ASSERT_EQ(log.unreadable.size(), 1u);
  EXPECT_EQ(log.unreadable[0].line, 16u);
  EXPECT_FALSE(log.runs[0].concluded);
  const IngestedLog records = ingest(log);
  EXPECT_EQ(records.measurements, 4u);
  EXPECT_EQ(records.unconcluded, std::vector<std::size_t>{1});
}

TEST(NcclTestsLogTest, GarbageLinesAreCountedAndACrashBecomesAnErrorRecordOnItsHost) {
  const NcclTestsLog log = parse_nccl_tests_log(fixture("allreduce_garbage_and_crash.log"));
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].rows.size(), 3u);
  ASSERT_EQ(log.unreadable.size(), 1u);  // the row-like garbage
  EXPECT_EQ(log.unreadable[0].line, 15u);
  EXPECT_EQ(log.foreign_lines, std::vector<std::size_t>{16});
  EXPECT_EQ(log.runs[0].errors.size(), 2u);
  const IngestedLog records = ingest(log);
  ASSERT_EQ(records.error_records, 2u);
  const Json& crash = records.records[records.records.size() - 2];
  EXPECT_EQ(crash["status"], "error");
  EXPECT_EQ(crash["host"], "gpu-a02");
  EXPECT_NE(crash["reason"].get<std::string>().find("x.log:19"), std::string::npos);
}

TEST(NcclTestsLogTest, WrongElementsFailTheirRecordAndUncheckedRowsAreNotDataVerified) {
  const IngestedLog wrong = ingest(parse_nccl_tests_log(fixture("allreduce_wrong_data.log")));
  int failed = 0;
  for (const auto& record : wrong.records) {
    if (record["kind"] != "collective") continue;
    if (record["status"] == "fail") {
      ++failed;
      EXPECT_EQ(record["wrong_elements"], 1536);
      EXPECT_EQ(record["bytes"], 16777216);
      EXPECT_EQ(record["in_place"], false);
      // Which rank saw them is not in the log: nobody is blamed by name.
      EXPECT_TRUE(record["wrong_ranks"].empty());
    }
  }
  EXPECT_EQ(failed, 1);
  const IngestedLog unchecked = ingest(parse_nccl_tests_log(fixture("allreduce_unchecked.log")));
  for (const auto& record : unchecked.records) {
    if (record["kind"] != "collective") continue;
    EXPECT_EQ(record["check"], false);
    EXPECT_TRUE(record["wrong_elements"].is_null());
  }
}

TEST(NcclTestsRecordsTest, WhatTheLogCannotKnowIsNull) {
  const IngestedLog records = ingest(parse_nccl_tests_log(fixture("allreduce_2nodes_v2.19.log")));
  ASSERT_EQ(records.records.size(), 9u);
  const Json& run = records.records[0];
  EXPECT_EQ(run["kind"], "run");
  EXPECT_EQ(run["ranks"].size(), 4u);
  EXPECT_EQ(run["ranks"][3]["node"], "gpu-a02");
  EXPECT_EQ(run["ranks"][3]["local_rank"], 1);
  const Json& record = records.records[8];
  EXPECT_EQ(record["source"], "nccl-tests");
  EXPECT_EQ(record["backend"], "nccl");
  EXPECT_EQ(record["scope"], "cluster");
  EXPECT_EQ(record["group_nodes"], Json({"gpu-a01", "gpu-a02"}));
  EXPECT_EQ(record["nranks"], 4);
  EXPECT_EQ(record["in_place"], true);
  EXPECT_DOUBLE_EQ(record["busbw_bytes_per_s"].get<double>(), 88.30e9);
  EXPECT_DOUBLE_EQ(record["bus_factor"].get<double>(), 1.5);
  EXPECT_NEAR(record["time_s"].get<double>(), 1140.04e-6, 1e-15);
  EXPECT_TRUE(record["straggler"].is_null());
  EXPECT_TRUE(record["rank_time_s"].is_null());
  EXPECT_TRUE(record["aggregation"].is_null());
  EXPECT_TRUE(record["iteration_time"].is_null());
  EXPECT_EQ(record["check"], true);
  EXPECT_EQ(record["wrong_elements"], 0);
}

TEST(NcclTestsRecordsTest, OneHostIsANodeScopeMeasurement) {
  const IngestedLog records =
      ingest(parse_nccl_tests_log(fixture("all_reduce_perf_v2.11_error_column.log")),
             "all_reduce_perf.log");
  EXPECT_EQ(records.records[1]["scope"], "node");
  EXPECT_EQ(records.records[1]["group_nodes"], Json({"dgx01"}));
}

TEST(NcclTestsLogTest, OddCellsExponentsNotApplicableAndTooFewFields) {
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 5 agg "
      "iters: 1 validation: 1\n"
      "#  Rank  0 Group  0 Pid  1 on n1 device  0 [0000:18:00] GPU\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
      "time   algbw   busbw  #wrong\n"
      "        8             2     float     sum      -1    1.5e+03  2e+06  1e+06  1e+06    23.45  "
      "  0.00    0.00     N/A\n"
      "        16            4     float     sum      -1    23.45    0.00    0.00\n"
      "        32            8     float     sum      -1    N/A    0.00    0.00    0    1.0   0.00 "
      " 0.00  0\n"
      "# Avg bus bandwidth    : 0.00 FAILED\n";
  const NcclTestsLog log = parse_nccl_tests_log(text);
  ASSERT_EQ(log.runs.size(), 1u);
  ASSERT_EQ(log.runs[0].rows.size(), 1u);
  const NcclTestsRow& row = log.runs[0].rows[0];
  EXPECT_DOUBLE_EQ(row.out_of_place->time_us, 1500.0);
  EXPECT_DOUBLE_EQ(row.out_of_place->algbw_gb_s, 2e6);
  EXPECT_EQ(row.out_of_place->wrong_elements, 1e6);
  EXPECT_FALSE(row.in_place->wrong_elements);
  ASSERT_EQ(log.unreadable.size(), 3u);
  EXPECT_EQ(log.unreadable[0].line, 5u);
  EXPECT_NE(log.unreadable[0].why.find("8 fields"), std::string::npos);
  EXPECT_EQ(log.unreadable[1].line, 6u);
  // The footer's mean (0) is not that of the one row read: rows went missing.
  EXPECT_EQ(log.unreadable[2].line, 7u);
  EXPECT_NE(log.unreadable[2].why.find("rows are missing"), std::string::npos);
  EXPECT_TRUE(log.runs[0].concluded);
}

// The footer's average checked against the rows: at the edge of rounding it agrees, one row
// lost it does not.
TEST(NcclTestsLogTest, AFooterAverageThatIsNotTheRowsMeanMeansRowsWereLost) {
  const std::string head =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 5 agg "
      "iters: 1 validation: 1\n"
      "#  Rank  0 Group  0 Pid  1 on n1 device  0 [0000:18:00] GPU\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
      "time   algbw   busbw  #wrong\n"
      "        8    2  float  sum  -1  10.0  10.00  10.00  0  10.0  20.00  20.00  0\n"
      "        16   4  float  sum  -1  10.0  30.00  30.00  0  10.0  40.00  40.00  0\n";
  // Mean 25; the tolerance is 0.01 + 0.1 % of the footer's value.
  EXPECT_TRUE(parse_nccl_tests_log(head + "# Avg bus bandwidth    : 25.03\n").unreadable.empty());
  EXPECT_FALSE(parse_nccl_tests_log(head + "# Avg bus bandwidth    : 25.04\n").unreadable.empty());
  EXPECT_FALSE(parse_nccl_tests_log(head + "# Avg bus bandwidth    : 24.96\n").unreadable.empty());
  EXPECT_TRUE(parse_nccl_tests_log(head + "# Avg bus bandwidth    : 24.975\n").unreadable.empty());
}

TEST(NcclTestsLogTest, TextThatIsNoLogYieldsNoTest) {
  const NcclTestsLog log = parse_nccl_tests_log("hello\nworld\n\x01\x02 binary\n");
  EXPECT_TRUE(log.runs.empty());
  EXPECT_EQ(log.foreign_lines.size(), 3u);
  EXPECT_EQ(ingest(log).tests, 0u);
}

TEST(NcclTestsRecordsTest, AHostThatIsNoValidNodeNameRefusesTheTest) {
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 5 agg "
      "iters: 1 validation: 1\n"
      "#  Rank  0 Group  0 Pid  1 on <img> device  0 [0000:18:00] GPU\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
      "time   algbw   busbw  #wrong\n"
      "        8             2     float     sum      -1    10.0  0.01  0.01  0    10.0  0.01  "
      "0.01  0\n";
  const IngestedLog records = ingest(parse_nccl_tests_log(text), "all_reduce_perf.log");
  EXPECT_EQ(records.tests, 0u);
  ASSERT_EQ(records.refused.size(), 1u);
  EXPECT_NE(records.refused[0].why.find("line 2"), std::string::npos);
}

TEST(NcclTestsJsonTest, ReadsTheJsonOutputWithItsQuirks) {
  const std::string text = fixture("allreduce_per_iteration.json");
  ASSERT_TRUE(looks_like_json(text));
  EXPECT_FALSE(looks_like_json(fixture("allreduce_2nodes_v2.19.log")));
  const NcclTestsLog log = parse_nccl_tests_json(text);
  EXPECT_TRUE(log.unreadable.empty());
  ASSERT_EQ(log.runs.size(), 1u);
  const NcclTestsRun& run = log.runs[0];
  EXPECT_EQ(run.program, "all_reduce_perf");
  EXPECT_EQ(run.iterations, 20);
  ASSERT_EQ(run.devices.size(), 4u);
  EXPECT_EQ(run.devices[3].host, "gpu-b02");
  ASSERT_EQ(run.rows.size(), 3u);
  EXPECT_FALSE(run.rows[0].root);  // "    -1"
  EXPECT_EQ(run.rows[0].redop, "sum");
  EXPECT_DOUBLE_EQ(run.rows[2].out_of_place->busbw_gb_s, 92.25);
  EXPECT_FALSE(run.rows[1].in_place->wrong_elements);  // nwrong null: not checked
  EXPECT_EQ(run.rows[1].out_of_place->wrong_elements, 0.0);
  EXPECT_EQ(run.rows[0].out_of_place->iteration_count, 20u);
  EXPECT_TRUE(run.concluded);
  const IngestedLog records = ingest(log);
  EXPECT_EQ(records.measurements, 6u);
  const Json& first = records.records[1];
  EXPECT_FALSE(first["iteration_time"]["p50_s"].is_null());
  EXPECT_NEAR(first["iteration_time"]["mean_s"].get<double>(),
              *run.rows[0].out_of_place->iteration_mean_us * 1e-6, 1e-15);
  EXPECT_EQ(records.records[4]["check"], false);  // 16 MiB in-place
}

TEST(NcclTestsJsonTest, ACrashedRunKeepsItsResultsAndNamesTheHost) {
  const NcclTestsLog log = parse_nccl_tests_json(fixture("allreduce_failed.json"));
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_FALSE(log.runs[0].concluded);
  EXPECT_EQ(log.runs[0].rows.size(), 2u);
  ASSERT_EQ(log.unreadable.size(), 1u);
  EXPECT_NE(log.unreadable[0].why.find("results[2]"), std::string::npos);
  const IngestedLog records = ingest(log);
  ASSERT_EQ(records.error_records, 1u);
  EXPECT_EQ(records.records.back()["host"], "gpu-b02");
  EXPECT_EQ(records.unconcluded.size(), 1u);
}

TEST(NcclTestsJsonTest, ACutOffFileIsUnreadableAsAWhole) {
  const std::string text = fixture("allreduce_per_iteration.json");
  const NcclTestsLog log = parse_nccl_tests_json(text.substr(0, text.size() / 2));
  EXPECT_TRUE(log.runs.empty());
  ASSERT_EQ(log.unreadable.size(), 1u);
}

// Found by scripts/fuzz: a count too large for an int ended the program with std::out_of_range.
// It is now an unreadable line; a test whose iterations cannot be read has none (and is refused).
TEST(NcclTestsLogTest, CountsBeyondAnIntAreUnreadableLinesNotACrash) {
  const std::string text = fixture("allreduce_2nodes_v2.19.log");
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    const auto at = changed.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return changed.replace(at, from.size(), to);
  };
  const NcclTestsLog largest = parse_nccl_tests_log(with(" iters: 20 ", " iters: 2147483647 "));
  EXPECT_TRUE(largest.unreadable.empty());
  ASSERT_EQ(largest.runs.size(), 1u);
  EXPECT_EQ(largest.runs[0].iterations, 2147483647);

  const NcclTestsLog beyond = parse_nccl_tests_log(with(" iters: 20 ", " iters: 2147483648 "));
  ASSERT_EQ(beyond.unreadable.size(), 1u);
  EXPECT_EQ(beyond.unreadable[0].line, 3u);
  EXPECT_NE(beyond.unreadable[0].why.find("iters is out of range"), std::string::npos);
  ASSERT_EQ(beyond.runs.size(), 1u);
  EXPECT_FALSE(beyond.runs[0].iterations);

  const NcclTestsLog warmup =
      parse_nccl_tests_log(with("warmup iters: 1 ", "warmup iters: 44444444444444444444444444 "));
  ASSERT_EQ(warmup.unreadable.size(), 1u);
  EXPECT_NE(warmup.unreadable[0].why.find("warmup iters"), std::string::npos);
  EXPECT_EQ(warmup.runs[0].iterations, 20);

  const NcclTestsLog device =
      parse_nccl_tests_log(with("Rank  0 Group", "Rank  99999999999 Group"));
  ASSERT_EQ(device.unreadable.size(), 1u);
  EXPECT_EQ(device.unreadable[0].line, 6u);
  EXPECT_NE(device.unreadable[0].why.find("device line"), std::string::npos);
}

// Issue 30 (18): a pasted table whose rows have no column header above them said only "no
// nccl-tests result could be read". Each row is now named with its line and why.
TEST(NcclTestsLogTest, ResultRowsWithoutAColumnHeaderAreNamedLineByLine) {
  const NcclTestsLog log = parse_nccl_tests_log("some shell output\n" + row("100.00", "175.00") +
                                                "12 monkeys\n" + row("10.00", "17.50", "8"));
  EXPECT_TRUE(log.runs.empty());
  ASSERT_EQ(log.unreadable.size(), 2u);
  EXPECT_EQ(log.unreadable[0].line, 2u);
  EXPECT_EQ(log.unreadable[1].line, 4u);
  EXPECT_TRUE(contains(log.unreadable[0].why, "no column header before it"))
      << log.unreadable[0].why;
  EXPECT_EQ(log.foreign_lines, (std::vector<std::size_t>{1, 3}));
  // After the parameter line, before the header: the same.
  const NcclTestsLog started = parse_nccl_tests_log(kParameters + row("100.00", "175.00"));
  ASSERT_EQ(started.unreadable.size(), 1u);
  EXPECT_EQ(started.unreadable[0].line, 2u);
  // Under a header that could not be read, the rows say so.
  const NcclTestsLog bad_header = parse_nccl_tests_log(
      kParameters + "#  size  count  type  time  something\n" + row("100.00", "175.00"));
  ASSERT_EQ(bad_header.unreadable.size(), 2u);
  EXPECT_EQ(bad_header.unreadable[1].line, 3u);
  EXPECT_TRUE(contains(bad_header.unreadable[1].why, "header that could not be read"));
}

// What counts as a row outside a table: size, count, a type, then at least five numbers or N/A
// (eight fields at least). One number fewer, or no type or count, is other output.
TEST(NcclTestsLogTest, ARowOutsideATableNeedsSizeCountTypeAndFiveNumbers) {
  const auto unreadable = [](const std::string& line) {
    return parse_nccl_tests_log(line + "\n").unreadable.size();
  };
  EXPECT_EQ(unreadable("8 2 float -1 1.0 2.0 3.0 4.0"), 1u);   // 5 numbers
  EXPECT_EQ(unreadable("8 2 float N/A 1.0 2.0 3.0 4.0"), 1u);  // N/A counts
  EXPECT_EQ(unreadable("8 2 float sum -1 1.0 2.0 3.0"), 0u);   // 4 numbers
  EXPECT_EQ(unreadable("8 2 float -1 1.0 2.0 3.0"), 0u);       // 7 fields
  EXPECT_EQ(unreadable("8 2 9 -1 1.0 2.0 3.0 4.0"), 0u);       // no type
  EXPECT_EQ(unreadable("8 x float -1 1.0 2.0 3.0 4.0"), 0u);   // no count
}

TEST(NcclTestsRecordsTest, APastedTableWithoutDeviceLinesNeedsItsNode) {
  const std::string text = kParameters + kHeader + row("100.00", "175.00");
  const IngestedLog refused = ingest(parse_nccl_tests_log(text), "all_reduce_perf.log");
  EXPECT_EQ(refused.tests, 0u);
  ASSERT_EQ(refused.refused.size(), 1u);
  EXPECT_EQ(refused.refused[0].line, 1u);
  EXPECT_TRUE(contains(refused.refused[0].why, "--node NAME")) << refused.refused[0].why;
  EXPECT_TRUE(lacks_hosts(parse_nccl_tests_log(text)));
  EXPECT_FALSE(lacks_hosts(parse_nccl_tests_log(fixture("allreduce_2nodes_v2.19.log"))));
  EXPECT_FALSE(lacks_hosts(parse_nccl_tests_log("# just a comment\nnoise\n")));

  const IngestedLog read = pasted(row("100.00", "175.00"));
  EXPECT_TRUE(read.refused.empty());
  EXPECT_EQ(read.tests, 1u);
  EXPECT_EQ(read.measurements, 2u);
  EXPECT_EQ(read.nodes, std::vector<std::string>{"gpu-07"});
  ASSERT_EQ(read.records.size(), 2u);  // no rank map: the log has none
  const Json& record = read.records[0];
  EXPECT_EQ(record["kind"], "collective");
  EXPECT_EQ(record["host"], "gpu-07");
  EXPECT_EQ(record["group_nodes"], Json({"gpu-07"}));
  EXPECT_EQ(record["scope"], "node");
  EXPECT_EQ(record["nranks"], 8);
  EXPECT_DOUBLE_EQ(record["bus_factor"].get<double>(), 1.75);
}

// The rank count of a table without device lines comes from busbw/algbw, to within the rounding
// of the printed figures: at the edge of rounding it fits, one digit beyond it fits no count.
TEST(NcclTestsRecordsTest, TheRankCountOfAPastedTableIsWhatEveryRowFits) {
  const auto nranks = [](const IngestedLog& log) {
    return log.records.empty() ? Json() : log.records[0]["nranks"];
  };
  const auto why = [](const IngestedLog& log) {
    return log.refused.empty() ? std::string() : log.refused[0].why;
  };
  EXPECT_EQ(nranks(pasted(row("100.00", "175.00") + row("100.00", "175.01", "8"))), 8);
  const IngestedLog beyond = pasted(row("100.00", "175.00") + row("100.00", "175.02", "8"));
  EXPECT_EQ(beyond.tests, 0u);
  EXPECT_TRUE(contains(why(beyond), "fits no number of ranks")) << why(beyond);
  EXPECT_EQ(nranks(pasted(row("100.00", "174.99"))), 8);
  EXPECT_EQ(pasted(row("100.00", "174.98")).tests, 0u);
  // Figures printed without decimals are known to +-0.5: 8 ranks still, and too coarse to tell
  // when the figures are small.
  EXPECT_EQ(nranks(pasted(row("100", "175"))), 8);
  EXPECT_TRUE(contains(why(pasted(row("10", "18"))), "ranks alike"))
      << why(pasted(row("10", "18")));
  // 64 ranks (factor 1.96875) from one large row; small rows alone cannot tell 64 from 65.
  EXPECT_EQ(nranks(pasted(row("200.00", "393.75"))), 64);
  EXPECT_TRUE(contains(why(pasted(row("1.00", "1.97"))), "ranks alike"));
  // One rank moves nothing over a bus: busbw 0 is one rank.
  EXPECT_EQ(nranks(pasted(row("10.00", "0.00"))), 1);
  EXPECT_TRUE(contains(why(pasted(row("0.00", "0.00"))), "algbw large enough"));
  // Broadcast prints busbw = algbw on any number of ranks.
  EXPECT_TRUE(contains(why(pasted(row("10.00", "10.00"), "gpu-07", "broadcast_perf.log")),
                       "on any number of ranks"));
  // allgather's factor is (n-1)/n.
  EXPECT_EQ(nranks(pasted(row("100.00", "87.50"), "gpu-07", "all_gather_perf.log")), 8);
}

TEST(NcclTestsJsonTest, DevicesWithoutAHostnameTakeTheNodeAndUnreadableOnesRefuseTheTest) {
  Json root = Json::parse(fixture("allreduce_per_iteration.json"));
  for (auto& device : root["config"]["devices"])
    device.erase("hostname");
  const NcclTestsLog unnamed = parse_nccl_tests_json(root.dump());
  EXPECT_TRUE(lacks_hosts(unnamed));
  const IngestedLog refused = ingest(unnamed);
  ASSERT_EQ(refused.refused.size(), 1u);
  EXPECT_TRUE(contains(refused.refused[0].why, "config.devices[0] names no host"))
      << refused.refused[0].why;
  const IngestedLog read = ingest_on(unnamed, "gpu-b09");
  EXPECT_TRUE(read.refused.empty());
  EXPECT_EQ(read.records[0]["kind"], "run");
  EXPECT_EQ(read.records[0]["ranks"][3]["node"], "gpu-b09");
  EXPECT_EQ(read.records[1]["group_nodes"], Json({"gpu-b09"}));
  EXPECT_EQ(read.records[1]["nranks"], 4);  // the ranks are known: none derived

  // An entry that cannot be read is named, and the test's ranks are then not known.
  Json partial = Json::parse(fixture("allreduce_per_iteration.json"));
  partial["config"]["devices"][3].erase("device");
  partial["config"]["devices"][2]["hostname"] = 7;
  const NcclTestsLog log = parse_nccl_tests_json(partial.dump());
  ASSERT_EQ(log.unreadable.size(), 2u);
  EXPECT_EQ(log.unreadable[0].why, "config.devices[2]: hostname is not a string");
  EXPECT_EQ(log.unreadable[1].why, "config.devices[3]: no rank or device that is a whole number");
  const IngestedLog partial_records = ingest(log);
  EXPECT_EQ(partial_records.tests, 0u);
  ASSERT_EQ(partial_records.refused.size(), 1u);
  EXPECT_TRUE(contains(partial_records.refused[0].why, "2 device line(s) could not be read"));

  // No devices at all: the count comes from the rows, as for a pasted table.
  Json bare = Json::parse(fixture("allreduce_per_iteration.json"));
  bare["config"].erase("devices");
  const IngestedLog derived = ingest_on(parse_nccl_tests_json(bare.dump()), "gpu-b09");
  ASSERT_FALSE(derived.records.empty()) << (derived.refused.empty() ? "" : derived.refused[0].why);
  EXPECT_EQ(derived.records[0]["kind"], "collective");
  EXPECT_EQ(derived.records[0]["nranks"], 4);
}

// A device line whose numbers cannot be read made the test smaller by one rank; it now refuses
// the test, since which ranks ran it is not known.
TEST(NcclTestsRecordsTest, AnUnreadableDeviceLineRefusesItsTest) {
  std::string text = fixture("allreduce_2nodes_v2.19.log");
  const std::string last = "Pid  12003";
  const auto at = text.find(last);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, last.size(), "Pid  99999999999");
  const NcclTestsLog log = parse_nccl_tests_log(text);
  ASSERT_EQ(log.unreadable.size(), 1u);
  const IngestedLog records = ingest(log);
  EXPECT_EQ(records.tests, 0u);
  ASSERT_EQ(records.refused.size(), 1u);
  EXPECT_TRUE(contains(records.refused[0].why, "1 device line(s) could not be read"));
}

std::string two_hosts(const std::string& first, const std::string& second,
                      const std::string& failure) {
  return kParameters + "#  Rank  0 Group  0 Pid  1 on " + first +
         " device  0 [0000:18:00] GPU\n#  Rank  1 Group  0 Pid  2 on " + second +
         " device  0 [0000:18:00] GPU\n" + kHeader + row("100.00", "100.00") + failure + "\n";
}

std::vector<std::string> error_hosts(const IngestedLog& log) {
  std::vector<std::string> hosts;
  for (const auto& record : log.records) {
    if (record["status"] == "error") hosts.push_back(record["host"]);
  }
  return hosts;
}

// A failure is evidence against the host nccl-tests names where it prints the host, by its
// exact name: node1 is not node10, and a host named inside the message is not the one that
// failed.
TEST(NcclTestsRecordsTest, AFailureIsAttributedToTheHostItNamesByExactName) {
  const auto hosts = [](const std::string& failure) {
    return error_hosts(
        ingest(parse_nccl_tests_log(two_hosts("node1", "node10", failure)), "all_reduce_perf.log"));
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(hosts("node10: Test NCCL failure common.cu:1 'remote process node1 exited'"),
            V{"node10"});
  EXPECT_EQ(hosts("node1: Test CUDA failure common.cu:2 'peer node10 gone'"), V{"node1"});
  EXPECT_EQ(hosts(" .. node10 pid 2: Test failure common.cu:3"), V{"node10"});
  EXPECT_EQ(hosts("node1: Test timeout (5s) common.cu:518"), V{"node1"});
  EXPECT_EQ(hosts("# error: something about node1"), (V{"node1", "node10"}));
  // A host that ran no rank of the test: every host, and the mismatch is named.
  const IngestedLog other = ingest(
      parse_nccl_tests_log(two_hosts("node1", "node10", "node100: Test NCCL failure x.cu:1 'e'")),
      "all_reduce_perf.log");
  EXPECT_EQ(error_hosts(other), (V{"node1", "node10"}));
  ASSERT_EQ(other.refused.size(), 1u);
  EXPECT_EQ(other.refused[0].line, 6u);
  EXPECT_TRUE(contains(other.refused[0].why, "'node100', which ran no rank"));
}

// One rank per host, in the order given, and `failure` after the table.
std::string hosts_log(const std::vector<std::string>& hosts, const std::string& failure) {
  std::string text = kParameters;
  for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
    text += "#  Rank " + std::to_string(rank) + " Group  0 Pid " + std::to_string(100 + rank) +
            " on " + hosts[rank] + " device  0 [0000:18:00] NVIDIA H100\n";
  }
  return text + kHeader + row("100.00", "100.00") + failure + "\n";
}

// Sets of names that are prefixes, suffixes or substrings of each other, and an FQDN beside its
// short name: each name is its own host (docs/ingest.md, "Host names").
const std::vector<std::vector<std::string>> kLookalikeHosts = {{"node1", "node10", "node100"},
                                                               {"node100", "node10", "node1"},
                                                               {"gpu-a1", "gpu-a10"},
                                                               {"xn1", "n1"},
                                                               {"n1", "xn1"},
                                                               {"node1", "node1.cluster.local"},
                                                               {"node1.cluster.local", "node1"}};

// A failure lands on exactly the host it names, never on one whose name contains it or is
// contained in it, in whatever order the ranks list them; the rank map keeps each name as
// written.
TEST(NcclTestsRecordsTest, LookalikeHostNamesAreNeverConfused) {
  using V = std::vector<std::string>;
  for (const V& hosts : kLookalikeHosts) {
    for (const std::string& failing : hosts) {
      for (const std::string& failure :
           {failing + ": Test NCCL failure common.cu:1 'remote process " + hosts.front() + "'",
            " .. " + failing + " pid 7: Test failure common.cu:3 " + hosts.back()}) {
        const IngestedLog log =
            ingest(parse_nccl_tests_log(hosts_log(hosts, failure)), "all_reduce_perf.log");
        EXPECT_TRUE(log.refused.empty()) << failure;
        EXPECT_EQ(error_hosts(log), V{failing}) << failure;
        EXPECT_EQ(log.nodes, hosts);
        ASSERT_EQ(log.records.at(0)["kind"], "run");
        for (std::size_t rank = 0; rank < hosts.size(); ++rank)
          EXPECT_EQ(log.records[0]["ranks"][rank]["node"], hosts[rank]) << failure;
      }
    }
  }
}

// The same through the JSON reader: config.devices[].hostname and errors[].
TEST(NcclTestsJsonTest, LookalikeHostNamesAreNeverConfused) {
  using V = std::vector<std::string>;
  for (const V& hosts : kLookalikeHosts) {
    for (const std::string& failing : hosts) {
      Json root = Json::parse(fixture("allreduce_failed.json"));
      Json& devices = root["config"]["devices"];
      while (devices.size() > hosts.size())
        devices.erase(devices.size() - 1);
      for (std::size_t rank = 0; rank < hosts.size(); ++rank)
        devices[rank]["hostname"] = hosts[rank];
      root["errors"] = Json::array(
          {failing + ": Test NCCL failure common.cu:1125 'peer " + hosts.back() + " exited'"});
      const IngestedLog log = ingest(parse_nccl_tests_json(root.dump()), "all_reduce_perf.json");
      EXPECT_TRUE(log.refused.empty()) << (log.refused.empty() ? "" : log.refused[0].why);
      EXPECT_EQ(error_hosts(log), V{failing});
      EXPECT_EQ(log.nodes, hosts);
    }
  }
}

// A JSON hostname that is no valid node name refuses the test, naming the element: JSON gives
// the reader no line per device.
TEST(NcclTestsJsonTest, AHostnameThatIsNoValidNodeNameIsRefusedNeverChanged) {
  for (const std::string host : {"gpu;reboot", "node1 ", "node1\nnode10", ".node1", ""}) {
    Json root = Json::parse(fixture("allreduce_failed.json"));
    root["config"]["devices"][2]["hostname"] = host;
    const IngestedLog log = ingest(parse_nccl_tests_json(root.dump()), "all_reduce_perf.json");
    EXPECT_EQ(log.tests, 0u) << host;
    ASSERT_EQ(log.refused.size(), 1u) << host;
    EXPECT_TRUE(contains(log.refused[0].why, host.empty() ? "config.devices[2] names no host"
                                                          : "from config.devices[2]"))
        << log.refused[0].why;
  }
}

// A host that is no valid node name (as --node-name checks it) refuses the test on its device
// line, never changed into something that is: shell metacharacters, a leading '-', too long.
TEST(NcclTestsRecordsTest, AHostThatIsNoValidNodeNameIsRefusedOnItsLine) {
  const auto refusal = [](const std::string& host) {
    const IngestedLog log =
        ingest(parse_nccl_tests_log(two_hosts("node1", host, "")), "all_reduce_perf.log");
    return log.refused.empty() ? UnreadableLine{} : log.refused[0];
  };
  for (const std::string host : {"node1;reboot", "$(reboot)", "n`id`", "-node", "node|x"}) {
    const UnreadableLine why = refusal(host);
    EXPECT_EQ(why.line, 3u) << host;
    EXPECT_TRUE(contains(why.why, "invalid node name '" + host + "' from the device line"))
        << why.why;
  }
  // Node names are at most 64 characters (core/node_identity.cpp).
  EXPECT_TRUE(refusal(std::string(64, 'n')).why.empty());
  EXPECT_TRUE(contains(refusal(std::string(65, 'n')).why, "longer than 64"));
  // A name that differs only by case or a suffix is another node, kept as written.
  const IngestedLog log =
      ingest(parse_nccl_tests_log(two_hosts("node1", "NODE1", "")), "all_reduce_perf.log");
  EXPECT_EQ(log.nodes, (std::vector<std::string>{"node1", "NODE1"}));
}

}  // namespace
}  // namespace commcert
