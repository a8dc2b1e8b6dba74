#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// What an nccl-tests text log says, line by line, before anything is turned into records
// (docs/ingest.md). Only what the log prints is filled in; what it does not print stays empty.

struct NcclTestsDevice {
  int rank = 0;
  std::string host;
  int pid = 0;
  int device = 0;
  std::string pci_bus_id;  // as printed: "0000:18:00" or, before 2025, "0x1a"
  std::string name;
  std::size_t line = 0;
};

// One placement (out-of-place or in-place) of one table row. Bandwidths in GB/s and times in
// microseconds, as printed.
struct NcclTestsPlacement {
  double time_us = 0;
  double algbw_gb_s = 0;
  double busbw_gb_s = 0;
  // #wrong when the log has that column and the placement was checked; nullopt for N/A and for
  // logs whose column is the old maximum error (not a count).
  std::optional<double> wrong_elements;
  // -I columns (text) or the *_per_iter objects (JSON), when the log has them.
  std::optional<double> iteration_min_us, iteration_max_us, iteration_p99_us, iteration_cv_pct;
  std::optional<double> iteration_p50_us, iteration_mean_us;  // JSON only
  std::optional<std::size_t> iteration_count;                 // JSON only: samples kept
  // Half a unit of the last digit algbw and busbw were printed with (0.005 for "%.2f"), so the
  // bandwidths as printed are known to within it.
  double bandwidth_half_unit = 0.005;
};

struct NcclTestsRow {
  std::size_t line = 0;
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;
  std::string type;
  std::string redop;  // "" when the row has none ("none" or the empty hypercube field)
  std::optional<int> root;
  std::optional<NcclTestsPlacement> out_of_place, in_place;
  int cycle = 0;  // how many earlier rows of the same test had the same size, type, op and root
};

struct NcclTestsError {
  std::size_t line = 0;
  std::string text;
};

// One test: from its `# Collective test starting` (or parameter line, in older versions) to its
// footer or the next test.
struct NcclTestsRun {
  std::size_t first_line = 0;
  std::string program;  // "all_reduce_perf"; empty when the log does not name it (before 2.17.4)
  std::string version;  // "2.19.6"; empty before 2.17.4
  std::optional<int> iterations, warmup_iterations, validation;
  std::vector<NcclTestsDevice> devices;
  // Device lines (or JSON config.devices entries) of this test that could not be read: the
  // ranks that ran it are then not all known.
  std::size_t unreadable_devices = 0;
  std::vector<std::string> columns;  // the table header's column names, in order
  bool wrong_is_count = true;        // false for the pre-2022 `error` column
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw_gb_s;
  std::optional<std::int64_t> out_of_bounds;
  std::vector<NcclTestsError> errors;
  bool concluded = false;  // the `# Avg bus bandwidth` footer was seen
};

struct UnreadableLine {
  std::size_t line = 0;  // 0: not a line (a JSON file's element, named in `why`)
  std::string why;
};

struct NcclTestsLog {
  std::vector<NcclTestsRun> runs;
  // Lines inside a test that should have been a table row or header line and could not be read.
  std::vector<UnreadableLine> unreadable;
  // Lines that belong to no test (launcher noise, NCCL INFO lines, shell output): not evidence.
  std::vector<std::size_t> foreign_lines;
};

// Reads the text of one log. Launcher prefixes (`[1,0]<stdout>:`, `[0]`, srun -l `0: `) are
// removed first. Never throws on content: what cannot be read is listed with its line.
[[nodiscard]] NcclTestsLog parse_nccl_tests_log(std::string_view text);

// One line with its launcher prefix removed (exposed for tests).
[[nodiscard]] std::string_view strip_launcher_prefix(std::string_view line);

}  // namespace commcert
