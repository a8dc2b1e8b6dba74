// Golden tests of the nccl-tests table. The fixtures in tests/fixtures/nccl_table/ were written
// from nccl-tests 2.19.6's printf formats (src/util.cu writeResultHeader, writeBenchmarkLine*,
// getFloatStr, writeResultFooter) with the numbers computed by hand from the measurements below,
// so a script that parses nccl-tests output reads ours the same way.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/collectives.hpp"
#include "cli/sweep_table.hpp"
#include "report/nccl_table.hpp"

namespace commcert {
namespace {

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(COMMCERT_SOURCE_DIR) + "/tests/fixtures/nccl_table/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Captures what the table prints to a FILE*.
class Capture {
 public:
  Capture() : file_(::open_memstream(&buffer_, &size_)) {}
  ~Capture() {
    if (file_) std::fclose(file_);
    std::free(buffer_);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

std::vector<RankIdentity> ranks(int n) {
  std::vector<RankIdentity> out;
  for (int r = 0; r < n; ++r) {
    RankIdentity id;
    id.rank = r;
    id.process = r;
    id.node = "node" + std::to_string(r);
    id.hostname = "host";
    id.local_rank = r;
    id.pid = 1000 + r;
    id.device = "host";
    out.push_back(id);
  }
  return out;
}

struct Placement {
  std::vector<double> rank_seconds;
  std::optional<std::uint64_t> wrong;  // nullopt: not checked
  int wrong_rank = 0;
  int wrong_iterations = 0;
};

Measurement measurement(CollectiveKind kind, DataType type, std::optional<ReduceOp> op,
                        std::optional<int> root, std::uint64_t bytes, std::uint64_t count,
                        bool in_place, const std::optional<Placement>& p, int nranks,
                        int iterations) {
  Measurement m;
  m.collective = kind;
  m.type = type;
  m.op = op;
  m.root = root;
  m.bytes = bytes;
  m.count = count;
  m.nranks = nranks;
  m.in_place = in_place;
  if (!p) {
    m.unsupported = "in-place form not available";
    return m;
  }
  m.iteration_seconds.assign(static_cast<std::size_t>(iterations), p->rank_seconds.front());
  for (int r = 0; r < nranks; ++r) {
    RankMeasurement rm;
    rm.rank = r;
    rm.mean_seconds = p->rank_seconds[static_cast<std::size_t>(r)];
    rm.checked = p->wrong.has_value();
    if (p->wrong && r == p->wrong_rank) {
      rm.wrong_elements = *p->wrong;
      rm.wrong_iterations = p->wrong_iterations;
    }
    m.ranks.push_back(rm);
  }
  m.check_requested = p->wrong.has_value();
  return m;
}

// What the sweep does with a row of measurements: figures derived once, handed to the table.
void show(NcclTestsTable& table, const Measurement& out_of_place, const Measurement& in_place,
          RankAggregation aggregation) {
  table.row(nccl_table_row(out_of_place, in_place, placement_figures(out_of_place, aggregation),
                           placement_figures(in_place, aggregation)));
}

TEST(NcclTestsTable, AllReduceBlockMatchesNcclTests) {
  SweepOptions options;
  options.collectives = {CollectiveKind::kAllReduce};
  options.min_bytes = 8;
  options.max_bytes = 4294967296;
  options.step_factor = 2;
  options.iterations = 20;
  options.warmup_iterations = 1;
  options.check = true;
  options.aggregation = RankAggregation::kMean;

  NcclTestsTable::Context context;
  context.banner = "commcert 0.1.0 (unit-test) backend mpi (golden)";
  context.sweep = nccl_table_sweep(options);
  context.ranks = ranks(4);
  context.warnings = {"4 ranks on 2 cores: oversubscribed"};

  Capture capture;
  NcclTestsTable table(capture.file(), context);
  const auto& info = collective_info(CollectiveKind::kAllReduce);
  const auto row = [&](std::uint64_t bytes, std::uint64_t count, std::optional<Placement> oop,
                       std::optional<Placement> ip) {
    show(table,
         measurement(info.kind, DataType::kFloat, ReduceOp::kSum, std::nullopt, bytes, count, false,
                     oop, 4, 20),
         measurement(info.kind, DataType::kFloat, ReduceOp::kSum, std::nullopt, bytes, count, true,
                     ip, 4, 20),
         options.aggregation);
  };
  table.begin(info.nccl_tests_name);
  // Latency-bound: bandwidths round to 0.00.
  row(8, 2, Placement{{20e-6, 20e-6, 20e-6, 20e-6}, 0}, Placement{{18e-6, 18e-6, 18e-6, 18e-6}, 0});
  // Mean time 115 us; in place, rank 2 saw 3 wrong elements in 1 iteration.
  row(1048576, 262144, Placement{{100e-6, 110e-6, 120e-6, 130e-6}, 0},
      Placement{{100e-6, 100e-6, 100e-6, 100e-6}, 3, 2, 1});
  // algbw 1073.74 and busbw 1610.61 GB/s do not fit %6.2f: one decimal. Unchecked; in place
  // not supported.
  row(1073741824, 268435456, Placement{{1e-3, 1e-3, 1e-3, 1e-3}, std::nullopt}, std::nullopt);
  // 500000 us fits only as %.0f; 123456789 us only in exponent form; 2000000 wrong is %6g.
  row(4294967296, 1073741824, Placement{{0.5, 0.5, 0.5, 0.5}, 2000000, 0, 20},
      Placement{{123.456789, 123.456789, 123.456789, 123.456789}, 0});
  table.end(info.nccl_tests_name);
  EXPECT_EQ(capture.text(), read_fixture("allreduce_4ranks.txt"));
}

TEST(NcclTestsTable, RootedUncheckedBlockMatchesNcclTests) {
  SweepOptions options;
  options.collectives = {CollectiveKind::kBroadcast};
  options.min_bytes = 1048576;
  options.max_bytes = 2097152;
  options.step_bytes = 1048576;
  options.step_factor = 1;
  options.iterations = 5;
  options.warmup_iterations = 0;
  options.check = false;

  NcclTestsTable::Context context;
  context.banner = "commcert 0.1.0 (unit-test) backend mpi (golden)";
  context.sweep = nccl_table_sweep(options);
  context.ranks = ranks(2);

  Capture capture;
  NcclTestsTable table(capture.file(), context);
  const auto& info = collective_info(CollectiveKind::kBroadcast);
  table.begin(info.nccl_tests_name);
  for (const auto& [bytes, seconds] :
       std::vector<std::pair<std::uint64_t, double>>{{1048576, 50e-6}, {2097152, 75e-6}}) {
    const Placement oop{{seconds, seconds}, std::nullopt};
    const Placement ip{{seconds * 0.9, seconds * 0.9}, std::nullopt};
    show(table,
         measurement(info.kind, DataType::kHalf, std::nullopt, 1, bytes, bytes / 2, false, oop, 2,
                     5),
         measurement(info.kind, DataType::kHalf, std::nullopt, 1, bytes, bytes / 2, true, ip, 2, 5),
         options.aggregation);
  }
  table.end(info.nccl_tests_name);
  EXPECT_EQ(capture.text(), read_fixture("broadcast_unchecked.txt"));
}

TEST(NcclTestsTable, EveryLineThatIsNotARowIsAComment) {
  // Parsers of nccl-tests output skip '#' lines; commcert's notes must not look like rows.
  for (const char* name : {"allreduce_4ranks.txt", "broadcast_unchecked.txt"}) {
    std::istringstream text(read_fixture(name));
    int rows = 0;
    for (std::string line; std::getline(text, line);) {
      if (line.empty() || line[0] == '#') continue;
      ++rows;
      std::istringstream fields(line);
      std::vector<std::string> words;
      for (std::string w; fields >> w;)
        words.push_back(w);
      EXPECT_EQ(words.size(), 13u) << line;  // the 2.19 layout: 13 columns
    }
    EXPECT_GT(rows, 0) << name;
  }
}

TEST(NcclTestsTable, NotesAreComments) {
  NcclTestsTable::Context context;
  Capture capture;
  NcclTestsTable table(capture.file(), context);
  table.note("skipping 8 GiB: larger than the buffer cap");
  EXPECT_EQ(capture.text(), "# skipping 8 GiB: larger than the buffer cap\n");
}

TEST(NcclTestsTable, RowsShowTheFiguresTheyAreHanded) {
  // The sweep derives each measurement's figures once and hands the same ones to the record and
  // the table: a row prints the figures it is given, never a derivation of its own.
  SweepOptions options;
  NcclTestsTable::Context context;
  context.sweep = nccl_table_sweep(options);
  context.ranks = ranks(2);
  const auto& info = collective_info(CollectiveKind::kAllReduce);
  const Measurement oop = measurement(info.kind, DataType::kFloat, ReduceOp::kSum, std::nullopt,
                                      1048576, 262144, false, Placement{{1e-3, 1e-3}, 0}, 2, 5);
  const Measurement ip = measurement(info.kind, DataType::kFloat, ReduceOp::kSum, std::nullopt,
                                     1048576, 262144, true, std::nullopt, 2, 5);
  EXPECT_FALSE(placement_figures(ip, options.aggregation));  // unsupported: N/A columns

  MeasurementFigures figures = *placement_figures(oop, options.aggregation);
  figures.time_seconds = 2e-3;
  figures.algbw_bytes_per_second = 7e9;
  figures.busbw_bytes_per_second = 9e9;
  Capture given;
  NcclTestsTable table(given.file(), context);
  table.row(nccl_table_row(oop, ip, figures, std::nullopt));
  table.end(info.nccl_tests_name);
  EXPECT_NE(
      given.text().find("  2000.00    7.00    9.00       0      N/A     N/A     N/A    N/A\n"),
      std::string::npos)
      << given.text();
  EXPECT_NE(given.text().find("# Avg bus bandwidth    : 9 \n"), std::string::npos) << given.text();
}

TEST(FitNumber, TwoDecimalsWhenTheyFit) {
  EXPECT_EQ(NcclTestsTable::fit_number(0, 6), "0.00");
  EXPECT_EQ(NcclTestsTable::fit_number(0.004, 6), "0.00");
  EXPECT_EQ(NcclTestsTable::fit_number(9.126, 6), "9.13");
  EXPECT_EQ(NcclTestsTable::fit_number(123.25, 6), "123.25");
  EXPECT_EQ(NcclTestsTable::fit_number(1234.5, 7), "1234.50");
}

TEST(FitNumber, FallsBackToOneDecimalThenNone) {
  EXPECT_EQ(NcclTestsTable::fit_number(1234.5, 6), "1234.5");
  EXPECT_EQ(NcclTestsTable::fit_number(99999.3, 7), "99999.3");
  EXPECT_EQ(NcclTestsTable::fit_number(12345.75, 6), "12346");
  EXPECT_EQ(NcclTestsTable::fit_number(999999.5, 7), "1000000");  // %.1f is 8 wide, %.0f 7
  EXPECT_EQ(NcclTestsTable::fit_number(500000, 7), "500000");
}

TEST(FitNumber, ExponentFormWhenNothingElseFits) {
  EXPECT_EQ(NcclTestsTable::fit_number(2e6, 6), "2e+06");  // width < 7: %.0e
  EXPECT_EQ(NcclTestsTable::fit_number(1234567, 6), "1e+06");
  EXPECT_EQ(NcclTestsTable::fit_number(12345678, 7), "1.2e+07");  // width >= 7: %.1e
  EXPECT_EQ(NcclTestsTable::fit_number(123456789, 7), "1.2e+08");
}

TEST(FitNumber, ResultNeverExceedsTheWidthForTableValues) {
  for (double v = 1e-3; v < 1e15; v *= 3.7) {
    EXPECT_LE(NcclTestsTable::fit_number(v, 6).size(), 6u) << v;
    EXPECT_LE(NcclTestsTable::fit_number(v, 7).size(), 7u) << v;
  }
}

}  // namespace
}  // namespace commcert
