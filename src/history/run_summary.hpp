#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace commcert {

// The per-iteration statistics behind one figure: enough for Welch's t (history/significance.hpp).
// `mean` and `stddev` are of the quantity that was sampled (iteration time in seconds for
// collectives, TFLOP/s per window for burn), not of the figure itself.
struct SampleMoments {
  std::size_t count = 0;
  double mean = 0;
  double stddev = 0;
};

// One figure of one run that can be compared with the same figure of another run. Higher values
// are always better (bandwidth, TFLOP/s).
struct RunFigure {
  std::string node;         // the node it speaks for; a multi-node group: its nodes joined by '+'
  std::string gpu;          // "gpu<index>" for per-GPU figures, empty otherwise
  std::string subject;      // "allreduce", "burn", "membw"
  std::string variant;      // what else tells measurements apart: dtype, placement, scope, ranks
  std::uint64_t bytes = 0;  // message size; 0 for figures without one
  std::string metric;       // "busbw_bytes_per_s", "tflops", "read_bytes_per_s", ...
  double value = 0;
  std::optional<SampleMoments> moments;  // nullopt: the record carried no per-iteration data
  // The record's slowest-arriving rank's node (the one the others waited for), when it says.
  std::string straggler;

  // Figures of two runs are compared when their keys are equal.
  [[nodiscard]] std::string key() const;
};

struct NodeOutcome {
  std::string node;
  std::string state;  // certified, quarantined, inconclusive
  std::string first_reason;
};

// What the history keeps of a run: its identity, its verdict per node, and its figures
// summarized per node, GPU, collective and size (several records of one key are pooled).
struct RunSummary {
  std::string fingerprint;  // of records.jsonl's content: the same run added twice is one run
  std::string run_id;
  std::string started;  // meta.json start_time (UTC, ISO 8601), else the first record's time
  std::string source;   // "commcert" or "nccl-tests" (from the records' `source`)
  std::string meta_json;
  std::filesystem::path path;
  std::vector<NodeOutcome> outcomes;  // from verdict.json when the run has one
  std::vector<RunFigure> metrics;
};

// Reads a run directory (records.jsonl, meta.json, verdict.json if present) or one records
// file. Records are read by the validator's reader: lines it cannot read (not JSON, not a valid
// record, a newer schema, cut short) are left out and counted in `unreadable_lines`, and an exact
// repeat counts once. meta.json is read as records/run_meta.hpp says: one cut short is left out.
// Throws UsageError for a path without records, and for a meta.json with a field of the wrong
// type or a newer schema (naming the file and the field).
[[nodiscard]] RunSummary summarize_run(const std::filesystem::path& path,
                                       std::size_t* unreadable_lines = nullptr);

// Pools the per-iteration statistics of several samples of one quantity: the combined count,
// mean and (n - 1) standard deviation of all their iterations together.
[[nodiscard]] SampleMoments pool(const std::vector<SampleMoments>& parts);

// Merges samples of equal key into one: the mean value, pooled moments (absent if any part has
// none), the last straggler named. Order: first appearance.
[[nodiscard]] std::vector<RunFigure> merge_by_key(const std::vector<RunFigure>& samples);

}  // namespace commcert
