#include "cli/report_options.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/printable.hpp"

namespace commcert {

void add_report_options(CLI::App& app, ReportFlags& flags, std::string_view default_format) {
  app.add_option("--format", flags.format,
                 fmt::format("Verdict format on stdout (default {}): {}", default_format,
                             verdict_format_help()))
      ->type_name("NAME");
  app.add_option("--report", flags.reports,
                 fmt::format("Also write the verdict as NAME to PATH (- = stdout, instead of "
                             "--format), written atomically; repeatable. NAME: {}",
                             verdict_format_names()))
      ->type_name("NAME=PATH")
      // One value per --report, so `--report json=v.json RESULTS` leaves RESULTS positional.
      ->allow_extra_args(false);
}

bool write_reports(const Report& report, const std::vector<VerdictOutput>& outputs,
                   std::string_view prefix) {
  return write_reports_listing_failures(report, outputs, prefix).empty();
}

std::vector<VerdictOutputFailure> write_reports_listing_failures(
    const Report& report, const std::vector<VerdictOutput>& outputs, std::string_view prefix) {
  std::fflush(stderr);
  auto failures = write_verdict_outputs(report, outputs, stdout);
  for (const auto& output : outputs) {
    if (!output.file) continue;
    const bool failed = std::any_of(failures.begin(), failures.end(), [&](const auto& failure) {
      return failure.file == *output.file;
    });
    if (!failed) {
      fmt::print(stderr, "{}: {} report written to {}\n", prefix, output.format->name,
                 printable(output.file->string()));
    }
  }
  for (const auto& failure : failures) {
    fmt::print(stderr, "{}: error: --report {}={}: {}\n", prefix, failure.format,
               printable(failure.file.string()), printable(failure.message));
  }
  return failures;
}

}  // namespace commcert
