#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/report_options.hpp"

namespace commcert {

// `commcert report RUN... [--baseline REF] [--suite REF] [--format NAME] [--report NAME=PATH]...
// [--allow-partial]`: renders runs as reports (HTML, Markdown, JUnit, Prometheus, and every other
// verdict format) without acting on anything: the records are judged again by the validator,
// against the baseline and suite the run used (its suite.json) unless told otherwise, and no
// verdict.json is written. Exit status: 0 reports written, 2 usage or input error, 3 a report
// file could not be written (docs/reports.md).
class ReportCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "report"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Render runs as reports: html, md, junit, prom and the other verdict formats";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;

 private:
  struct Flags {
    std::vector<std::string> inputs;
    std::optional<std::string> baseline;
    std::optional<std::string> suite;
    ReportFlags report;
    bool allow_partial = false;
    std::optional<std::string> history;
  };
  Flags flags_;
};

}  // namespace commcert
