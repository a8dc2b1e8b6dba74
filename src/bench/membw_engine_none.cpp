#include "bench/membw_engine.hpp"
#include "core/errors.hpp"

namespace commcert {

MembwRun measure_device_memory(const MembwSettings& /*settings*/,
                               const std::vector<GpuDescription>& /*gpus*/,
                               const std::function<void(double)>& /*progress*/) {
  throw RuntimeFailure("this build has no CUDA support");
}

HostTransfer measure_host_transfer(const MembwSettings& /*settings*/,
                                   const GpuDescription& /*gpu*/) {
  throw RuntimeFailure("this build has no CUDA support");
}

}  // namespace commcert
