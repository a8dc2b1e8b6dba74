#include "history/history_text.hpp"

#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>

#include "core/printable.hpp"
#include "core/units.hpp"
#include "history/node_trend.hpp"

namespace commcert {
namespace {

std::string significance_text(const MetricChange& change) {
  if (!change.test) {
    return change.a && change.b ? "no per-iteration data" : "";
  }
  return fmt::format("t={:.2f} (|t|>{:.2f}: {})", change.test->t, change.test->critical_t,
                     change.test->significant() ? "significant" : "not significant");
}

// Which nodes the failing figures point at: a node's own figures (node scope, its GPUs), and the
// multi-node figures whose slowest arrival it was. Most-blamed first.
std::string render_blame(const std::vector<MetricChange>& changes) {
  struct Blame {
    std::size_t own = 0;
    std::size_t waited_for = 0;
  };
  std::map<std::string, Blame> blame;
  std::size_t unattributed = 0;
  for (const auto& change : changes) {
    if (!fails_gate(change.kind)) continue;
    const RunFigure& figure = change.either();
    if (figure.node.find('+') == std::string::npos) {
      ++blame[figure.node].own;
    } else if (!figure.straggler.empty()) {
      ++blame[figure.straggler].waited_for;
    } else {
      ++unattributed;
    }
  }
  if (blame.empty() && unattributed == 0) return {};
  std::vector<std::pair<std::string, Blame>> ranked(blame.begin(), blame.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
    return x.second.own + x.second.waited_for > y.second.own + y.second.waited_for;
  });
  std::string out = "regressed:";
  for (const auto& [node, counts] : ranked) {
    out += fmt::format(" {} ({} own figure(s), waited for in {} group figure(s));", printable(node),
                       counts.own, counts.waited_for);
  }
  if (unattributed > 0)
    out += fmt::format(" {} group figure(s) that name no slowest node;", unattributed);
  out.back() = '\n';
  return out;
}

}  // namespace

std::string format_metric_value(const std::string& metric, double value) {
  if (metric == "tflops") return fmt::format("{:.1f} TFLOP/s", value);
  if (metric.ends_with("_bytes_per_s")) return fmt::format("{:.3f} GB/s", value / 1e9);
  return fmt::format("{:.4g}", value);
}

std::string describe_figure(const RunFigure& sample) {
  std::string text = sample.subject;
  if (!sample.gpu.empty()) text += " " + sample.gpu;
  if (sample.bytes > 0) text += " " + format_bytes(sample.bytes);
  text += " " + sample.metric;
  if (!sample.variant.empty()) text += " (" + sample.variant + ")";
  return printable(text);
}

std::string render_changes(const std::vector<MetricChange>& changes, bool all_rows) {
  std::string out;
  std::array<std::size_t, 7> counts{};
  for (const auto& change : changes) {
    ++counts[static_cast<std::size_t>(change.kind)];
    const bool moved = change.kind != ChangeKind::kUnchanged && change.kind != ChangeKind::kNoise;
    if (!all_rows && !moved) continue;
    const RunFigure& figure = change.either();
    std::string blame;
    if (change.b && change.b->node.find('+') != std::string::npos && !change.b->straggler.empty())
      blame = fmt::format("; waited for {}", printable(change.b->straggler));
    out +=
        fmt::format("{:<14} {:<24} {:<58} {:>16} -> {:<16} {:>8}  {}{}\n",
                    change_kind_name(change.kind), printable(figure.node), describe_figure(figure),
                    change.a ? format_metric_value(figure.metric, change.a->value) : "-",
                    change.b ? format_metric_value(figure.metric, change.b->value) : "-",
                    change.a && change.b ? fmt::format("{:+.1f}%", change.change_pct) : "",
                    significance_text(change), blame);
  }
  std::string summary;
  for (std::size_t kind = 0; kind < counts.size(); ++kind) {
    if (counts[kind] == 0) continue;
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", counts[kind],
                           change_kind_name(static_cast<ChangeKind>(kind)));
  }
  out += fmt::format("{} figure(s) compared: {}\n", changes.size(),
                     summary.empty() ? "none" : summary);
  out += render_blame(changes);
  return out;
}

std::string render_trend(const std::string& node, const std::vector<NodeRun>& runs,
                         std::size_t last_runs) {
  if (runs.empty())
    return fmt::format("{}: no run in the history names this node\n", printable(node));
  const NodeTrend trend = node_trend(node, runs, last_runs);
  std::string out = fmt::format("{}: {} run(s) in the history, showing the last {}\n",
                                printable(node), trend.runs_stored, trend.runs.size());
  for (std::size_t i = 0; i < trend.runs.size(); ++i) {
    const auto& run = trend.runs[i];
    out += fmt::format("  [{}] {} {:<40} {}\n", i + 1, run.run.started, printable(run.run.run_id),
                       run.state.empty() ? "(no verdict)" : run.state);
  }
  // One line per figure: its value in each shown run ("-" where the run lacks it).
  std::size_t width = 0;
  for (const auto& row : trend.rows)
    width = std::max(width, describe_figure(row.figure).size());
  for (const auto& row : trend.rows) {
    std::string cells;
    for (const auto& value : row.values)
      cells += fmt::format(
          " {:>14}", value ? format_metric_value(row.figure.metric, *value) : std::string("-"));
    const std::string change =
        row.change_pct ? fmt::format("  {:+.1f}%", *row.change_pct) : std::string();
    out += fmt::format("  {:<{}}{}{}\n", describe_figure(row.figure), width, cells, change);
  }
  return out;
}

}  // namespace commcert
