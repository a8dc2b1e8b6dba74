#include "cli/report_options.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/printable.hpp"
#include "validate/suite_baseline_lookup.hpp"

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

void add_results_argument(CLI::App& app, std::vector<std::string>& inputs) {
  app.add_option("results", inputs,
                 "Results directories (results/<run-id>), results roots or records.jsonl files")
      ->required();
}

namespace {

template <typename Target>
CLI::Option* add_baseline_option_to(CLI::App& app, Target& baseline, std::string_view help) {
  return app
      .add_option("--baseline", baseline,
                  fmt::format(fmt::runtime(help), embedded_baseline_names()))
      ->envname("COMMCERT_BASELINE");
}

}  // namespace

CLI::Option* add_baseline_option(CLI::App& app, std::string& baseline, std::string_view help) {
  return add_baseline_option_to(app, baseline, help);
}

CLI::Option* add_baseline_option(CLI::App& app, std::optional<std::string>& baseline,
                                 std::string_view help) {
  return add_baseline_option_to(app, baseline, help);
}

CLI::Option* add_suite_option(CLI::App& app, std::optional<std::string>& suite,
                              std::string_view help) {
  return app.add_option("--suite", suite, fmt::format(fmt::runtime(help), embedded_suite_names()))
      ->envname("COMMCERT_SUITE");
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
