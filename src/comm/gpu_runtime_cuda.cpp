#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include "comm/gpu_runtime.hpp"

namespace commcert {

GpuRuntimeInfo probe_gpu_runtime() {
  GpuRuntimeInfo info;
  int version = 0;
  if (cudaRuntimeGetVersion(&version) == cudaSuccess) info.runtime_version = version;
  if (cudaDriverGetVersion(&version) == cudaSuccess && version > 0) info.driver_version = version;
  if (ncclGetVersion(&version) == ncclSuccess) info.nccl_version = version;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // 34 (stub library), 35 (insufficient driver) and 100 (no device) all mean "no GPU here".
    info.unavailable_reason =
        fmt::format("no usable GPU: {} ({})", cudaGetErrorName(status), cudaGetErrorString(status));
    cudaGetLastError();
    return info;
  }
  info.device_count = count;
  if (count == 0) info.unavailable_reason = "no usable GPU: the driver reports 0 devices";
  return info;
}

}  // namespace commcert
