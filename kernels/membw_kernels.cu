#include <stdexcept>

#include "kernels/grid_stride.hpp"
#include "kernels/membw_kernels.hpp"

namespace commcert {
namespace {

// Four 16-byte accesses in flight per thread; with full occupancy that is enough outstanding
// traffic to saturate HBM on A100 through B200.
constexpr unsigned kUnroll = 4;

__global__ void __launch_bounds__(256)
    read_kernel(const ulonglong2* src, std::uint64_t n, unsigned long long* sink) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t rounds = strided_rounds(n, threads, kUnroll);
  unsigned long long folded = 0;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    ulonglong2 v[kUnroll];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const std::uint64_t i = strided_index(thread, threads, round, kUnroll, u);
      v[u] = i < n ? __ldcs(src + i) : make_ulonglong2(0, 0);
    }
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u)
      folded ^= v[u].x ^ v[u].y;
  }
  // One atomic per warp: one per thread, all on one address, held an H200's read at 2.5 TB/s
  // (4.3 TB/s with this; docs/gpu-results.md).
  for (unsigned lanes = 16; lanes > 0; lanes /= 2)
    folded ^= __shfl_xor_sync(0xffffffffu, folded, lanes);
  if ((threadIdx.x & 31U) == 0) atomicXor(sink, folded);
}

__global__ void __launch_bounds__(256)
    write_kernel(ulonglong2* dst, std::uint64_t n, std::uint64_t value) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t rounds = strided_rounds(n, threads, kUnroll);
  const ulonglong2 v = make_ulonglong2(value, value);
  for (std::uint64_t round = 0; round < rounds; ++round) {
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const std::uint64_t i = strided_index(thread, threads, round, kUnroll, u);
      if (i < n) __stcs(dst + i, v);
    }
  }
}

// The copy keeps more in flight per thread with fewer threads than the read and write kernels
// (on an H200 those kernels' shape copied at 0.90 of cudaMemcpy); full rounds skip the bounds
// checks.
template <unsigned Unroll, CopyLayout Layout>
__device__ __forceinline__ std::uint64_t copy_index(std::uint64_t thread, std::uint64_t threads,
                                                    std::uint64_t round, unsigned u) {
  if constexpr (Layout == CopyLayout::kWarpContiguous) {
    return warp_contiguous_index(thread, threads, round, Unroll, u);
  } else {
    return strided_index(thread, threads, round, Unroll, u);
  }
}

template <unsigned Unroll, CopyLayout Layout>
__global__ void __launch_bounds__(256)
    copy_kernel(ulonglong2* dst, const ulonglong2* src, std::uint64_t n) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t rounds = strided_rounds(n, threads, Unroll);
  const std::uint64_t full_rounds = n / (threads * Unroll);
  for (std::uint64_t round = 0; round < rounds; ++round) {
    ulonglong2 v[Unroll];
    const bool full = round < full_rounds;
#pragma unroll
    for (unsigned u = 0; u < Unroll; ++u) {
      const std::uint64_t i = copy_index<Unroll, Layout>(thread, threads, round, u);
      if (full || i < n) v[u] = __ldcs(src + i);
    }
#pragma unroll
    for (unsigned u = 0; u < Unroll; ++u) {
      const std::uint64_t i = copy_index<Unroll, Layout>(thread, threads, round, u);
      if (full || i < n) __stcs(dst + i, v[u]);
    }
  }
}

__global__ void __launch_bounds__(256)
    pattern_fill_kernel(unsigned long long* base, std::uint64_t words, MemoryPattern pattern,
                        std::uint64_t seed) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t rounds = strided_rounds(words, threads, kUnroll);
  for (std::uint64_t round = 0; round < rounds; ++round) {
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const std::uint64_t i = strided_index(thread, threads, round, kUnroll, u);
      if (i < words) base[i] = memory_pattern_word(pattern, seed, i);
    }
  }
}

__device__ void log_memory_error(MemoryErrorLog* log, std::uint64_t word, std::uint64_t expected,
                                 std::uint64_t actual, MemoryPattern pattern) {
  const unsigned long long slot = atomicAdd(&log->count, 1ULL);
  if (slot < kMemoryErrorSlots) {
    log->first[slot] = {word * 8, expected, actual, static_cast<std::uint32_t>(pattern), 0};
  }
}

