#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "cli/stage_deadline.hpp"
#include "comm/control_plane.hpp"
#include "comm/mpi_session.hpp"

namespace commcert {

// How long the end of a multi-process job (MPI_Finalize, after every record is written) may take
// before this process ends anyway: a process that froze after its last record would otherwise
// keep every other one, and mpirun, waiting in MPI_Finalize forever.
inline constexpr double kDefaultEndOfJobTimeoutS = 60;

// How long the start of a multi-process job may take on one process: MPI_Init, the control
// plane's communicators and agreeing on the run directory, the steps before any watchdog exists.
// A process that never starts (or stops before MPI_Init) would otherwise keep every other one
// waiting inside MPI_Init forever. Large jobs start slowly (a launcher wiring up thousands of
// processes), so the default is generous.
inline constexpr double kDefaultStartUpTimeoutS = 300;

// COMMCERT_END_TIMEOUT (a duration: "60", "90s", "2m"), or the default when unset. Throws
// UsageError naming the variable for anything but a finite duration in (0, 24h].
[[nodiscard]] double end_of_job_timeout_s(std::optional<std::string_view> text);

// COMMCERT_START_TIMEOUT, read like COMMCERT_END_TIMEOUT.
[[nodiscard]] double start_up_timeout_s(std::optional<std::string_view> text);

// The processes of this job: MPI when its plugin and libmpi load (a singleton MPI job without a
// launcher), otherwise this one process. Refuses to run alone when a launcher started several.
class ProcessGroup {
 public:
  explicit ProcessGroup(Invocation& invocation);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  [[nodiscard]] ControlPlane& control() { return *control_; }
  [[nodiscard]] int process_index() const { return process_index_; }
  [[nodiscard]] int process_count() const { return process_count_; }
  [[nodiscard]] int local_index() const { return local_index_; }
  [[nodiscard]] int local_count() const { return local_count_; }
  [[nodiscard]] bool has_mpi() const { return mpi_ != nullptr; }
  // Whether destroying this group ends a job of several processes (MPI_Finalize), which is then
  // bounded by the end-of-job timeout; false for a stage's group inside `commcert run`.
  [[nodiscard]] bool ends_job() const {
    return mpi_ != nullptr && mpi_->ends_mpi() && process_count_ > 1;
  }
  [[nodiscard]] std::optional<std::string> mpi_library() const;
  // The MPI session, or nullptr with the reason in mpi_unavailable_reason().
  [[nodiscard]] MpiSession* mpi() { return mpi_.get(); }
  [[nodiscard]] const std::string& mpi_unavailable_reason() const {
    return mpi_unavailable_reason_;
  }
  [[nodiscard]] const std::string& mpi_plugin_path() const { return mpi_plugin_path_; }
  [[nodiscard]] bool watchdog_can_reach_peers() const { return control_->has_side_channel(); }

  // Bounds a start-up step that talks to every process before a watchdog exists (e.g. agreeing
  // on the run directory): past the start-up timeout this process says which step and exits
  // with the timeout status. The step is done when the returned guard is destroyed.
  [[nodiscard]] std::unique_ptr<StageDeadline> guard_start_up(std::string_view step) const;

 private:
  std::unique_ptr<MpiSession> mpi_;
  std::string mpi_unavailable_reason_;
  std::string mpi_plugin_path_;
  std::unique_ptr<ControlPlane> control_;
  int process_index_ = 0;
  int process_count_ = 1;
  int local_index_ = 0;
  int local_count_ = 1;
  double end_timeout_s_ = kDefaultEndOfJobTimeoutS;
  double start_up_timeout_s_ = kDefaultStartUpTimeoutS;
  bool freeze_at_end_ = false;  // fault injection: COMMCERT_FAULT=freeze:<process>
};

}  // namespace commcert
