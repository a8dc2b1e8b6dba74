#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// The numbers a baseline can bound: their ids, units, directions and where a baseline declares
// them. Baselines are parsed against this catalog; the metric table (metrics.hpp) fills it
// from evidence. Neither needs the other's half.
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

// The metrics with one fixed id (membw, health), the busbw metric of a collective at a scope
// ("node", "cluster") and the TFLOP/s metric of a burn kernel.
[[nodiscard]] std::vector<MetricInfo> static_metrics();
[[nodiscard]] MetricInfo busbw_metric(std::string_view collective, std::string_view scope);
[[nodiscard]] MetricInfo tflops_metric(std::string_view kernel);

// Burn kernels the record contract defines.
[[nodiscard]] std::span<const std::string_view> burn_kernels();

}  // namespace commcert
