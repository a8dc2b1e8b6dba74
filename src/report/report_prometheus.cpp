#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "report/verdict_reporter.hpp"

namespace commcert {
namespace {

// The Prometheus text exposition format, for node_exporter's textfile collector (docs/reports.md
// lists every metric). Names follow Prometheus' conventions: a `commcert_` prefix, base units in
// the name (bytes, seconds, flop), `_info` gauges of value 1 for metadata. The file is written
// through a temporary file in the same directory and a rename (`--report prom=PATH`), and the
// temporary name ends in `.tmp.<pid>`, which the collector (it reads `*.prom`) never picks up.

// Label values may hold anything a record holds: backslash, double quote and line feed are the
// three characters the format escapes.
std::string escape_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

using Labels = std::vector<std::pair<std::string_view, std::string>>;

// One metric family: HELP, TYPE, then its samples, one per distinct label set (a GPU measured in
// two runs keeps its better figure, so a scrape never sees a duplicate series).
class Family {
 public:
  Family(std::string_view name, std::string_view help) : name_(name), help_(help) {}

  void set(const Labels& labels, double value, bool keep_best = true) {
    std::string text;
    for (const auto& [label, label_value] : labels) {
      text += fmt::format("{}{}=\"{}\"", text.empty() ? "" : ",", label, escape_label(label_value));
    }
    const auto [it, inserted] = samples_.emplace(std::move(text), value);
    if (!inserted && keep_best) it->second = std::max(it->second, value);
  }

  [[nodiscard]] std::string render() const {
    if (samples_.empty()) return {};
    std::string out = fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name_, help_, name_);
    for (const auto& [labels, value] : samples_) {
      out += labels.empty() ? fmt::format("{} {}\n", name_, value)
                            : fmt::format("{}{{{}}} {}\n", name_, labels, value);
    }
    return out;
  }

 private:
  std::string_view name_;
  std::string_view help_;
  std::map<std::string, double> samples_;
};

constexpr std::array<NodeState, 3> kStates = {NodeState::kCertified, NodeState::kQuarantined,
                                              NodeState::kInconclusive};
constexpr std::array<std::string_view, 4> kCheckResults = {"pass", "warn", "fail", "inconclusive"};

std::string gpu_label(int gpu) {
  return gpu < 0 ? std::string() : std::to_string(gpu);
}

class PrometheusReporter final : public VerdictReporter {
 public:
  std::string render(const Report& report) const override {
    const FleetVerdict& verdict = report.verdict;
    Family info("commcert_report_info",
                "The verdict's baseline and suite; value 1, metadata in labels.");
    info.set(
        {{"sku", verdict.sku}, {"baseline", verdict.baseline_path}, {"suite", verdict.suite_name}},
        1);
    Family nodes("commcert_nodes", "Nodes in each verdict state.");
    for (const NodeState state : kStates) {
      nodes.set({{"state", std::string(to_string(state))}},
                static_cast<double>(verdict.count(state)));
    }
    Family state("commcert_node_state",
                 "1 for the verdict state the node is in, 0 for the other two states.");
    Family checks("commcert_node_checks", "The node's checks with each result.");
    for (const auto& node : verdict.nodes) {
      for (const NodeState s : kStates) {
        state.set({{"node", node.node}, {"state", std::string(to_string(s))}},
                  node.state == s ? 1 : 0);
      }
      for (const std::string_view result : kCheckResults) {
        const auto count = std::count_if(node.checks.begin(), node.checks.end(),
                                         [&](const auto& check) { return check.second == result; });
        checks.set({{"node", node.node}, {"result", std::string(result)}},
                   static_cast<double>(count));
      }
    }
    // A suspect switch path blames no node, so no node's state shows it: a series of its own.
    Family switch_paths("commcert_suspect_switch_path_info",
                        "A switch path localization suspects (no node is blamed for it); value "
                        "1, the path and the switches the topology names in labels.");
    for (const auto& node : verdict.nodes) {
      for (const auto& reason : node.reasons) {
        if (reason.code != "localization.suspect_switch" || !reason.link) continue;
        std::string switches;
        for (const auto& name : reason.link->hosts)
          switches += (switches.empty() ? "" : ",") + name;
        switch_paths.set({{"path", reason.link->device}, {"switches", switches}}, 1);
      }
    }
    std::string out =
        info.render() + nodes.render() + state.render() + checks.render() + switch_paths.render();
    if (report.run) out += run_metrics(*report.run);
    return out;
  }

