#include "kernels/p2p_kernels.hpp"

namespace commcert {
namespace {

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void spin_kernel(SpinGate* gate, std::uint64_t timeout_ns) {
  volatile SpinGate* shared = gate;
  const std::uint64_t start = global_timer_ns();
  while (shared->release == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      shared->gave_up = 1;
      return;
    }
  }
}

__global__ void pointer_chase_kernel(std::uint64_t* cursor, std::uint64_t loads) {
  // Volatile loads: every one goes to memory (past L1), each waiting for the one before.
  auto at = reinterpret_cast<const volatile std::uint64_t*>(*cursor);
  for (std::uint64_t i = 0; i < loads; ++i)
    at = reinterpret_cast<const volatile std::uint64_t*>(*at);
  *cursor = reinterpret_cast<std::uint64_t>(at);
}

}  // namespace

void enqueue_spin(SpinGate* gate, std::uint64_t timeout_ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(gate, timeout_ns);
}

void enqueue_pointer_chase(std::uint64_t* cursor, std::uint64_t loads, cudaStream_t stream) {
  pointer_chase_kernel<<<1, 1, 0, stream>>>(cursor, loads);
}

}  // namespace commcert
