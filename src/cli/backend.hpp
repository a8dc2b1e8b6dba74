#pragma once

#include <memory>
#include <string>
#include <string_view>

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

// Throws RuntimeFailure when the backend cannot start here (e.g. nccl without a usable GPU).
[[nodiscard]] std::unique_ptr<Communicator> make_communicator(const BackendChoice& choice,
                                                              const GpuRuntimeInfo& gpu,
                                                              ProcessGroup& group,
                                                              int gpus_per_process);

}  // namespace commcert
