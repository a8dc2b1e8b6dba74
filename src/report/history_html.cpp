#include "report/history_html.hpp"

#include <fmt/format.h>

#include "history/history_text.hpp"
#include "report/markup.hpp"

namespace commcert {
namespace {

std::string trend_table(const NodeTrend& trend) {
  std::string head = "<tr><th>figure</th>";
  std::string states = "<tr class=\"trend-states\"><td>state</td>";
  for (const auto& run : trend.runs) {
    head += fmt::format("<th title=\"{}\">{}</th>", escape_markup(run.run.run_id),
                        escape_markup(run.run.started));
    states += fmt::format("<td class=\"state-{}\">{}</td>", escape_markup(run.state),
                          escape_markup(run.state.empty() ? "(no verdict)" : run.state));
  }
  head += "<th>change</th></tr>\n";
  states += "<td></td></tr>\n";
  std::string rows;
  for (const auto& row : trend.rows) {
    rows += fmt::format("<tr class=\"trend-row\"><td>{}</td>",
                        escape_markup(describe_figure(row.figure)));
    for (const auto& value : row.values)
      rows += fmt::format(
          "<td>{}</td>",
          value ? escape_markup(format_metric_value(row.figure.metric, *value)) : std::string("–"));
    const bool worse = row.change_pct && *row.change_pct < 0;
    rows += fmt::format("<td class=\"{}\">{}</td></tr>\n", worse ? "change worse" : "change",
                        row.change_pct ? fmt::format("{:+.1f}%", *row.change_pct) : "");
  }
  return fmt::format(
      "<h3>{}</h3>\n<p class=\"muted\">{} run(s) in the history name this node; the last {} "
      "shown, oldest first.</p>\n<table class=\"trend\" data-node=\"{}\"><thead>{}</thead>"
      "<tbody>{}{}</tbody></table>\n",
      escape_markup(trend.node), trend.runs_stored, trend.runs.size(), escape_markup(trend.node),
      head, states, rows);
}

}  // namespace

std::string history_section(const RunDetails& run) {
  if (run.trends.empty() && run.trends_left_out == 0) return {};
  std::string out =
      "<section id=\"history\"><h2>History</h2>\n<p class=\"muted\">Each node's figures in its "
      "latest runs in the history database (<code>commcert history show NODE</code> prints the "
      "same); quarantined and inconclusive nodes first.</p>\n";
  for (const auto& trend : run.trends) {
    if (trend.runs.empty()) {
      out += fmt::format(
          "<h3>{}</h3>\n<p class=\"muted\">No run in the history names this "
          "node.</p>\n",
          escape_markup(trend.node));
      continue;
    }
    out += trend_table(trend);
  }
  if (run.trends_left_out > 0) {
    out += fmt::format(
        "<p class=\"muted\">{} more node(s) not shown: <code>commcert history show "
        "NODE</code> prints any node's trend.</p>\n",
        run.trends_left_out);
  }
  return out + "</section>\n";
}

}  // namespace commcert
