#pragma once

// Bandwidth and memory-integrity kernels. Each function enqueues one kernel on `stream` and
// returns without waiting. Buffers are device memory; byte counts are multiples of 16 (the
// kernels move 16-byte vectors) and word counts count 8-byte words.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/memory_patterns.hpp"

namespace commcert {

inline constexpr std::uint64_t kBandwidthVectorBytes = 16;

// Reads every byte of `src`; XORs every 64-bit word into *sink (device), so the loads cannot be
// optimised away and a test can check what was read.
void enqueue_read(const void* src, std::uint64_t bytes, unsigned long long* sink, int sm_count,
                  cudaStream_t stream);
// Writes `value` to every 64-bit word of `dst`.
void enqueue_write(void* dst, std::uint64_t bytes, std::uint64_t value, int sm_count,
                   cudaStream_t stream);
// How the copy kernel spreads its work. No one shape is fastest everywhere: on an H200 the
// thread-strided shape with 8 accesses and one block per SM led, on an H100 the warp-contiguous
// ones (docs/gpu-results.md), so membw times each and keeps the best.
enum class CopyLayout { kThreadStrided, kWarpContiguous };
struct CopyShape {
  CopyLayout layout = CopyLayout::kThreadStrided;
  unsigned accesses_per_thread = 8;  // 16-byte vectors in flight per thread
  unsigned blocks_per_sm = 1;        // of 256 threads
};
inline constexpr CopyShape kCopyShapes[] = {
    {CopyLayout::kThreadStrided, 8, 1},
    {CopyLayout::kWarpContiguous, 16, 1},
    {CopyLayout::kWarpContiguous, 8, 2},
};

// dst = src.
void enqueue_copy(void* dst, const void* src, std::uint64_t bytes, int sm_count,
                  cudaStream_t stream, CopyShape shape = kCopyShapes[0]);

// Writes memory_pattern_word(pattern, seed, i) into word i of `words` words at `base`.
void enqueue_pattern_fill(void* base, std::uint64_t words, MemoryPattern pattern,
                          std::uint64_t seed, int sm_count, cudaStream_t stream);
// Counts words that differ from the pattern into log->count and keeps the first few.
void enqueue_pattern_verify(const void* base, std::uint64_t words, MemoryPattern pattern,
                            std::uint64_t seed, MemoryErrorLog* log, int sm_count,
                            cudaStream_t stream);

}  // namespace commcert
