#include "cli/report_command.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "cli/history_options.hpp"
#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "history/history_db.hpp"
#include "history/node_trend.hpp"
#include "report/trend_selection.hpp"
#include "report/verdict_outputs.hpp"
#include "validate/baseline.hpp"
#include "validate/inputs.hpp"
#include "validate/suite.hpp"
#include "validate/suite_baseline_lookup.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

// What `commcert run` wrote into its suite.json: the baseline and suite it judged against, as a
// file that still exists or a built-in name (suite.json keeps the file, or the built-in's name
// and SKU).
struct RunReferences {
  std::optional<std::string> baseline;
  std::optional<std::string> suite;
};

std::optional<std::string> reference(const Json& suite_log, const char* source_key,
                                     const char* name_key) {
  const auto text = [&](const char* key) -> std::string {
    const auto it = suite_log.find(key);
    return it != suite_log.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string source = text(source_key);
  std::error_code error;
  if (!source.empty() && std::filesystem::is_regular_file(source, error)) return source;
  const std::string name = text(name_key);
  if (!name.empty()) return name;
  return std::nullopt;
}

std::optional<RunReferences> references_in(const std::filesystem::path& run_dir) {
  const std::filesystem::path log = run_dir / "suite.json";
  std::error_code error;
  if (!std::filesystem::is_regular_file(log, error)) return std::nullopt;
  const Json json =
      Json::parse(read_bounded_file(log, kMaxRunMetaBytes, "suite.json"), nullptr, false);
  if (!json.is_object()) return std::nullopt;
  return RunReferences{reference(json, "baseline_source", "baseline"),
                       reference(json, "source", "suite")};
}

// A results root (what `run --out` names) holds one directory per run: its runs' suite.json
// count as if each run had been named.
std::vector<std::filesystem::path> run_directories(const std::string& input) {
  const std::filesystem::path path(input);
  std::error_code error;
  if (std::filesystem::is_regular_file(path / "suite.json", error)) return {path};
  std::vector<std::filesystem::path> runs;
  if (!std::filesystem::is_directory(path, error)) return runs;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    if (entry.is_directory(error) &&
        std::filesystem::is_regular_file(entry.path() / "suite.json", error))
      runs.push_back(entry.path());
  }
  std::sort(runs.begin(), runs.end());
  return runs;
}

// The references every named run agrees on; runs judged against different baselines or suites
// leave the choice to the user rather than one being picked for them.
RunReferences run_references(const std::vector<std::string>& inputs, bool baseline_given,
                             bool suite_given) {
  std::optional<RunReferences> agreed;
  for (const auto& input : inputs) {
    for (const auto& run_dir : run_directories(input)) {
      const std::optional<RunReferences> found = references_in(run_dir);
      if (!found) continue;
      if (!agreed) {
        agreed = found;
        continue;
      }
      if (!baseline_given && agreed->baseline != found->baseline) {
        throw UsageError(fmt::format(
            "--baseline: the runs named used different baselines ({} in {}, {} before it); pass "
            "--baseline",
            found->baseline.value_or("none"), run_dir.string(), agreed->baseline.value_or("none")));
      }
      if (!suite_given && agreed->suite != found->suite) {
        throw UsageError(fmt::format(
            "--suite: the runs named used different suites ({} in {}, {} before it); pass --suite",
            found->suite.value_or("none"), run_dir.string(), agreed->suite.value_or("none")));
      }
    }
  }
  return agreed.value_or(RunReferences{});
}

// The HTML report shows this many nodes' trends at most: the troubled ones first.
constexpr std::size_t kMaxTrendNodes = 64;
constexpr std::size_t kTrendRuns = 8;

void add_trends(const std::string& path, const FleetVerdict& verdict, RunDetails& details) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw UsageError(
        fmt::format("--history: no history database at {} (commcert history add "
                    "RUN... makes one)",
                    path));
  }
  const HistoryDb history(path);
  const TrendSelection selection = select_trend_nodes(verdict, kMaxTrendNodes);
  for (const std::string& node : selection.nodes)
    details.trends.push_back(node_trend(node, history.node_history(node), kTrendRuns));
  details.trends_left_out = selection.left_out;
}

}  // namespace

void ReportCommand::configure(CLI::App& app) {
  add_results_argument(app, flags_.inputs);
  add_baseline_option(app, flags_.baseline,
                      "Baseline YAML or built-in baseline ({}); default: the one the run used "
                      "(its suite.json)");
  add_suite_option(app, flags_.suite,
                   "Suite YAML or built-in suite ({}) naming the required checks; default: the "
                   "run's, else the baseline's");
  add_report_options(app, flags_.report, "md");
  app.add_flag("--allow-partial", flags_.allow_partial,
               "Judge runs that never finished instead of holding their nodes inconclusive");
  add_history_option(app, flags_.history,
                     "History database (commcert history): the HTML report shows each node's "
                     "trend in its latest runs");
}

int ReportCommand::run(Invocation& /*invocation*/) {
  const std::vector<VerdictOutput> outputs =
      plan_verdict_outputs(flags_.report.format, flags_.report.reports, "md");
  const RunReferences references =
      run_references(flags_.inputs, flags_.baseline.has_value(), flags_.suite.has_value());
  const std::optional<std::string> baseline_ref =
      flags_.baseline ? flags_.baseline : references.baseline;
  if (!baseline_ref) {
    throw UsageError(fmt::format(
        "--baseline: no suite.json in {} names the baseline the run used; pass --baseline "
        "(built in: {})",
        flags_.inputs.front(), embedded_baseline_names()));
  }
  const Baseline baseline = load_baseline_ref(*baseline_ref);
  const std::optional<std::string> suite_ref = flags_.suite ? flags_.suite : references.suite;
  const std::optional<Suite> suite =
      suite_ref ? std::optional<Suite>(load_suite_ref(*suite_ref)) : std::nullopt;
  InputOptions input_options;
  input_options.allow_partial = flags_.allow_partial;
  GpuRecordLines gpu_lines;
  if (outputs_read_run(outputs)) input_options.on_record = gpu_lines.observer();
  LoadedInputs inputs = load_inputs(flags_.inputs, input_options);
  const FleetVerdict verdict =
      judge(inputs.evidence, baseline, suite ? &*suite : nullptr, std::move(inputs.notes));
  std::optional<RunDetails> details;
  if (outputs_read_run(outputs)) {
    details = collect_run_details(inputs.evidence, baseline, verdict, gpu_lines);
    if (flags_.history) add_trends(*flags_.history, verdict, *details);
  }
  const bool reported =
      write_reports(Report(verdict, details ? &*details : nullptr), outputs, "commcert report");
  return reported ? 0 : to_int(ExitCode::kError);
}

}  // namespace commcert
