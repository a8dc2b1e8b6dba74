#pragma once

#include <stdexcept>
#include <string>

namespace commcert {

// Exit statuses of every subcommand. Scripts and Slurm glue depend on them: never renumber.
// docs/cli.md lists which subcommand uses which.
enum class ExitCode : int {
  kOk = 0,
  kFailed = 1,  // the run completed and found a fault (wrong data, quarantined node)
  kUsage = 2,   // unknown flag, bad value, malformed input file
  kError = 3,   // the run could not complete (MPI/CUDA/NCCL error, I/O error)
  // certify: no node quarantined, but some node lacks the evidence to be certified. Shares 3
  // with kError on purpose: to a scheduler both mean "not proven healthy, look again".
  kInconclusive = 3,
  kTimeout = 4,  // an operation did not complete within its timeout
};

[[nodiscard]] constexpr int to_int(ExitCode code) {
  return static_cast<int>(code);
}

// The word meta.json and suite.json give an exit status: ok, fail, usage, timeout or error.
[[nodiscard]] constexpr const char* status_word(int exit_code) {
  switch (exit_code) {
    case to_int(ExitCode::kOk):
      return "ok";
    case to_int(ExitCode::kFailed):
      return "fail";
    case to_int(ExitCode::kUsage):
      return "usage";
    case to_int(ExitCode::kTimeout):
      return "timeout";
    default:
      return "error";
  }
}

// Thrown for anything the user can fix: a flag, a value, an input file. Becomes exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when a backend or the system fails underneath us. Becomes exit 3 and an error record.
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A stage's error after the failing rank said it on stderr and wrote its error record (the stage
// skeleton's run()): the CLI edge only turns it into the exit status.
class ReportedFailure : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

// The exit status of a command that stopped on `error`: 2 for what the user can fix, 3 for a run
// that could not complete. The one mapping from errors to statuses, used by the CLI edge and by
// the stage skeleton when it must end every process of a job at once.
[[nodiscard]] inline int exit_code_for_error(const std::exception& error) {
  return dynamic_cast<const UsageError*>(&error) != nullptr ? to_int(ExitCode::kUsage)
                                                            : to_int(ExitCode::kError);
}

}  // namespace commcert
