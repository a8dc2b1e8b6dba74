#include "bench/gpu_devices.hpp"
#include "core/errors.hpp"

namespace commcert {

std::vector<GpuDescription> describe_gpus(const std::vector<int>& devices) {
  if (devices.empty()) return {};
  throw RuntimeFailure("this build has no CUDA support");
}

}  // namespace commcert
