#pragma once

#include <string_view>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/api_error.hpp"

namespace commcert {

// Throw ApiFailure naming the call as written, its file:line, the error's name and text, the
// host and the device. Called through the macros below, never with a hand-typed call name.
void check_cuda(cudaError_t result, const CallSite& site, std::string_view context = {});
void check_nccl(ncclResult_t result, const CallSite& site, ncclComm_t comm = nullptr);

}  // namespace commcert

// The optional second argument says what the call was for ("waiting for the copy kernel").
#define COMMCERT_CHECK_CUDA(expression, ...) \
  ::commcert::check_cuda((expression), COMMCERT_CALL_SITE(expression) __VA_OPT__(, ) __VA_ARGS__)
// The optional second argument is the communicator whose last error text NCCL keeps.
#define COMMCERT_CHECK_NCCL(expression, ...) \
  ::commcert::check_nccl((expression), COMMCERT_CALL_SITE(expression) __VA_OPT__(, ) __VA_ARGS__)
