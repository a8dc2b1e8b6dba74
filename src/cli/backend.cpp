#include "cli/backend.hpp"

#include <fmt/format.h>

#include "core/build_info.hpp"
#include "core/errors.hpp"

#if COMMCERT_HAVE_CUDA
#include "comm/nccl_communicator.hpp"
#endif
#include "runtime/runtime_library.hpp"

namespace commcert {

BackendChoice choose_backend(std::string_view requested, const GpuRuntimeInfo& gpu) {
  if (requested == "mpi") {
    if (!build_info::kWithMpi) {
      throw UsageError(
          "--backend mpi: this build has no MPI (reconfigure with COMMCERT_WITH_MPI=ON)");
    }
    return {"mpi", "requested", "requested with --backend mpi"};
  }
  if (requested == "nccl") {
    if (!build_info::kWithCuda) {
      throw UsageError(
          "--backend nccl: this build has no CUDA/NCCL (reconfigure with COMMCERT_WITH_CUDA=ON)");
    }
    return {"nccl", "requested", "requested with --backend nccl"};
  }
  if (gpu.device_count > 0) {
    return {"nccl", "auto", fmt::format("{} GPU(s) visible", gpu.device_count)};
  }
  if (build_info::kWithMpi) return {"mpi", "auto", gpu.unavailable_reason};
  throw UsageError(
      fmt::format("no backend can run here: {} and this build has no MPI", gpu.unavailable_reason));
}

std::unique_ptr<Communicator> make_communicator(const BackendChoice& choice,
                                                const GpuRuntimeInfo& gpu, ProcessGroup& group,
                                                int gpus_per_process) {
  if (choice.name == "mpi") {
    if (gpus_per_process != 1) throw UsageError("-g/--ngpus applies to the nccl backend only");
    if (!group.mpi()) {
      throw RuntimeFailure(
          fmt::format("the mpi backend cannot start: {}", group.mpi_unavailable_reason()));
    }
    return group.mpi()->make_communicator(group.local_count());
  }
#if COMMCERT_HAVE_CUDA
  if (choice.name == "nccl") {
    if (gpu.device_count == 0)
      throw RuntimeFailure(fmt::format("--backend nccl: {}", gpu.unavailable_reason));
    if (!nccl_runtime().loaded())
      throw RuntimeFailure(fmt::format("--backend nccl: {}", nccl_runtime().error));
    return std::make_unique<NcclCommunicator>(group.control(), group.local_index(),
                                              gpus_per_process);
  }
#endif
  (void)gpu;
  (void)group;
  (void)gpus_per_process;
  throw UsageError(fmt::format("backend '{}' is not available in this build", choice.name));
}

}  // namespace commcert
