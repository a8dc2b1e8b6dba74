#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/process_group.hpp"
#include "comm/communicator.hpp"
#include "comm/gpu_runtime.hpp"

namespace commcert {

struct BackendChoice {
  std::string name;       // "mpi" or "nccl"
  std::string selection;  // "requested" or "auto"
  std::string reason;     // why auto picked it, for the user and meta.json
};

// `requested` is "auto", "mpi" or "nccl". Throws UsageError when this build lacks the backend.
[[nodiscard]] BackendChoice choose_backend(std::string_view requested, const GpuRuntimeInfo& gpu);

// The CUDA devices of this process's NCCL ranks (-g per process): assign_devices(), as burn and
// membw use it, so more ranks on a node than GPUs is a usage error naming the counts instead of
// wrapping around onto a GPU already taken ("Duplicate GPU detected" inside NCCL init). Throws
// UsageError.
[[nodiscard]] std::vector<int> nccl_devices(int visible_devices, int local_index, int local_count,
                                            int gpus_per_process);

// Throws RuntimeFailure when the backend cannot start here (e.g. nccl without a usable GPU), and
// UsageError on every process when some process's ranks do not fit its GPUs.
[[nodiscard]] std::unique_ptr<Communicator> make_communicator(const BackendChoice& choice,
                                                              const GpuRuntimeInfo& gpu,
                                                              ProcessGroup& group,
                                                              int gpus_per_process);

}  // namespace commcert
