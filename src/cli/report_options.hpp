#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "report/verdict_outputs.hpp"

namespace commcert {

// `--format NAME` (stdout) and repeatable `--report NAME=PATH`, for every command that reports
// a verdict (certify, run). Names, choices and help come from the table of verdict formats.
struct ReportFlags {
  std::optional<std::string> format;
  std::vector<std::string> reports;
};

void add_report_options(CLI::App& app, ReportFlags& flags, std::string_view default_format);

// The results a command judges (certify, report): one or more positional paths, required.
void add_results_argument(CLI::App& app, std::vector<std::string>& inputs);

// What a command judges against, read the same way by every command that judges: --baseline
// (else COMMCERT_BASELINE) and --suite (else COMMCERT_SUITE). `help` says what the command does
// with it; its `{}` becomes the names of the built-in baselines or suites.
CLI::Option* add_baseline_option(CLI::App& app, std::string& baseline, std::string_view help);
CLI::Option* add_baseline_option(CLI::App& app, std::optional<std::string>& baseline,
                                 std::string_view help);
CLI::Option* add_suite_option(CLI::App& app, std::optional<std::string>& suite,
                              std::string_view help);

// Writes every output; a file that could not be written is one line on stderr under `prefix`.
// Returns false when one could not be written.
bool write_reports(const Report& report, const std::vector<VerdictOutput>& outputs,
                   std::string_view prefix);
// The same, returning the files that could not be written (empty when every one was).
[[nodiscard]] std::vector<VerdictOutputFailure> write_reports_listing_failures(
    const Report& report, const std::vector<VerdictOutput>& outputs, std::string_view prefix);

}  // namespace commcert
