#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.hpp"
#include "history/node_trend.hpp"
#include "validate/baseline.hpp"
#include "validate/evidence.hpp"
#include "validate/record_reader.hpp"
#include "validate/verdict.hpp"

namespace commcert {

// What a run measured, beside its verdict: the part of the report model that the verdict alone
// does not hold (curves, matrices, per-GPU figures, the runs' meta). Built once from the records
// the validator read and the verdict it reached; every report format renders from it, none reads
// records itself. Figures keep the records' units (bytes, bytes/s, TFLOP/s as written by burn).

struct BusbwPoint {
  std::uint64_t bytes = 0;
  double busbw_bytes_per_s = 0;  // best of the size's records (placements, datatypes, cycles)
};

// One communicator's busbw against size: a node (scope node) or the whole job (scope cluster).
struct BusbwCurve {
  std::string label;               // the node for scope node; "cluster (4 nodes)" otherwise
  std::vector<std::string> nodes;  // the nodes the figure speaks for
  std::vector<BusbwPoint> points;  // ascending bytes
  // A node of the curve carries a non-warning reason on this collective's check: the
  // validator's word, not the plot's own judgement.
  bool flagged = false;
};

// The middle half of the node-scope curves at one size (25th to 75th percentile) and their median.
struct BusbwBand {
  std::uint64_t bytes = 0;
  double low = 0;
  double median = 0;
  double high = 0;
};

struct CollectivePlot {
  std::string collective;  // "allreduce"
  std::string scope;       // "node" or "cluster"
  std::vector<BusbwCurve> curves;
  std::vector<BusbwBand> band;     // empty with fewer than two node curves
  std::uint64_t judged_bytes = 0;  // the size most judged figures came from; 0: none judged
  std::optional<double> floor_bytes_per_s;  // the baseline's floor, when it has one
};

// The figure a node was judged on (docs/validator.md): best busbw at or above the collective's
// `min_bytes`. A cluster-scope figure belongs to every node of its communicator.
struct JudgedBusbw {
  std::string node;
  std::string collective;
  std::string scope;
  std::uint64_t bytes = 0;
  double busbw_bytes_per_s = 0;
};

struct PairCell {
  std::string a;
  std::string b;
  double busbw_bytes_per_s = 0;
  bool passed = true;
  bool retest = false;          // measured by `sweep --pair-list` against a known-good node
  bool suspect_link = false;    // localization blames the path between a and b
  bool suspect_switch = false;  // a and b sit on either side of a suspect switch path
};

// The pairwise matrix of one run and collective at the size localization judges.
struct PairMatrix {
  std::string collective;
  std::uint64_t bytes = 0;
  double limit_bytes_per_s = 0;    // a pair below this failed
  std::vector<std::string> nodes;  // natural order
  std::vector<PairCell> cells;
  std::vector<std::string> bad_nodes;         // quarantined by localization
  std::vector<std::string> unresolved_nodes;  // slow with some partners, not re-tested
};

struct MinMedianMax {
  std::optional<double> min, median, max;
};

// A burn record's `timeline` (docs/records.md): one entry per point in each column.
struct BurnTimeline {
  std::vector<double> t_s;
  std::vector<std::optional<double>> tflops, sm_clock_mhz, power_w, temperature_c;
  std::vector<std::vector<std::string>> throttle;
};

// What a GPU stage's record says about the GPU it ran on.
struct GpuStageRow {
  std::string node;
  int gpu = -1;
  std::string uuid;
  std::string name;  // GPU model
  std::string status;
  std::string reason;
};

struct BurnGpu : GpuStageRow {
  std::string kernel;
  std::optional<double> tflops;  // median window
  std::optional<double> tflops_min, tflops_max;
  std::optional<double> datasheet_peak_tflops;
  std::optional<double> duration_s;
  std::optional<std::int64_t> telemetry_samples;
  MinMedianMax sm_clock_mhz, mem_clock_mhz, power_w, temperature_c;  // power, temp: no min
  std::optional<double> power_limit_w;
  std::vector<std::pair<std::string, double>> throttle_s;  // reason -> seconds
  std::optional<BurnTimeline> timeline;  // absent in records written before it existed
};

struct MembwGpu : GpuStageRow {
  std::optional<double> read, write, copy, memcpy_d2d, h2d, d2h;  // bytes/s
  std::optional<double> datasheet_peak;                           // bytes/s
  std::optional<double> fraction_of_peak;
  std::optional<std::int64_t> integrity_errors;
};

// One command that wrote into a run directory (`commcert run` writes one per stage).
struct StageCommand {
  std::string command;
  std::vector<std::string> argv;
  std::string status;
};

// What meta.json (and suite.json) of one run directory say, as far as they could be read.
struct RunDescription {
  std::string directory;
  std::string run_id;
  std::string suite;
  std::string status;
  std::string start_time;
  std::string end_time;
  std::string fault_injection;  // the COMMCERT_FAULT plan in effect; empty: none
  std::vector<std::pair<std::string, std::string>> build;        // version, git, build type...
  std::vector<std::pair<std::string, std::string>> versions;     // mpi, nccl, cuda...
  std::vector<std::pair<std::string, std::string>> environment;  // the whitelist only
  std::vector<std::string> warnings;
  std::vector<StageCommand> commands;  // oldest first
};

struct RunDetails {
  std::vector<RunDescription> runs;
  std::vector<CollectivePlot> collectives;
  std::vector<JudgedBusbw> judged;
  std::vector<PairMatrix> pairs;
  std::vector<BurnGpu> burns;    // node (natural order), then GPU
  std::vector<MembwGpu> membws;  // node (natural order), then GPU
  // From `report --history DB`: the trend of the verdict's nodes (docs/reports.md); empty
  // without a history.
  std::vector<NodeTrend> trends;
  std::size_t trends_left_out = 0;  // nodes beyond the cap on how many trends a page shows
};

// The burn and membw records as the validator's reader kept them: what the evidence drops
// (telemetry, timelines, datasheet peaks) for the per-GPU sections, without reading records.jsonl
// a second time. Give observer() to load_inputs (InputOptions::on_record); this object must
// outlive the loading.
class GpuRecordLines {
 public:
  [[nodiscard]] RecordReader::RecordObserver observer();
  // The record at `ref`, or nullptr when it was not a burn or membw record kept.
  [[nodiscard]] const Json* find(EvidenceRef ref) const;

 private:
  std::map<std::pair<std::uint32_t, std::uint32_t>, Json> lines_;  // (file, line) -> record
};

// Reads what the verdict does not hold from the evidence, the burn and membw records in
// `gpu_lines`, and each run directory's meta.json (records/run_meta.hpp) and suite.json. A
// meta.json that cannot be read is left out (the verdict already carries a note about it), never
// an error.
[[nodiscard]] RunDetails collect_run_details(const Evidence& evidence, const Baseline& baseline,
                                             const FleetVerdict& verdict,
                                             const GpuRecordLines& gpu_lines);

}  // namespace commcert
