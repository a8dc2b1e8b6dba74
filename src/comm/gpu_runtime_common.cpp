#include <fmt/format.h>

#include "comm/gpu_runtime.hpp"

namespace commcert {

std::string format_cuda_version(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

std::string format_nccl_version(int version) {
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch; older releases major*1000 + minor*100
  // + patch (NCCL_VERSION in nccl.h), and an old libnccl.so.2 may be the one loaded.
  if (version < 10000) {
    return fmt::format("{}.{}.{}", version / 1000, (version % 1000) / 100, version % 100);
  }
  return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
}

}  // namespace commcert
