#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace commcert {

// `commcert compare RUN_A RUN_B` or `commcert compare RUN --since 30d`: per node, collective and
// size, how each figure moved and whether significantly (docs/history.md). Exit status: 0 no
// regression, 1 a regression at or beyond --threshold, 2 usage or unreadable input, or nothing
// in common to compare.
class CompareCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "compare"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Compare two runs (or a run against the history) and flag significant regressions";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;

 private:
  struct Flags {
    std::vector<std::string> runs;
    std::optional<std::string> since;
    std::optional<std::string> history;
    double threshold_pct = 5.0;
    bool all = false;
    std::vector<std::string> nodes;
  };
  Flags flags_;
};

// "30d", "12h", "90m", "45s" -> seconds; throws UsageError naming --since.
[[nodiscard]] double parse_since_seconds(const std::string& text);

}  // namespace commcert
