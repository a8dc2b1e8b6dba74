#include "comm/gpu_runtime.hpp"

namespace commcert {

GpuRuntimeInfo probe_gpu_runtime() {
  GpuRuntimeInfo info;
  info.unavailable_reason =
      "this build has no CUDA support (reconfigure with COMMCERT_WITH_CUDA=ON)";
  return info;
}

}  // namespace commcert
