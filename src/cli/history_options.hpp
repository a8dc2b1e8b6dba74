#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace commcert {

// Where `history` and `compare --since` keep runs when --history is not given.
inline constexpr std::string_view kDefaultHistoryPath = "results/history.db";

// `--history DB` (environment COMMCERT_HISTORY) on every command that reads or adds to the run
// history.
CLI::Option* add_history_option(CLI::App& app, std::optional<std::string>& path,
                                std::string_view help);

// After `run` or `certify`: adds the run directory to the history when one was asked for.
// Prints one line either way; a history that cannot be written is one error line and raises
// `status` to at least 3 (the verdict on disk is kept). Returns the exit status.
int add_run_to_history(const std::optional<std::string>& history,
                       const std::filesystem::path& run_directory, std::string_view prefix,
                       int status);

}  // namespace commcert
