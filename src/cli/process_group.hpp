#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cli/command.hpp"
#include "comm/control_plane.hpp"

namespace commcert {

class MpiRuntime;

// The processes of this job: MPI when the build has it (a singleton MPI job without a
// launcher), otherwise this one process.
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
  [[nodiscard]] std::optional<std::string> mpi_library() const;
  [[nodiscard]] bool watchdog_can_reach_peers() const { return control_->has_side_channel(); }

 private:
  std::unique_ptr<MpiRuntime> mpi_;
  std::unique_ptr<ControlPlane> control_;
  int process_index_ = 0;
  int process_count_ = 1;
  int local_index_ = 0;
  int local_count_ = 1;
};

}  // namespace commcert
