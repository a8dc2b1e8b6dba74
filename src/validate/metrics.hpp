#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "validate/evidence.hpp"

namespace commcert {

struct Baseline;

enum class Direction { kHigherIsBetter, kLowerIsBetter };
enum class MetricSubject { kNode, kGpu, kIbPort };

// A number a baseline can bound. Ids are stable: "collective.allreduce.busbw.node",
// "burn.tflops.gemm_bf16", "membw.copy", "health.gpu.temperature", "health.ib.rate".
struct MetricInfo {
  std::string id;
  std::string check;      // the check it belongs to
  std::string yaml_path;  // key path under checks.<check> in a baseline
  std::string label;      // for messages: "allreduce busbw (node scope)"
  std::string unit;       // the baseline's unit
  double scale = 1.0;     // record unit * scale = baseline unit
  Direction direction = Direction::kHigherIsBetter;
  MetricSubject subject = MetricSubject::kNode;
  // Metrics of one group are alternatives for coverage: a node needs evidence for one scope of
  // a collective, one kernel of burn; other groups hold a single metric.
  std::string group;
};

// nullopt for an id that names no metric.
[[nodiscard]] std::optional<MetricInfo> metric_info(std::string_view id);
// The metric declared at `yaml_path` under checks.<check>, or nullopt.
[[nodiscard]] std::optional<MetricInfo> metric_at(std::string_view check,
                                                  std::string_view yaml_path);
// Keys a check's block may hold bounds under (for error messages and docs).
[[nodiscard]] std::vector<std::string> metric_keys(std::string_view check);

// Burn kernels the record contract defines.
[[nodiscard]] std::span<const std::string_view> burn_kernels();

// One subject's best figure for a metric (hard faults are judged on every record; performance
// on the best measurement, the way AzNHC passes on the first repeat that meets its floor).
struct MetricSample {
  NodeId node = kNoString;
  GpuKey gpu;                   // for per-GPU metrics
  StringId device = kNoString;  // for per-port metrics
  int port = -1;
  double value = 0;  // in the metric's baseline unit
  EvidenceRef ref;
  // False when the figure belongs to a multi-node communicator: it cannot be pinned on a node.
  bool attributable = true;
  std::uint32_t run = kNoString;  // the run the figure came from
  std::uint32_t peers = 1;        // nodes that share this figure
  std::uint64_t bytes = 0;        // message size, for collective figures
};

struct MetricSeries {
  MetricInfo info;
  std::vector<MetricSample> samples;  // one per subject
};

// Every metric the evidence holds a figure for, bounded or not (fleet statistics and baseline
// derivation read the unbounded ones too).
class MetricTable {
 public:
  MetricTable(const Evidence& evidence, const Baseline& baseline);
  [[nodiscard]] const std::vector<MetricSeries>& series() const { return series_; }
  [[nodiscard]] const MetricSeries* find(std::string_view id) const;

 private:
  std::vector<MetricSeries> series_;
};

}  // namespace commcert
