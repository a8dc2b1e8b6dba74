#include "cli/history_options.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/printable.hpp"
#include "history/history_db.hpp"
#include "history/run_summary.hpp"

namespace commcert {

CLI::Option* add_history_option(CLI::App& app, std::optional<std::string>& path,
                                std::string_view help) {
  return app.add_option("--history", path, std::string(help))->envname("COMMCERT_HISTORY");
}

int add_run_to_history(const std::optional<std::string>& history,
                       const std::filesystem::path& run_directory, std::string_view prefix,
                       int status) {
  if (!history || history->empty()) return status;
  try {
    const RunSummary run = summarize_run(run_directory);
    HistoryDb db(*history);
    const bool added = db.add(run);
    fmt::print(stderr, "{}: run {} {} history {}\n", prefix, printable(run.run_id),
               added ? "added to" : "already in", *history);
    return status;
  } catch (const std::exception& error) {
    fmt::print(stderr, "{}: error: history {}: {} (the verdict is written)\n", prefix, *history,
               printable(error.what()));
    return std::max(status, to_int(ExitCode::kError));
  }
}

}  // namespace commcert
