#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"

namespace commcert {

// What DCGM said about one test on one GPU (or, for Deployment tests, on several GPUs at once).
enum class DcgmOutcome { kPass, kFail, kWarn, kSkip, kUnknown };

struct DcgmResult {
  std::string category;   // "Deployment", "Hardware", "Integration", "Stress", ...
  std::string test;       // "Memory", "Diagnostic", "Targeted Stress", ...
  std::vector<int> gpus;  // DCGM GPU ids from `gpu_ids`; empty when it names none
  std::string status;     // as written ("Pass", "PASS", "Fail", "Skip", "Warn", ...)
  DcgmOutcome outcome = DcgmOutcome::kUnknown;
  std::string message;  // `warnings` and `info` joined, empty when DCGM gave none
  std::string element;  // where in the file, e.g. "test_categories[2].tests[0].results[1]"
};

// `dcgmi diag -j` output read as written: the top-level object "DCGM GPU Diagnostic" (older
// DCGM) or "DCGM Diagnostic" (newer), `test_categories[] -> tests[] -> results[]`. Statuses are
// compared case-insensitively (older DCGM writes "PASS"). Never throws on content.
struct DcgmDiag {
  std::optional<std::string> driver_version;  // "Driver Version Detected", when present
  std::optional<std::string> dcgm_version;    // "DCGM Version", when present
  std::vector<DcgmResult> results;
  std::vector<std::string> unreadable;  // elements that could not be read, with why
  std::optional<std::string> error;     // the file is not a DCGM diagnostic: why
  std::size_t error_line = 0;           // where the JSON breaks (1-based; 0: not a JSON
  std::size_t error_column = 0;         // syntax error)
};

// Whether a text is DCGM's JSON (a JSON object naming one of DCGM's top-level keys near its
// start), so `commcert ingest` can tell it from nccl-tests' -J output.
[[nodiscard]] bool looks_like_dcgm_diag(std::string_view text);

[[nodiscard]] DcgmDiag parse_dcgm_diag(std::string_view text);

// Which commcert check a DCGM test is evidence for; nullopt when it has none (not judged).
[[nodiscard]] std::optional<std::string> dcgm_check_of(const DcgmResult& result);

// The DCGM run level (`dcgmi diag -r 1..4`) a diagnostic amounts to, read from the tests it
// carries, since DCGM's JSON does not state it: the highest level every one of whose tests is
// present, with whatever status (docs/ingest.md "Which level ran"). 0 when not even level 1's
// deployment tests are there (a selection of named tests).
[[nodiscard]] int dcgm_run_level(const DcgmDiag& diag);

struct DcgmRecordsOptions {
  std::string run_id;
  std::string node;  // the node the diagnostic ran on (DCGM's JSON does not name it)
};

// What one diagnostic became.
struct DcgmRecords {
  std::vector<Json> records;            // one `health` gpu record per GPU a judged test named
  std::vector<std::string> not_judged;  // tests with no commcert check, or naming no GPU
  Json gpus = Json::object();           // per GPU id: the DCGM tests its record rests on
  int level = 0;                        // dcgm_run_level of the diagnostic
};

// One `health` record (component gpu, `source: "dcgm"`) per GPU, its status from every judged
// test that named the GPU (docs/ingest.md "DCGM diagnostics"): any Fail → fail, naming the tests
// and DCGM's messages; else any unknown status or Warn → error; else any Skip → skipped; else ok.
// What DCGM does not report (ECC counts, clocks, PCIe link) is null. Each record carries the
// diagnostic's `dcgm_level`, which baselines require a minimum of (checks.health.gpu).
[[nodiscard]] DcgmRecords dcgm_diag_records(const DcgmDiag& diag,
                                            const DcgmRecordsOptions& options);

}  // namespace commcert
