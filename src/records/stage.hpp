#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/api_error.hpp"
#include "core/json.hpp"
#include "core/rank_identity.hpp"
#include "core/record.hpp"

namespace commcert {

// The records every stage writes whatever it measures (docs/records.md): the run record, and the
// error and timeout records that stand where a measurement would. Filled by the stage skeleton
// (cli/stage_session.cpp) and the sweep (cli/sweep_command.cpp); the validator reads the run
// record's rank map (validate/detail/run_parser.cpp) and the others through their kind's parser.

// kind "run": who the ranks of this run were, written once by process 0.
struct RunRecord {
  static constexpr const char* kKind = "run";
  static constexpr const char* kCommand = "command";
  static constexpr const char* kBackend = "backend";
  static constexpr const char* kRanks = "ranks";
  static constexpr const char* kBackendNone = "none";  // a stage without a data plane
  RecordOrigin origin;
  std::string command;  // the subcommand: sweep, burn, membw, health
  std::string backend;  // mpi, nccl or none
  std::vector<RankIdentity> ranks;
};

// A rank of a stage that stopped on an error: the stage's own kind with status error.
struct StageErrorRecord {
  static constexpr const char* kBackend = "backend";
  static constexpr const char* kComponent = "component";
  static constexpr const char* kApiError = "api_error";
  RecordOrigin origin;
  std::string kind;                    // the stage's record kind, e.g. "collective"
  std::optional<std::string> backend;  // the sweep's data plane
  std::string reason;
  std::optional<std::string> component;  // health: the component it stands for ("node")
  std::optional<ApiError> api_error;     // when a library call failed: which, where, with what code
};

// A stage's operation that did not complete within its timeout, as the stage skeleton's
// watchdog reports it (the sweep's collective timeout is CollectiveTimeoutRecord).
struct StageTimeoutRecord {
  static constexpr const char* kComponent = "component";
  static constexpr const char* kNodes = "nodes";
  static constexpr const char* kOperation = "operation";
  static constexpr const char* kTimeoutS = "timeout_s";
  RecordOrigin origin;
  std::string kind;  // the stage's record kind, e.g. "health"
  std::string reason;
  std::optional<std::string> component;  // health: the component it stands for ("node")
  // link: the ends of the link that did not complete (two nodes), or the one node that did not
  // arrive outside any link; empty: the record names nobody but its writer.
  std::vector<std::string> nodes;
  std::string operation;
  double timeout_s = 0;
};

[[nodiscard]] Json to_json(const RunRecord& record);
[[nodiscard]] Json to_json(const StageErrorRecord& record);
[[nodiscard]] Json to_json(const StageTimeoutRecord& record);

// The error record for `error` thrown on this rank: its message, and its fields when a library
// call failed (ApiFailure).
[[nodiscard]] StageErrorRecord stage_error_record(RecordOrigin origin, std::string kind,
                                                  const std::exception& error);

}  // namespace commcert
