#include "cli/history_command.hpp"

#include <fmt/format.h>

#include "cli/history_options.hpp"
#include "core/errors.hpp"
#include "core/printable.hpp"
#include "history/history_db.hpp"
#include "history/history_text.hpp"
#include "history/run_summary.hpp"

namespace commcert {

void HistoryCommand::configure(CLI::App& app) {
  app.require_subcommand(1);
  add_history_option(app, flags_.history,
                     fmt::format("History database (default {})", kDefaultHistoryPath));
  add_ = app.add_subcommand("add", "Store runs (results directories) in the history");
  // --history may also follow the subcommand's arguments.
  add_->fallthrough();
  add_->add_option("runs", flags_.runs, "Run directories (results/<run-id>)")->required();
  show_ = app.add_subcommand("show", "Print a node's figures across the stored runs");
  show_->fallthrough();
  show_->add_option("node", flags_.node, "Node name")->required();
  show_->add_option("--last", flags_.last, "How many of the latest runs to show")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
}

int HistoryCommand::run(Invocation& /*invocation*/) {
  if (add_->parsed()) return add();
  return show();
}

int HistoryCommand::add() {
  // Every run is read before the database is touched: a bad path adds nothing.
  std::vector<RunSummary> runs;
  for (const auto& path : flags_.runs) {
    std::size_t unreadable = 0;
    runs.push_back(summarize_run(path, &unreadable));
    if (unreadable > 0) {
      fmt::print(
          stderr,
          "commcert history: warning: {}: {} line(s) could not be read as records (left out; "
          "certify names each)\n",
          printable(path), unreadable);
    }
  }
  const std::string path = flags_.history.value_or(std::string(kDefaultHistoryPath));
  HistoryDb db(path);
  for (const auto& run : runs) {
    const bool added = db.add(run);
    fmt::print("{} {} ({} figure(s), {} node verdict(s)) {}\n", added ? "added" : "already in",
               printable(run.run_id), run.metrics.size(), run.outcomes.size(),
               printable(run.path.string()));
  }
  return to_int(ExitCode::kOk);
}

int HistoryCommand::show() {
  const std::string path = flags_.history.value_or(std::string(kDefaultHistoryPath));
  if (!std::filesystem::exists(path))
    throw UsageError(
        fmt::format("history {} does not exist (add runs with `commcert history add`)", path));
  const HistoryDb db(path);
  fmt::print("{}", render_trend(flags_.node, db.node_history(flags_.node), flags_.last));
  return to_int(ExitCode::kOk);
}

}  // namespace commcert
