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

// Writes every output; a file that could not be written is one line on stderr under `prefix`.
// Returns false when one could not be written.
bool write_reports(const Report& report, const std::vector<VerdictOutput>& outputs,
                   std::string_view prefix);
// The same, returning the files that could not be written (empty when every one was).
[[nodiscard]] std::vector<VerdictOutputFailure> write_reports_listing_failures(
    const Report& report, const std::vector<VerdictOutput>& outputs, std::string_view prefix);

}  // namespace commcert
