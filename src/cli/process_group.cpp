#include "cli/process_group.hpp"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "comm/fault_injection.hpp"
#include "comm/mpi_session_loader.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {

constexpr double kLongestJobPhaseTimeoutS = 24 * 3600;

double job_phase_timeout_s(std::optional<std::string_view> text, std::string_view variable,
                           double default_s) {
  if (!text) return default_s;
  double seconds = 0;
  try {
    seconds = parse_duration_seconds(*text, variable);
  } catch (const UsageError&) {
    seconds = std::nan("");
  }
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > kLongestJobPhaseTimeoutS) {
    throw UsageError(
        fmt::format("{}: expected a duration above 0 and at most 24h (60, 90s, 2m), got '{}'",
                    variable, *text));
  }
  return seconds;
}

std::optional<std::string_view> environment_text(const char* variable) {
  const char* text = std::getenv(variable);
  return text ? std::optional<std::string_view>(text) : std::nullopt;
}

// Before MPI_Init this process knows its place only from the launcher's environment.
[[noreturn]] void end_start_up(std::string_view step, double seconds) {
  std::fprintf(stderr,
               "commcert: process %d: the job's start-up (%.*s) did not complete within %s "
               "(a process of the job that never started or stopped before joining?); exiting "
               "with status %d\n",
               launcher_rank_hint(), static_cast<int>(step.size()), step.data(),
               format_duration(seconds).c_str(), to_int(ExitCode::kTimeout));
  std::fflush(nullptr);
  ::_exit(to_int(ExitCode::kTimeout));
}

// From here on this process ends within `seconds`, whatever MPI_Finalize does. The thread is
// never joined: a process that finishes in time simply exits with it still asleep.
void arm_end_of_job_deadline(double seconds, int process_index) {
  std::thread([seconds, process_index] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    std::fprintf(stderr,
                 "commcert: process %d: the job's end (MPI_Finalize) did not complete within %s "
                 "(another process stopped after its last record?); exiting with status %d\n",
                 process_index, format_duration(seconds).c_str(), to_int(ExitCode::kTimeout));
    std::fflush(nullptr);
    ::_exit(to_int(ExitCode::kTimeout));
  }).detach();
}

}  // namespace

double end_of_job_timeout_s(std::optional<std::string_view> text) {
  return job_phase_timeout_s(text, "COMMCERT_END_TIMEOUT", kDefaultEndOfJobTimeoutS);
}

double start_up_timeout_s(std::optional<std::string_view> text) {
  return job_phase_timeout_s(text, "COMMCERT_START_TIMEOUT", kDefaultStartUpTimeoutS);
}

std::unique_ptr<StageDeadline> ProcessGroup::guard_start_up(std::string_view step) const {
  const double seconds = start_up_timeout_s_;
  return std::make_unique<StageDeadline>(
      seconds, [step = std::string(step), seconds] { end_start_up(step, seconds); });
}

ProcessGroup::ProcessGroup(Invocation& invocation) {
  end_timeout_s_ = end_of_job_timeout_s(environment_text("COMMCERT_END_TIMEOUT"));
  start_up_timeout_s_ = start_up_timeout_s(environment_text("COMMCERT_START_TIMEOUT"));
  auto start_up = guard_start_up("MPI_Init and the control plane's communicators");
  LoadedMpi loaded = load_mpi_session(invocation.argc, invocation.argv);
  if (!loaded.session) {
    const int launched = launcher_process_count(process_environment());
    if (launched > 1) {
      throw RuntimeFailure(fmt::format(
          "started as one of {} processes, but MPI is not available here ({}); each process "
          "would measure alone. Install the MPI library the launcher uses (libmpi.so.40) or "
          "point {} at a commcert MPI plugin",
          launched, loaded.unavailable_reason, kMpiPluginVariable));
    }
    mpi_unavailable_reason_ = std::move(loaded.unavailable_reason);
    control_ = std::make_unique<SingleProcessControlPlane>();
    return;
  }
  mpi_ = std::move(loaded.session);
  mpi_plugin_path_ = std::move(loaded.plugin_path);
  control_ = mpi_->make_control_plane();
  process_index_ = mpi_->world_rank();
  process_count_ = mpi_->world_size();
  local_index_ = mpi_->local_rank();
  local_count_ = mpi_->local_size();
  try {
    freeze_at_end_ = fault_plan_from_environment().freezes_at_end(process_index_);
  } catch (const UsageError&) {
    // A malformed plan is reported by the stage that reads it for its own faults.
  }
}

std::optional<std::string> ProcessGroup::mpi_library() const {
  if (!mpi_) return std::nullopt;
  return mpi_->library_version();
}

// The control plane's MPI communicators must be freed before MPI_Finalize. Only the group whose
// session ends MPI bounds the job's end: a stage's group inside `commcert run` shares the run's
// session, and a deadline armed when it closed would end the process mid-run once the remaining
// stages took longer than the end-of-job timeout (a slow fabric did, a minute into the run).
ProcessGroup::~ProcessGroup() {
  if (ends_job()) {
    arm_end_of_job_deadline(end_timeout_s_, process_index_);
    if (freeze_at_end_) std::raise(SIGSTOP);
  }
  control_.reset();
  mpi_.reset();
}

}  // namespace commcert
