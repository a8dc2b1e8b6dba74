#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/json.hpp"

namespace commcert {

// A process's error that ends a stage of several processes, as the run's files record it:
// meta.json's `error` and, under `commcert run`, suite.json's (docs/records.md, docs/suites.md).
// Process 0 owns those files; a failing peer tells it (ControlPlane::post_failure) in the wire
// form below before the job ends.
struct StageFailure {
  static constexpr const char* kError = "error";
  static constexpr const char* kCommand = "command";
  static constexpr const char* kProcess = "process";
  static constexpr const char* kRank = "rank";
  static constexpr const char* kNode = "node";
  static constexpr const char* kReason = "reason";
  std::string command;  // the stage: sweep, health, links, ...
  int process = 0;      // the process that failed
  int rank = 0;         // the job rank the error belongs to
  std::string node;
  std::string reason;
  int exit_code = 3;
};

// The `error` object: {command, process, rank, node, reason}.
[[nodiscard]] Json to_json(const StageFailure& failure);

// The text a failing process sends to process 0, and back; nullopt for a text that is not one.
[[nodiscard]] std::string failure_wire_text(const StageFailure& failure);
[[nodiscard]] std::optional<StageFailure> failure_from_wire_text(std::string_view text);

// The meta.json fields of a stage ended by `failure`: status error, exit_code, end_time, error.
[[nodiscard]] Json failed_meta_fields(const StageFailure& failure);

// Marks the run's files in `directory` as they are on disk as ended by `failure`: meta.json (with
// `meta_too`) and suite.json (when `commcert run` wrote one: the stage under way, the one still
// `running`, and the run itself get status error, the exit code and `error`). Each file is
// changed only while it says `running`; one that is absent, unreadable or already says how the
// run ended is left as it is. For a process that holds neither file in memory; never throws
// (the caller is failing already).
void mark_run_failed_on_disk(const std::filesystem::path& directory, const StageFailure& failure,
                             bool meta_too);

}  // namespace commcert
