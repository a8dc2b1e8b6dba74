#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "validate/evidence.hpp"
#include "validate/metric_catalog.hpp"

namespace commcert {

struct Baseline;

// One subject's best figure for a metric (hard faults are judged on every record; performance
// on the best measurement, the way AzNHC passes on the first repeat that meets its floor).
// Members ordered so that none needs padding (56 bytes): a 40,960-node fleet keeps 3.3 million.
struct MetricSample {
  double value = 0;         // in the metric's baseline unit
  std::uint64_t bytes = 0;  // message size, for collective figures
  EvidenceRef ref;
  NodeId node = kNoString;
  GpuKey gpu;                   // for per-GPU metrics
  StringId device = kNoString;  // for per-port metrics
  int port = -1;
  std::uint32_t run = kNoString;  // the run the figure came from
  std::uint32_t peers = 1;        // nodes that share this figure
  // False when the figure belongs to a multi-node communicator: it cannot be pinned on a node.
  bool attributable = true;
};
static_assert(sizeof(MetricSample) <= 56);

struct MetricSeries {
  MetricInfo info;
  std::vector<MetricSample> samples;  // one per subject (and run, with kSubjectAndRun)
  // The best of each subject's own figures (attributable ones), for judging a node against its
  // peers: a figure it shares with other nodes is neither its figure nor hides its own.
  std::vector<MetricSample> own;
};

// Every metric the evidence holds a figure for, bounded or not (fleet statistics and baseline
// derivation read the unbounded ones too).
// Where a figure came from, to tell runs apart: its run, or for records that name none (burn,
// membw, health) the file it was read from (one records.jsonl per run directory).
[[nodiscard]] std::uint64_t sample_origin(const MetricSample& sample);

// One sample per subject (the best of every run: what a node can do), or one per subject and
// run (what each run showed: baseline derivation's spread between runs).
enum class SamplesPer { kSubject, kSubjectAndRun };

class MetricTable {
 public:
  MetricTable(const Evidence& evidence, const Baseline& baseline,
              SamplesPer per = SamplesPer::kSubject);
  [[nodiscard]] const std::vector<MetricSeries>& series() const { return series_; }
  [[nodiscard]] const MetricSeries* find(std::string_view id) const;

 private:
  std::vector<MetricSeries> series_;
};

}  // namespace commcert
