#include "cli/process_group.hpp"

#if COMMCERT_HAVE_MPI
#include "comm/mpi_control_plane.hpp"
#include "comm/mpi_runtime.hpp"
#else
namespace commcert {
class MpiRuntime {};  // never created without MPI; complete so unique_ptr can destroy it
}  // namespace commcert
#endif

namespace commcert {

#if COMMCERT_HAVE_MPI
ProcessGroup::ProcessGroup(Invocation& invocation)
    : mpi_(std::make_unique<MpiRuntime>(invocation.argc, invocation.argv)),
      control_(std::make_unique<MpiControlPlane>(mpi_->thread_multiple())),
      process_index_(mpi_->world_rank()),
      process_count_(mpi_->world_size()),
      local_index_(mpi_->local_rank()),
      local_count_(mpi_->local_size()) {}

std::optional<std::string> ProcessGroup::mpi_library() const { return MpiRuntime::library_version(); }
#else
ProcessGroup::ProcessGroup(Invocation& /*invocation*/)
    : control_(std::make_unique<SingleProcessControlPlane>()) {}

std::optional<std::string> ProcessGroup::mpi_library() const { return std::nullopt; }
#endif

// The control plane's MPI communicators must be freed before MPI_Finalize.
ProcessGroup::~ProcessGroup() {
  control_.reset();
  mpi_.reset();
}

}  // namespace commcert