__global__ void __launch_bounds__(256)
    pattern_verify_kernel(const unsigned long long* base, std::uint64_t words,
                          MemoryPattern pattern, std::uint64_t seed, MemoryErrorLog* log) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t rounds = strided_rounds(words, threads, kUnroll);
  for (std::uint64_t round = 0; round < rounds; ++round) {
    std::uint64_t v[kUnroll];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const std::uint64_t i = strided_index(thread, threads, round, kUnroll, u);
      v[u] = i < words ? __ldcs(base + i) : 0;
    }
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const std::uint64_t i = strided_index(thread, threads, round, kUnroll, u);
      if (i >= words) continue;
      const std::uint64_t expected = memory_pattern_word(pattern, seed, i);
      if (v[u] != expected) log_memory_error(log, i, expected, v[u], pattern);
    }
  }
}

template <unsigned Unroll>
void launch_copy(CopyLayout layout, const LaunchShape& s, cudaStream_t stream, ulonglong2* to,
                 const ulonglong2* from, std::uint64_t n) {
  if (layout == CopyLayout::kWarpContiguous) {
    copy_kernel<Unroll, CopyLayout::kWarpContiguous>
        <<<s.blocks, s.threads_per_block, 0, stream>>>(to, from, n);
  } else {
    copy_kernel<Unroll, CopyLayout::kThreadStrided>
        <<<s.blocks, s.threads_per_block, 0, stream>>>(to, from, n);
  }
}

LaunchShape shape_for(int sm_count, std::uint64_t elements) {
  return saturating_launch_shape(sm_count, elements, kUnroll);
}

}  // namespace

void enqueue_read(const void* src, std::uint64_t bytes, unsigned long long* sink, int sm_count,
                  cudaStream_t stream) {
  const std::uint64_t n = bytes / kBandwidthVectorBytes;
  const LaunchShape s = shape_for(sm_count, n);
  read_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(static_cast<const ulonglong2*>(src), n,
                                                            sink);
}

void enqueue_write(void* dst, std::uint64_t bytes, std::uint64_t value, int sm_count,
                   cudaStream_t stream) {
  const std::uint64_t n = bytes / kBandwidthVectorBytes;
  const LaunchShape s = shape_for(sm_count, n);
  write_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(static_cast<ulonglong2*>(dst), n,
                                                             value);
}

void enqueue_copy(void* dst, const void* src, std::uint64_t bytes, int sm_count,
                  cudaStream_t stream, CopyShape shape) {
  const std::uint64_t n = bytes / kBandwidthVectorBytes;
  const LaunchShape s =
      saturating_launch_shape(sm_count, n, shape.accesses_per_thread, 256, shape.blocks_per_sm);
  auto* to = static_cast<ulonglong2*>(dst);
  const auto* from = static_cast<const ulonglong2*>(src);
  switch (shape.accesses_per_thread) {
    case 8:
      launch_copy<8>(shape.layout, s, stream, to, from, n);
      return;
    case 16:
      launch_copy<16>(shape.layout, s, stream, to, from, n);
      return;
    default:
      throw std::invalid_argument("enqueue_copy: accesses_per_thread must be 8 or 16");
  }
}

void enqueue_pattern_fill(void* base, std::uint64_t words, MemoryPattern pattern,
                          std::uint64_t seed, int sm_count, cudaStream_t stream) {
  const LaunchShape s = shape_for(sm_count, words);
  pattern_fill_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(
      static_cast<unsigned long long*>(base), words, pattern, seed);
}

void enqueue_pattern_verify(const void* base, std::uint64_t words, MemoryPattern pattern,
                            std::uint64_t seed, MemoryErrorLog* log, int sm_count,
                            cudaStream_t stream) {
  const LaunchShape s = shape_for(sm_count, words);
  pattern_verify_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(
      static_cast<const unsigned long long*>(base), words, pattern, seed, log);
}

}  // namespace commcert
