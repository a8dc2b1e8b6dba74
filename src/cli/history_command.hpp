#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace commcert {

// `commcert history add RUN...` stores runs in the history database; `commcert history show
// NODE` prints the node's trend (docs/history.md). Exit status: 0, 2 usage or unreadable input,
// 3 the database could not be written.
class HistoryCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "history"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Keep runs in a history database (add) and show a node's trend (show)";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;

 private:
  int add();
  int show();

  struct Flags {
    std::optional<std::string> history;
    std::vector<std::string> runs;
    std::string node;
    std::size_t last = 8;
  };
  Flags flags_;
  CLI::App* add_ = nullptr;
  CLI::App* show_ = nullptr;
};

}  // namespace commcert
