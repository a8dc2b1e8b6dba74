#include "cli/backend.hpp"

#include <fmt/format.h>

#include "bench/device_assignment.hpp"
#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "core/node_identity.hpp"

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

std::vector<int> nccl_devices(int visible_devices, int local_index, int local_count,
                              int gpus_per_process) {
  DeviceAssignment assignment =
      assign_devices_in_pci_order(visible_devices, local_index, local_count, gpus_per_process);
  if (!assignment.error.empty()) throw UsageError(assignment.error);
  if (assignment.devices.empty()) throw UsageError("no GPU is visible to this process");
  return std::move(assignment.devices);
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
    std::vector<int> devices;
    std::string misfit;
    try {
      devices = nccl_devices(gpu.device_count, group.local_index(), group.local_count(),
                             gpus_per_process);
    } catch (const UsageError& error) {
      misfit = fmt::format("{}: {}", local_hostname(), error.what());
    }
    // Every process reaches the same verdict before any enters NCCL init, where the others would
    // wait for a process that gave up.
    for (const auto& verdict : group.control().all_gather(misfit)) {
      if (!verdict.empty()) throw UsageError(fmt::format("--backend nccl: {}", verdict));
    }
    return std::make_unique<NcclCommunicator>(group.control(), devices);
  }
#endif
  (void)gpu;
  (void)group;
  (void)gpus_per_process;
  throw UsageError(fmt::format("backend '{}' is not available in this build", choice.name));
}

}  // namespace commcert
