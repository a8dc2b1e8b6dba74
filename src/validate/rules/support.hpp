#pragma once

// Helpers shared by rules; each rule stays in its own file.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validate/rules/rule.hpp"

namespace commcert::rules {

// Calls f(series, bound) for every metric the baseline bounds and the evidence has figures for.
template <typename F>
void for_each_bounded_series(const JudgeContext& context, F&& f) {
  for (const auto& series : context.metrics.series()) {
    if (const Bound* bound = context.baseline.bound(series.info.id)) f(series, *bound);
  }
}

// A finding about one figure: node, GPU or port, measured value, limit, unit and evidence.
[[nodiscard]] Finding metric_finding(const JudgeContext& context, ReasonCode code,
                                     std::string_view rule, const MetricSeries& series,
                                     const MetricSample& sample, std::optional<double> limit);

// A figure that fails `phrase` ("the floor") against `limit`: quarantines its node with `code`
// when the figure is the node's own, makes it inconclusive (perf.unattributed) when several
// nodes share it.
void limit_violation(const JudgeContext& context, std::vector<Finding>& out, ReasonCode code,
                     std::string_view rule, std::string_view phrase, const MetricSeries& series,
                     const MetricSample& sample, double limit);

// A finding about one GPU (or, with index -1, the node): node, check, GPU, {where}, evidence.
[[nodiscard]] Finding gpu_finding(const Evidence& evidence, ReasonCode code, std::string_view rule,
                                  std::string_view check, NodeId node, const GpuKey& gpu,
                                  EvidenceRef ref);

// A finding about one figure of a pair test (links between nodes, copies between GPUs) against
// its series' limit: measured, limit and unit (µs for latency tests, else GB/s), both as values
// and as the {measured}, {limit}, {unit} and {run} fields; the caller adds its own fields.
template <typename Series, typename Verdict>
[[nodiscard]] Finding pair_test_finding(const Evidence& evidence, std::string_view rule,
                                        std::string_view check, NodeId node, const Series& series,
                                        const Verdict& verdict) {
  const std::string unit = series.latency ? "µs" : "GB/s";
  Finding f;
  f.node = node;
  f.check = std::string(check);
  f.rule = std::string(rule);
  f.measured = verdict.measured;
  f.limit = series.limit;
  f.unit = unit;
  f.evidence = verdict.evidence;
  f.fields = {{"measured", format_figure(verdict.measured)},
              {"limit", format_figure(series.limit)},
              {"unit", unit},
              {"run", std::string(evidence.text(evidence.runs[series.run].run_id))}};
  return f;
}

// Replaces (or adds) one template field.
void set_field(Finding& finding, std::string_view name, std::string value);

[[nodiscard]] std::string join(const std::vector<std::string>& parts,
                               std::string_view separator = ", ");

// "collective.allreduce" for "allreduce".
[[nodiscard]] std::string collective_check(std::string_view collective);

// The check a timed-out operation belongs to: "allreduce float sum 64 KiB" -> collective.allreduce.
[[nodiscard]] std::string check_of_operation(std::string_view operation);

}  // namespace commcert::rules
