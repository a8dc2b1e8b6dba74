#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace commcert {

// Throw RuntimeFailure naming the call, the error's name and text, the host and the device.
void check_cuda(cudaError_t result, const char* call);
void check_nccl(ncclResult_t result, const char* call, ncclComm_t comm = nullptr);

}  // namespace commcert
