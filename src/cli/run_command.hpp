#pragma once

#include <optional>
#include <string>

#include "cli/command.hpp"
#include "cli/report_options.hpp"
#include "cli/run_setup.hpp"

namespace commcert {

// `commcert run SUITE`: the suite's stages in order inside one MPI job, every record in one
// results/<run-id>/, then the verdict from process 0 (docs/suites.md).
class RunCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "run"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Run a suite's stages in one job, then certify every node";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;

 private:
  struct Flags {
    std::string suite;
    std::optional<std::string> baseline;
    bool plan_only = false;
    ReportFlags report;                   // --format, --report: the verdict's outputs
    std::optional<std::string> history;   // --history: add the run to this database
    std::optional<std::string> topology;  // --topology FILE: names a suspect switch path's switch
  };
  Flags flags_;
  StageOptions stage_;
};

}  // namespace commcert
