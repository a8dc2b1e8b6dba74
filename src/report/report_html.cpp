#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/burn_timeline_html.hpp"
#include "report/history_html.hpp"
#include "report/markup.hpp"
#include "report/report_svg.hpp"
#include "report/verdict_reporter.hpp"

namespace commcert {
namespace {

// One self-contained page: no request leaves it (fonts, scripts, styles and charts are inline),
// so it opens on an air-gapped cluster and from a mail attachment. Its Content-Security-Policy
// says so to the browser as well: nothing may be fetched, and the one script that may run is the
// filter below, named by its hash. The filter also starts from the address's fragment
// (report.html#state=quarantined, #q=node7), so a link can open the page filtered. Were a string
// ever to slip past escape_markup, an injected handler or script still would not run.
//
// kFilterScript's hash (sha256, base64) is in kPolicy; change both together:
//   printf '%s' "$script" | openssl dgst -sha256 -binary | base64
// The browser test (tests/integration/test_report_html.py) fails when they disagree.
constexpr std::string_view kFilterScript =
    "(function(){var q=document.getElementById('verdict-filter'),"
    "s=document.getElementById('state-filter');"
    "function apply(){var t=q.value.toLowerCase(),st=s.value;"
    "document.querySelectorAll('#verdict tbody tr').forEach(function(r){"
    "r.hidden=!((!st||r.dataset.state===st)&&r.textContent.toLowerCase().indexOf(t)>=0);});}"
    "var h=new URLSearchParams(location.hash.slice(1));"
    "if(h.has('state'))s.value=h.get('state');if(h.has('q'))q.value=h.get('q');"
    "q.addEventListener('input',apply);s.addEventListener('change',apply);apply();})();";
constexpr std::string_view kPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; "
    "script-src 'sha256-nBUpc1a7P9whbQyArT/rgkDXveQTXp1Tub7EkKQ8EVc='";

constexpr std::string_view kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2430}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d8dde6}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px}th,td{border:1px solid #d8dde6;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f2f4f8}
.summary span{display:inline-block;margin-right:14px;padding:2px 10px;border-radius:10px}
.certified{background:#e3f4e6}.quarantined{background:#fbe0e0}.inconclusive{background:#fff1cc}
td.state{font-weight:600}ul.reasons{margin:0;padding-left:18px}.code{font-family:monospace}
.figures,.evidence,.action{color:#555;font-size:12px}
nav a{margin-right:12px}.muted{color:#777}code{font-size:12px}
svg{font-size:11px;background:#fff;margin:4px 0}
svg .grid{stroke:#e4e7ee}svg .tick{fill:#555}svg .axis-label,svg .plot-title{fill:#1d2430}
svg .plot-title{font-weight:600;font-size:13px}
svg .curve{fill:none;stroke:#8a94a6;stroke-width:1.5}
svg circle.curve{fill:#8a94a6}
svg .curve.flagged{stroke:#d62728;stroke-width:3}svg circle.curve.flagged{fill:#d62728}
svg .median{fill:none;stroke:#1f4e96;stroke-width:2;stroke-dasharray:6 3}
svg .band{fill:#9ec3f0;fill-opacity:.45;stroke:none}
svg .strip{fill:#f58518}
table.trend td.change.worse{color:#d62728;font-weight:600}
svg .floor{stroke:#d62728;stroke-dasharray:4 4}svg .judged{stroke:#333;stroke-dasharray:2 3}
svg .legend text{fill:#333}svg .bar.series0{fill:#4c78a8}svg .bar.series1{fill:#72b7b2}
svg .bar.series2{fill:#f58518}svg .bar-group.flagged .bar{stroke:#d62728;stroke-width:2}
svg .whisker{stroke:#111;stroke-width:1.5}svg .reference{stroke:#d62728;stroke-width:2}
table.heatmap td{text-align:right;min-width:64px;font-size:12px}
table.heatmap .bad-node{outline:2px solid #d62728}
table.heatmap td.suspect-link{outline:3px dashed #7b1fa2;font-weight:700}
table.heatmap td.suspect-switch{outline:2px dotted #1f4e9b}p.suspect-switch{font-weight:600}
table.heatmap td.fail{font-weight:700}table.heatmap td.self{background:#eee}
.filters{margin:6px 0}
)";

std::string e(std::string_view text) {
  return escape_markup(text);
}

std::string reason_item(const Reason& reason) {
  std::string figures;
  if (reason.measured) {
    figures = fmt::format("measured {}{}", format_number(reason.measured, 4),
                          reason.unit.empty() ? "" : " " + reason.unit);
    if (reason.limit) figures += fmt::format(", limit {}", format_number(reason.limit, 4));
  }
  if (reason.gpu_index >= 0)
    figures += fmt::format("{}gpu {}", figures.empty() ? "" : ", ", reason.gpu_index);
  std::string evidence;
  for (const auto& where : reason.evidence)
    evidence += fmt::format("{}{}:{}", evidence.empty() ? "" : ", ", where.file, where.line);
  return fmt::format(
      "<li class=\"reason\" data-code=\"{}\"><span class=\"code\">{}</span> ({}) {}{}{}{}</li>",
      e(reason.code), e(reason.code), e(to_string(reason.effect)), e(reason.message),
      figures.empty() ? "" : fmt::format(" <span class=\"figures\">[{}]</span>", e(figures)),
      reason.action.empty()
          ? ""
          : fmt::format("<div class=\"action\">action: {}</div>", e(reason.action)),
      evidence.empty() ? ""
                       : fmt::format("<div class=\"evidence\">evidence: {}</div>", e(evidence)));
}

std::string verdict_section(const FleetVerdict& v) {
  std::string out = "<section id=\"verdict-section\"><h2>Verdict</h2>\n";
  out += fmt::format(
      "<p class=\"summary\"><span class=\"certified\">{} certified</span><span "
      "class=\"quarantined\">{} quarantined</span><span class=\"inconclusive\">{} "
      "inconclusive</span></p>\n",
      v.count(NodeState::kCertified), v.count(NodeState::kQuarantined),
      v.count(NodeState::kInconclusive));
  out +=
      "<div class=\"filters\"><input id=\"verdict-filter\" type=\"search\" "
      "placeholder=\"filter: node, code, message\" size=\"40\"> <select id=\"state-filter\">"
      "<option value=\"\">every state</option><option>certified</option>"
      "<option>quarantined</option><option>inconclusive</option></select></div>\n";
  out +=
      "<table id=\"verdict\"><thead><tr><th>node</th><th>state</th><th>severity</th>"
      "<th>checks</th><th>reasons</th></tr></thead><tbody>\n";
  for (const auto& node : v.nodes) {
    std::string checks;
    for (const auto& [check, status] : node.checks)
      checks += fmt::format("{}{}: {}", checks.empty() ? "" : "<br>", e(check), e(status));
    std::string reasons;
    for (const auto& reason : node.reasons)
      reasons += reason_item(reason);
    const std::string_view state = to_string(node.state);
    out += fmt::format(
        "<tr class=\"node-row\" data-state=\"{}\"><td class=\"node\">{}</td><td class=\"state "
        "{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        state, e(node.node), state, state, e(to_string(node.severity)), checks,
        reasons.empty() ? "<span class=\"muted\">none</span>"
                        : "<ul class=\"reasons\">" + reasons + "</ul>");
  }
  out += "</tbody></table>\n";
  // A suspect switch path blames none of its nodes: named once, on a line of its own.
  for (const auto& path : suspect_switch_paths(v))
    out += fmt::format("<p class=\"suspect-switch\">suspect switch path {}</p>\n", e(path));
  if (!v.notes.empty()) {
    out += "<h3>Notes on the input</h3><ul>";
    for (const auto& note : v.notes) {
      out += fmt::format("<li><span class=\"code\">{}</span> {}{}</li>", e(note.code),
                         e(note.place()), e(note.message));
    }
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

std::string collectives_section(const RunDetails& run) {
  if (run.collectives.empty()) return {};
  std::string out =
      "<section id=\"collectives\"><h2>Bus bandwidth against message size</h2>\n<p "
      "class=\"muted\">The best busbw of each size (over placements, datatypes and cycles). Grey: "
      "one communicator each; red: a node the verdict holds a reason against on this "
      "collective; blue band: the middle half of the node-scope curves, dashed blue their "
      "median.</p>\n";
  for (const auto& plot : run.collectives) {
    LinePlot chart;
    chart.title = fmt::format("{} busbw, scope {}", plot.collective, plot.scope);
    chart.y_label = "busbw (GB/s)";
    chart.y_scale = 1e9;
    for (const auto& curve : plot.curves) {
      PlotLine line;
      line.label = curve.label;
      line.css_class = curve.flagged ? "curve flagged" : "curve";
      line.node = curve.nodes.size() == 1 ? curve.nodes.front() : "";
      for (const auto& point : curve.points)
        line.points.push_back({static_cast<double>(point.bytes), point.busbw_bytes_per_s});
      chart.lines.push_back(std::move(line));
    }
    if (!plot.band.empty()) {
      PlotLine median{"fleet median", "median", "", {}};
      for (const auto& b : plot.band) {
        chart.band.push_back({static_cast<double>(b.bytes), b.low, b.high});
        median.points.push_back({static_cast<double>(b.bytes), b.median});
      }
      chart.lines.push_back(std::move(median));
    }
    if (plot.judged_bytes > 0) {
      chart.marker_x = static_cast<double>(plot.judged_bytes);
      chart.marker_label = "judged at " + format_bytes(plot.judged_bytes);
    }
    chart.floor_y = plot.floor_bytes_per_s;
    chart.attributes = fmt::format("class=\"plot busbw\" data-collective=\"{}\" data-scope=\"{}\"",
                                   e(plot.collective), e(plot.scope));
    out += "<figure>" + render_svg(chart) + "</figure>\n";
  }
  return out + "</section>\n";
}

std::string heatmap(const PairMatrix& matrix) {
  std::map<std::pair<std::string, std::string>, const PairCell*> cells;
  double best = 0;
  for (const auto& cell : matrix.cells) {
    // A re-test against a known-good node replaces nothing: the round-robin figure stays shown.
    if (!cell.retest || !cells.contains({cell.a, cell.b})) {
      cells[{cell.a, cell.b}] = &cell;
      cells[{cell.b, cell.a}] = &cell;
    }
    best = std::max(best, cell.busbw_bytes_per_s);
  }
  const std::set<std::string> bad(matrix.bad_nodes.begin(), matrix.bad_nodes.end());
  std::string out = fmt::format(
      "<h3>{} at {}: pair busbw (GB/s)</h3>\n<p class=\"muted\">A pair below {} fails. "
      "Outlined red: a node localization quarantines; dashed purple: a link it suspects; "
      "dotted blue: a pair across a switch path it suspects.</p>\n"
      "<table class=\"heatmap\" data-collective=\"{}\"><thead><tr><th></th>",
      e(matrix.collective), e(format_bytes(matrix.bytes)),
      e(format_gb_per_s(matrix.limit_bytes_per_s)), e(matrix.collective));
  for (const auto& node : matrix.nodes)
    out += fmt::format("<th class=\"{}\">{}</th>", bad.contains(node) ? "bad-node" : "", e(node));
  out += "</tr></thead><tbody>\n";
  for (const auto& row : matrix.nodes) {
    out += fmt::format("<tr><th class=\"{}\">{}</th>", bad.contains(row) ? "bad-node" : "", e(row));
    for (const auto& column : matrix.nodes) {
      if (row == column) {
        out += "<td class=\"self\"></td>";
        continue;
      }
      const auto found = cells.find({row, column});
      if (found == cells.end()) {
        out += "<td class=\"cell missing\" title=\"not measured\">–</td>";
        continue;
      }
      const PairCell& cell = *found->second;
      std::string classes = "cell";
      if (!cell.passed) classes += " fail";
      if (cell.suspect_link) classes += " suspect-link";
      if (cell.suspect_switch) classes += " suspect-switch";
      if (bad.contains(row) || bad.contains(column)) classes += " bad-node";
      // Red (hue 0) for nothing moved to green (120) for the best pair of the matrix.
      const double share = best > 0 ? std::clamp(cell.busbw_bytes_per_s / best, 0.0, 1.0) : 0;
      out += fmt::format(
          "<td class=\"{}\" data-a=\"{}\" data-b=\"{}\" style=\"background:hsl({:.0f},70%,80%)\" "
          "title=\"{} – {}\">{:.2f}</td>",
          classes, e(row), e(column), 120 * share, e(row), e(column), cell.busbw_bytes_per_s / 1e9);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  if (!matrix.unresolved_nodes.empty()) {
    std::string names;
    for (const auto& node : matrix.unresolved_nodes)
      names += (names.empty() ? "" : ", ") + e(node);
    out +=
        fmt::format("<p>Not yet resolved (slow with some partners, no re-test): {}</p>\n", names);
  }
  return out;
}

std::string pairs_section(const RunDetails& run) {
  if (run.pairs.empty()) return {};
  std::string out = "<section id=\"pairs\"><h2>Pairwise matrix</h2>\n";
  for (const auto& matrix : run.pairs)
    out += heatmap(matrix);
  return out + "</section>\n";
}

std::string range(const MinMedianMax& values) {
  if (!values.median && !values.max) return "–";
  return fmt::format("{} / {} / {}", format_number(values.min, 0), format_number(values.median, 0),
                     format_number(values.max, 0));
}

std::string gpu_name(const std::string& node, int gpu) {
  return gpu < 0 ? node : fmt::format("{} gpu{}", node, gpu);
}

std::string burn_section(const RunDetails& run) {
  if (run.burns.empty()) return {};
  BarChart chart;
  chart.title = "burn: TFLOP/s per GPU (median window, whisker min–max)";
  chart.y_label = "TFLOP/s";
  chart.series = {"median window"};
  chart.reference_label = "datasheet peak";
  chart.attributes = "class=\"plot burn\"";
  std::string rows;
  for (const auto& gpu : run.burns) {
    chart.groups.push_back({gpu_name(gpu.node, gpu.gpu),
                            {gpu.tflops},
                            gpu.tflops_min,
                            gpu.tflops_max,
                            gpu.datasheet_peak_tflops,
                            gpu.status != "ok"});
    std::string throttle;
    for (const auto& [reason, seconds] : gpu.throttle_s)
      throttle += fmt::format("{}{} {:.1f}s", throttle.empty() ? "" : ", ", reason, seconds);
    rows += fmt::format(
        "<tr class=\"burn-row\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / "
        "{} / {}</td><td>{}</td><td>{}</td><td>{} (limit {})</td><td>{}</td><td>{}</td><td>{}</td>"
        "</tr>\n",
        e(gpu.node), gpu.gpu, e(gpu.name), e(gpu.kernel), e(gpu.status),
        format_number(gpu.tflops_min, 1), format_number(gpu.tflops, 1),
        format_number(gpu.tflops_max, 1), format_number(gpu.datasheet_peak_tflops, 1),
        range(gpu.sm_clock_mhz), range(gpu.power_w), format_number(gpu.power_limit_w, 0),
        range(gpu.temperature_c), e(throttle.empty() ? "none" : throttle), e(gpu.reason));
  }
  return "<section id=\"burn\"><h2>Burn per GPU</h2>\n<p class=\"muted\">The chart and table "
         "summarise each GPU's measurement windows and NVML telemetry (minimum / median / "
         "maximum); where the records have a timeline, the figures below show them over "
         "time.</p>\n<figure>" +
         render_svg(chart) +
         "</figure>\n<table id=\"burn-table\"><thead><tr><th>node</th><th>gpu</th><th>model</th>"
         "<th>kernel</th><th>status</th><th>TFLOP/s min / median / max</th><th>datasheet "
         "TFLOP/s</th><th>SM clock MHz</th><th>power W (median / max)</th><th>temperature °C "
         "(median / max)</th><th>throttle</th><th>reason</th></tr></thead><tbody>\n" +
         rows + "</tbody></table>\n" + burn_timeline_figures(run.burns) + "</section>\n";
}

std::string membw_section(const RunDetails& run) {
  if (run.membws.empty()) return {};
  BarChart chart;
  chart.title = "membw: device memory bandwidth per GPU against the datasheet";
  chart.y_label = "GB/s";
  chart.y_scale = 1e9;
  chart.series = {"read", "write", "copy"};
  chart.reference_label = "datasheet peak";
  chart.attributes = "class=\"plot membw\"";
  std::string rows;
  for (const auto& gpu : run.membws) {
    chart.groups.push_back({gpu_name(gpu.node, gpu.gpu),
                            {gpu.read, gpu.write, gpu.copy},
                            std::nullopt,
                            std::nullopt,
                            gpu.datasheet_peak,
                            gpu.status != "ok"});
    rows += fmt::format(
        "<tr class=\"membw-row\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        e(gpu.node), gpu.gpu, e(gpu.name), e(gpu.status), format_gb_per_s(gpu.read),
        format_gb_per_s(gpu.write), format_gb_per_s(gpu.copy), format_gb_per_s(gpu.memcpy_d2d),
        format_gb_per_s(gpu.datasheet_peak), format_number(gpu.fraction_of_peak, 3),
        format_gb_per_s(gpu.h2d), format_gb_per_s(gpu.d2h),
        gpu.integrity_errors ? std::to_string(*gpu.integrity_errors) : std::string("–"));
  }
  return "<section id=\"membw\"><h2>Memory bandwidth per GPU</h2>\n<figure>" + render_svg(chart) +
         "</figure>\n<table id=\"membw-table\"><thead><tr><th>node</th><th>gpu</th><th>model</th>"
         "<th>status</th><th>read</th><th>write</th><th>copy</th><th>cudaMemcpy D2D</th>"
         "<th>datasheet</th><th>of peak</th><th>H2D</th><th>D2H</th><th>integrity errors</th>"
         "</tr></thead><tbody>\n" +
         rows + "</tbody></table></section>\n";
}

std::string health_section(const FleetVerdict& v) {
  std::string items;
  for (const auto& node : v.nodes) {
    for (const auto& reason : node.reasons) {
      if (!reason.check.starts_with("health")) continue;
      items += fmt::format("<tr class=\"health-row\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                           e(node.node), e(reason.check),
                           "<ul class=\"reasons\">" + reason_item(reason) + "</ul>");
    }
  }
  return "<section id=\"health\"><h2>Health findings</h2>\n" +
         (items.empty()
              ? std::string("<p class=\"muted\">No health check found anything.</p>\n")
              : "<table><thead><tr><th>node</th><th>check</th><th>finding</th></tr></thead>"
                "<tbody>\n" +
                    items + "</tbody></table>\n") +
         "</section>\n";
}

std::string pairs_table(const std::vector<std::pair<std::string, std::string>>& fields) {
  if (fields.empty()) return "<p class=\"muted\">none recorded</p>\n";
  std::string out = "<table class=\"fields\"><tbody>";
  for (const auto& [key, value] : fields)
    out += fmt::format("<tr><th>{}</th><td><code>{}</code></td></tr>", e(key), e(value));
  return out + "</tbody></table>\n";
}

std::string meta_section(const FleetVerdict& v, const RunDetails* run) {
  std::string out = "<section id=\"meta\"><h2>Runs and inputs</h2>\n";
  out += fmt::format(
      "<p>Baseline <code>{}</code> ({}){}.</p>\n", e(v.baseline_path), e(v.sku),
      v.suite_name.empty() ? "" : fmt::format(", suite <code>{}</code>", e(v.suite_name)));
  out +=
      "<table><thead><tr><th>input</th><th>lines</th><th>records</th><th>duplicates</th>"
      "<th>unreadable</th></tr></thead><tbody>";
  for (const auto& input : v.inputs)
    out +=
        fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    e(input.path), input.lines, input.records, input.duplicates, input.unreadable);
  out += "</tbody></table>\n";
  if (run) {
    for (const auto& meta : run->runs) {
      out += fmt::format(
          "<div class=\"run\" data-run=\"{}\"><h3>Run {}</h3>\n<p>{}{}{}</p>\n", e(meta.run_id),
          e(meta.run_id), e(meta.status), meta.suite.empty() ? "" : ", suite " + e(meta.suite),
          meta.start_time.empty() ? ""
                                  : fmt::format(", {} – {}", e(meta.start_time), e(meta.end_time)));
      if (!meta.fault_injection.empty())
        out += fmt::format("<p><strong>Fault injection in effect:</strong> <code>{}</code></p>\n",
                           e(meta.fault_injection));
      if (!meta.warnings.empty()) {
        out += "<ul class=\"warnings\">";
        for (const auto& warning : meta.warnings)
          out += fmt::format("<li>{}</li>", e(warning));
        out += "</ul>\n";
      }
      out += "<h3>commcert build</h3>\n" + pairs_table(meta.build);
      out += "<h3>Versions</h3>\n" + pairs_table(meta.versions);
      out += "<h3>Environment (whitelisted variables only)</h3>\n" + pairs_table(meta.environment);
      out += "<h3>Command lines</h3>\n<ol class=\"commands\">";
      for (const auto& command : meta.commands) {
        std::string line;
        for (const auto& arg : command.argv)
          line += (line.empty() ? "" : " ") + arg;
        out += fmt::format("<li><code>{}</code> <span class=\"muted\">{}</span></li>", e(line),
                           e(command.status));
      }
      out += "</ol></div>\n";
    }
  }
  return out + "</section>\n";
}

class HtmlReporter final : public VerdictReporter {
 public:
  std::string render(const Report& report) const override {
    const FleetVerdict& v = report.verdict;
    const std::string title = fmt::format("commcert report: {}", v.sku);
    std::string body = fmt::format("<h1>{}</h1>\n", e(title));
    body +=
        "<nav><a href=\"#verdict-section\">verdict</a><a href=\"#collectives\">busbw</a><a "
        "href=\"#pairs\">pairs</a><a href=\"#burn\">burn</a><a href=\"#membw\">membw</a><a "
        "href=\"#health\">health</a><a href=\"#history\">history</a><a href=\"#meta\">runs</a>"
        "</nav>\n";
    body += verdict_section(v);
    if (report.run) {
      body += collectives_section(*report.run);
      body += pairs_section(*report.run);
      body += burn_section(*report.run);
      body += membw_section(*report.run);
    }
    body += health_section(v);
    if (report.run) body += history_section(*report.run);
    body += meta_section(v, report.run);
    return fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n{}<script>{}</script>\n"
        "</body>\n</html>\n",
        kPolicy, e(title), kStyle, body, kFilterScript);
  }
};

}  // namespace

std::unique_ptr<VerdictReporter> make_html_reporter() {
  return std::make_unique<HtmlReporter>();
}

}  // namespace commcert
