#include <algorithm>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "report/verdict_reporter.hpp"

namespace commcert {

// Each defined in its own file (verdict_<name>.cpp).
std::unique_ptr<VerdictReporter> make_text_reporter();
std::unique_ptr<VerdictReporter> make_json_reporter();
std::unique_ptr<VerdictReporter> make_nhc_reporter();
std::unique_ptr<VerdictReporter> make_nodes_reporter();
// Each defined in its own file (report_<name>.cpp); they read what the run measured too.
std::unique_ptr<VerdictReporter> make_markdown_reporter();
std::unique_ptr<VerdictReporter> make_html_reporter();
std::unique_ptr<VerdictReporter> make_junit_reporter();
std::unique_ptr<VerdictReporter> make_prometheus_reporter();

namespace {

// The one table of verdict formats: --format's choices, --report's names, their check and
// their help all come from here.
constexpr VerdictFormat kVerdictFormats[] = {
    {"text", "counts and one line per node not certified, with the reason to act on first",
     &make_text_reporter},
    {"json", "verdict.json: every node, check, reason and its evidence", &make_json_reporter},
    {"nhc", "LBNL NHC lines for Slurm's HealthCheckProgram", &make_nhc_reporter},
    {"nodes", "one line per node for scripts: node, state, severity, first reason code",
     &make_nodes_reporter},
    {"md", "Markdown for tickets: nodes to act on with every reason, judged busbw, failed GPUs",
     &make_markdown_reporter, true},
    {"html", "one self-contained page: verdict table, busbw plots, pair heatmap, GPUs, run meta",
     &make_html_reporter, true},
    {"junit", "JUnit XML for CI test reports: a testsuite per node, a testcase per check",
     &make_junit_reporter},
    {"prom", "Prometheus textfile for node_exporter: states, checks, busbw, TFLOP/s, membw",
     &make_prometheus_reporter, true},
};

}  // namespace

std::vector<std::string> suspect_switch_paths(const FleetVerdict& verdict) {
  std::vector<std::string> paths;
  for (const auto& node : verdict.nodes) {
    for (const auto& reason : node.reasons) {
      if (reason.code != "localization.suspect_switch" || !reason.link ||
          reason.link->type != "switch_path")
        continue;
      if (std::find(paths.begin(), paths.end(), reason.link->device) == paths.end())
        paths.push_back(reason.link->device);
    }
  }
  return paths;
}

std::span<const VerdictFormat> verdict_formats() {
  return kVerdictFormats;
}

const VerdictFormat* find_verdict_format(std::string_view name) {
  for (const VerdictFormat& format : kVerdictFormats) {
    if (format.name == name) return &format;
  }
  return nullptr;
}

std::string verdict_format_names() {
  std::string names;
  for (const VerdictFormat& format : kVerdictFormats)
    names += (names.empty() ? "" : ", ") + std::string(format.name);
  return names;
}

std::string verdict_format_help() {
  std::string help;
  for (const VerdictFormat& format : kVerdictFormats) {
    help += fmt::format("{}{} ({})", help.empty() ? "" : ", ", format.name, format.description);
  }
  return help;
}

std::string unknown_verdict_format(std::string_view name) {
  return fmt::format("unknown format '{}' (known: {})", name, verdict_format_names());
}

std::unique_ptr<VerdictReporter> make_verdict_reporter(std::string_view name) {
  const VerdictFormat* format = find_verdict_format(name);
  if (!format) throw UsageError(unknown_verdict_format(name));
  return format->make();
}

}  // namespace commcert
