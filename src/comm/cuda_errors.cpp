#include "comm/cuda_errors.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/node_identity.hpp"

namespace commcert {

void check_cuda(cudaError_t result, const char* call) {
  if (result == cudaSuccess) return;
  int device = -1;
  cudaGetDevice(&device);
  cudaGetLastError();  // clear a non-sticky error so later calls report their own
  throw RuntimeFailure(fmt::format("CUDA failure on {} device {}: {} returned {} ({})",
                                   local_hostname(), device, call, cudaGetErrorName(result),
                                   cudaGetErrorString(result)));
}

void check_nccl(ncclResult_t result, const char* call, ncclComm_t comm) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  const char* detail = ncclGetLastError(comm);
  throw RuntimeFailure(fmt::format("NCCL failure on {}: {} returned {} ({}){}", local_hostname(),
                                   call, static_cast<int>(result), ncclGetErrorString(result),
                                   detail && *detail ? fmt::format(": {}", detail) : ""));
}

}  // namespace commcert
