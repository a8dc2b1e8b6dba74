#include "cli/compare_command.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "cli/history_options.hpp"
#include "cli/number_checks.hpp"
#include "core/errors.hpp"
#include "core/printable.hpp"
#include "core/units.hpp"
#include "history/compare.hpp"
#include "history/history_db.hpp"
#include "history/history_text.hpp"
#include "history/run_summary.hpp"

namespace commcert {
namespace {

std::string utc_timestamp_seconds_ago(double seconds) {
  const auto then = std::chrono::system_clock::now() -
                    std::chrono::duration_cast<std::chrono::system_clock::duration>(
                        std::chrono::duration<double>(seconds));
  const std::time_t t = std::chrono::system_clock::to_time_t(then);
  std::tm utc{};
  gmtime_r(&t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.000Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

std::vector<RunFigure> only_nodes(std::vector<RunFigure> samples,
                                  const std::vector<std::string>& nodes) {
  if (nodes.empty()) return samples;
  std::erase_if(samples, [&](const RunFigure& sample) {
    return std::find(nodes.begin(), nodes.end(), sample.node) == nodes.end();
  });
  return samples;
}

// The history's runs since the cutoff, except `candidate` itself, pooled into one baseline:
// each figure's mean value over the runs, and all their iterations together.
std::vector<RunFigure> history_baseline(const std::string& path, const std::string& since,
                                        const RunSummary& candidate, std::size_t& runs_used) {
  if (!std::filesystem::exists(path))
    throw UsageError(
        fmt::format("history {} does not exist (add runs with `commcert history add` "
                    "or name it with --history)",
                    path));
  const HistoryDb db(path);
  std::vector<RunFigure> all;
  runs_used = 0;
  for (const auto& run : db.runs(since)) {
    if (run.fingerprint == candidate.fingerprint) continue;
    const auto figures = db.metrics(run.id);
    all.insert(all.end(), figures.begin(), figures.end());
    ++runs_used;
  }
  if (runs_used == 0)
    throw UsageError(fmt::format("history {} holds no other run since {}", path, since));
  return merge_by_key(all);
}

}  // namespace

double parse_since_seconds(const std::string& text) {
  if (text.size() > 1 && text.back() == 'd') {
    const double seconds =
        24 * parse_duration_seconds(text.substr(0, text.size() - 1) + "h", "--since");
    if (seconds > kMaxDurationSeconds)
      throw UsageError(fmt::format("invalid --since '{}': longer than one year", text));
    return seconds;
  }
  return parse_duration_seconds(text, "--since");
}

void CompareCommand::configure(CLI::App& app) {
  app.add_option("runs", flags_.runs, "RUN_A RUN_B (baseline, candidate), or one RUN with --since")
      ->required()
      ->expected(1, 2);
  app.add_option("--since", flags_.since,
                 "Compare RUN against every run in the history started this long ago or later "
                 "(30d, 12h, 90m)");
  add_history_option(app, flags_.history,
                     fmt::format("History database for --since (default {})", kDefaultHistoryPath));
  app.add_option("--threshold", flags_.threshold_pct,
                 "Smallest drop, in percent, that counts as a regression (inclusive)")
      ->check(finite_range(0.0, 100.0))
      ->capture_default_str();
  app.add_flag("--all", flags_.all, "List every figure, unchanged and noise too");
  app.add_option("--node", flags_.nodes, "Compare this node's figures only; repeatable");
}

int CompareCommand::run(Invocation& /*invocation*/) {
  if (flags_.since && flags_.runs.size() != 1)
    throw UsageError("--since compares one RUN against the history: name one run");
  if (!flags_.since && flags_.runs.size() != 2)
    throw UsageError("name two runs (RUN_A RUN_B), or one run with --since");
  std::string since_cutoff;
  if (flags_.since) since_cutoff = utc_timestamp_seconds_ago(parse_since_seconds(*flags_.since));

  const RunSummary candidate = summarize_run(flags_.runs.back());
  std::vector<RunFigure> baseline;
  std::string baseline_name;
  if (flags_.since) {
    const std::string path = flags_.history.value_or(std::string(kDefaultHistoryPath));
    std::size_t runs_used = 0;
    baseline = history_baseline(path, since_cutoff, candidate, runs_used);
    baseline_name = fmt::format("{} run(s) of {} since {}", runs_used, path, since_cutoff);
  } else {
    const RunSummary a = summarize_run(flags_.runs.front());
    baseline = a.metrics;
    baseline_name = a.run_id;
  }
  const auto changes = compare_metrics(only_nodes(baseline, flags_.nodes),
                                       only_nodes(candidate.metrics, flags_.nodes),
                                       CompareOptions{flags_.threshold_pct});
  const bool any_pair =
      std::any_of(changes.begin(), changes.end(), [](const MetricChange& c) { return c.a && c.b; });
  if (!any_pair) {
    throw UsageError(fmt::format("{} and {} have no figure in common to compare",
                                 printable(baseline_name), printable(candidate.run_id)));
  }
  fmt::print("comparing {} (A) with {} (B), threshold {}%\n", printable(baseline_name),
             printable(candidate.run_id), flags_.threshold_pct);
  fmt::print("{}", render_changes(changes, flags_.all));
  const bool regressed = std::any_of(changes.begin(), changes.end(),
                                     [](const MetricChange& c) { return fails_gate(c.kind); });
  return regressed ? to_int(ExitCode::kFailed) : to_int(ExitCode::kOk);
}

}  // namespace commcert
