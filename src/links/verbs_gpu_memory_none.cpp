#include "core/errors.hpp"
#include "links/verbs_gpu_memory.hpp"

namespace commcert {

std::unique_ptr<GpuAllocation> allocate_gpu_memory(int /*gpu*/, std::uint64_t /*bytes*/) {
  throw RuntimeFailure("--mem gpu: this build has no CUDA");
}

}  // namespace commcert
