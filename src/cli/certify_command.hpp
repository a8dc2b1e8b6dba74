#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/report_options.hpp"

namespace commcert {

// `commcert certify <results>... --baseline FILE [--suite FILE] [--verdict FILE]
// [--format NAME] [--report NAME=PATH]... [--node NAME]... [--apply slurm [--dry-run]]
// [--allow-partial] [--history DB] [--topology FILE]`: judges records and decides per node; with
// --apply, drains quarantined nodes and resumes certified ones that commcert drained
// (docs/validator.md "Acting on the pool"). Exit status: 0 all certified, 1 some quarantined, 3
// some inconclusive (none quarantined) or the pool could not be acted on, 2 usage or input error
// (docs/validator.md "Exit status").
class CertifyCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "certify"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Judge records against a baseline: certified, quarantined or inconclusive per node";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;

 private:
  struct Flags {
    std::vector<std::string> inputs;
    std::string baseline;
    std::optional<std::string> suite;
    std::optional<std::string> verdict;
    ReportFlags report;  // --format, --report
    std::vector<std::string> nodes;
    std::optional<std::string> apply;  // "slurm"
    bool dry_run = false;
    bool allow_partial = false;           // judge runs that never finished, with a warning per node
    std::optional<std::string> history;   // add the judged run to this history database
    std::optional<std::string> topology;  // --topology FILE: names a suspect switch path's switch
  };
  Flags flags_;
};

}  // namespace commcert