 private:
  static std::string run_metrics(const RunDetails& run) {
    Family runs("commcert_run_info",
                "A run the report read; value 1, its id, suite and commcert build in labels.");
    for (const auto& meta : run.runs) {
      const auto build = [&](std::string_view key) {
        const auto it = std::find_if(meta.build.begin(), meta.build.end(),
                                     [&](const auto& field) { return field.first == key; });
        return it == meta.build.end() ? std::string() : it->second;
      };
      runs.set({{"run_id", meta.run_id},
                {"suite", meta.suite},
                {"status", meta.status},
                {"version", build("version")},
                {"git", build("git")}},
               1);
    }
    Family busbw("commcert_collective_busbw_bytes_per_second",
                 "Bus bandwidth the node was judged on: the best at or above the collective's "
                 "judged size (scope cluster: the whole communicator's figure).");
    Family size("commcert_collective_judged_size_bytes",
                "Message size of the busbw figure the node was judged on.");
    for (const auto& figure : run.judged) {
      const Labels labels = {
          {"node", figure.node}, {"collective", figure.collective}, {"scope", figure.scope}};
      busbw.set(labels, figure.busbw_bytes_per_s);
      size.set(labels, static_cast<double>(figure.bytes), false);
    }
    Family flops("commcert_gpu_burn_flop_per_second",
                 "Median burn throughput of the GPU over its sampling windows.");
    Family peak_flops("commcert_gpu_burn_datasheet_peak_flop_per_second",
                      "Dense datasheet peak of the GPU model for the burn kernel.");
    for (const auto& gpu : run.burns) {
      const Labels labels = {{"node", gpu.node},
                             {"gpu", gpu_label(gpu.gpu)},
                             {"uuid", gpu.uuid},
                             {"kernel", gpu.kernel}};
      if (gpu.tflops) flops.set(labels, *gpu.tflops * 1e12);
      if (gpu.datasheet_peak_tflops) peak_flops.set(labels, *gpu.datasheet_peak_tflops * 1e12);
    }
    Family membw("commcert_gpu_membw_bytes_per_second",
                 "GPU memory bandwidth by measurement (read, write, copy, memcpy_d2d, h2d, d2h).");
    Family peak_membw("commcert_gpu_membw_datasheet_peak_bytes_per_second",
                      "Datasheet memory bandwidth of the GPU model.");
    for (const auto& gpu : run.membws) {
      const Labels gpu_labels = {
          {"node", gpu.node}, {"gpu", gpu_label(gpu.gpu)}, {"uuid", gpu.uuid}};
      const std::pair<std::string_view, std::optional<double>> figures[] = {
          {"read", gpu.read}, {"write", gpu.write},
          {"copy", gpu.copy}, {"memcpy_d2d", gpu.memcpy_d2d},
          {"h2d", gpu.h2d},   {"d2h", gpu.d2h}};
      for (const auto& [measure, value] : figures) {
        if (!value) continue;
        Labels labels = gpu_labels;
        labels.emplace_back("measure", std::string(measure));
        membw.set(labels, *value);
      }
      if (gpu.datasheet_peak) peak_membw.set(gpu_labels, *gpu.datasheet_peak);
    }
    return runs.render() + busbw.render() + size.render() + flops.render() + peak_flops.render() +
           membw.render() + peak_membw.render();
  }
};

}  // namespace

std::unique_ptr<VerdictReporter> make_prometheus_reporter() {
  return std::make_unique<PrometheusReporter>();
}

}  // namespace commcert
