#include "comm/cuda_errors.hpp"

#include <fmt/format.h>

#include "core/node_identity.hpp"

namespace commcert {
namespace {

std::optional<int> current_device() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  return device;
}

}  // namespace

void check_cuda(cudaError_t result, const CallSite& site, std::string_view context) {
  if (result == cudaSuccess) return;
  ApiError error;
  error.api = "CUDA";
  error.call = site.expression;
  error.where = source_location(site);
  error.code = static_cast<long long>(result);
  error.code_name = cudaGetErrorName(result);
  error.text = cudaGetErrorString(result);
  error.context = context;
  error.host = local_hostname();
  error.device = current_device();
  cudaGetLastError();  // clear a non-sticky error so later calls report their own
  throw ApiFailure(std::move(error));
}

void check_nccl(ncclResult_t result, const CallSite& site, ncclComm_t comm) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  const char* detail = ncclGetLastError(comm);
  ApiError error;
  error.api = "NCCL";
  error.call = site.expression;
  error.where = source_location(site);
  error.code = static_cast<long long>(result);
  error.code_name = fmt::format("{}", static_cast<int>(result));
  error.text = ncclGetErrorString(result);
  if (detail && *detail) error.text += fmt::format(": {}", detail);
  error.host = local_hostname();
  error.device = current_device();
  throw ApiFailure(std::move(error));
}

}  // namespace commcert
