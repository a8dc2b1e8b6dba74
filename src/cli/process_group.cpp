#include "cli/process_group.hpp"

#include <fmt/format.h>

#include "comm/mpi_session_loader.hpp"
#include "core/errors.hpp"

namespace commcert {

ProcessGroup::ProcessGroup(Invocation& invocation) {
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
}

std::optional<std::string> ProcessGroup::mpi_library() const {
  if (!mpi_) return std::nullopt;
  return mpi_->library_version();
}

// The control plane's MPI communicators must be freed before MPI_Finalize.
ProcessGroup::~ProcessGroup() {
  control_.reset();
  mpi_.reset();
}

}  // namespace commcert
