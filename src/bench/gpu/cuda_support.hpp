#pragma once

// Waits that give up at a deadline, for the burn and membw engines (the owners of CUDA objects
// they use are in comm/cuda_handles.hpp). Host code (g++), linked with cudart.

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "comm/cuda_errors.hpp"
#include "comm/cuda_handles.hpp"
#include "core/clock.hpp"
#include "core/errors.hpp"

namespace commcert {

// A GPU did not finish work within its deadline: the record says `timeout`, not `error`.
class DeviceTimeout : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

// Polls the event until it completes; throws DeviceTimeout naming `what` past the deadline.
// Polling (rather than cudaEventSynchronize) is what lets a hung kernel become a record.
void wait_for(const CudaEvent& event, const Deadline& deadline, const std::string& what);

// Records an event on the stream and waits for it.
void drain(cudaStream_t stream, const Deadline& deadline, const std::string& what);

// Seconds between two completed events.
[[nodiscard]] double elapsed_seconds(const CudaEvent& start, const CudaEvent& stop);

}  // namespace commcert
