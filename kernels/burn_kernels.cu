#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/burn_kernels.hpp"
#include "kernels/grid_stride.hpp"

namespace commcert {
namespace {

constexpr unsigned kUnroll = 4;

template <typename T>
__device__ T to_element(float value);
template <>
__device__ __nv_bfloat16 to_element<__nv_bfloat16>(float value) {
  return __float2bfloat16_rn(value);
}
template <>
__device__ __half to_element<__half>(float value) {
  return __float2half_rn(value);
}
template <>
__device__ float to_element<float>(float value) {
  return value;
}
template <>
__device__ __nv_fp8_e4m3 to_element<__nv_fp8_e4m3>(float value) {
  return __nv_fp8_e4m3(value);
}

template <typename T>
__global__ void __launch_bounds__(256)
    fill_kernel(T* data, std::uint64_t count, std::uint64_t seed, unsigned matrix) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += threads) {
    data[i] = to_element<T>(burn_input_value(seed, matrix, i));
  }
}

__global__ void __launch_bounds__(256)
    fill_f64_kernel(double* data, std::uint64_t count, std::uint64_t seed, unsigned matrix) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += threads) {
    data[i] = burn_input_value_f64(seed, matrix, i);
  }
}

template <typename U>
__global__ void __launch_bounds__(256)
    count_differences_kernel(const U* a, const U* b, std::uint64_t count,
                             unsigned long long* differences) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t rounds = strided_rounds(count, threads, kUnroll);
  unsigned long long local = 0;
  for (std::uint64_t round = 0; round < rounds; ++round) {
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const std::uint64_t i = strided_index(thread, threads, round, kUnroll, u);
      if (i < count && a[i] != b[i]) ++local;
    }
  }
  if (local != 0) atomicAdd(differences, local);
}

template <typename U>
__global__ void __launch_bounds__(256)
    fingerprint_kernel(const U* data, std::uint64_t count, unsigned long long* fingerprint) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t rounds = strided_rounds(count, threads, kUnroll);
  unsigned long long local = 0;  // wraps modulo 2^64, as the host sum does
  for (std::uint64_t round = 0; round < rounds; ++round) {
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const std::uint64_t i = strided_index(thread, threads, round, kUnroll, u);
      if (i < count) local += fingerprint_share(i, static_cast<std::uint64_t>(data[i]));
    }
  }
  atomicAdd(fingerprint, local);
}

__global__ void __launch_bounds__(256)
    power_fma_kernel(float* out, unsigned steps, std::uint64_t seed, PowerFmaShears shears) {
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float x[kPowerFmaPairs];
  float y[kPowerFmaPairs];
#pragma unroll
  for (int p = 0; p < kPowerFmaPairs; ++p)
    power_fma_start(seed, thread, p, x[p], y[p]);
  for (unsigned step = 0; step < steps; ++step) {
#pragma unroll
    for (int p = 0; p < kPowerFmaPairs; ++p)
      power_fma_step(x[p], y[p], shears.pair[p]);
  }
#pragma unroll
  for (int p = 0; p < kPowerFmaPairs; ++p) {
    out[thread * 2 * kPowerFmaPairs + 2 * p] = x[p];
    out[thread * 2 * kPowerFmaPairs + 2 * p + 1] = y[p];
  }
}

LaunchShape shape_for(int sm_count, std::uint64_t elements) {
  return saturating_launch_shape(sm_count, elements, kUnroll);
}

template <typename U>
void launch_count_differences(const void* a, const void* b, std::uint64_t count,
                              unsigned long long* differences, int sm_count, cudaStream_t stream) {
  const LaunchShape s = shape_for(sm_count, count);
  count_differences_kernel<U><<<s.blocks, s.threads_per_block, 0, stream>>>(
      static_cast<const U*>(a), static_cast<const U*>(b), count, differences);
}

template <typename U>
void launch_fingerprint(const void* data, std::uint64_t count, unsigned long long* fingerprint,
                        int sm_count, cudaStream_t stream) {
  const LaunchShape s = shape_for(sm_count, count);
  fingerprint_kernel<U><<<s.blocks, s.threads_per_block, 0, stream>>>(static_cast<const U*>(data),
                                                                      count, fingerprint);
}

}  // namespace

void enqueue_fill_burn_input(void* data, std::uint64_t count, BurnElement type, std::uint64_t seed,
                             unsigned matrix, int sm_count, cudaStream_t stream) {
  const LaunchShape s = shape_for(sm_count, count);
  switch (type) {
    case BurnElement::kBf16:
      fill_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(static_cast<__nv_bfloat16*>(data),
                                                                count, seed, matrix);
      break;
    case BurnElement::kFp16:
      fill_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(static_cast<__half*>(data), count,
                                                                seed, matrix);
      break;
    case BurnElement::kFp32:
      fill_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(static_cast<float*>(data), count,
                                                                seed, matrix);
      break;
    case BurnElement::kFp8E4M3:
      fill_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data),
                                                                count, seed, matrix);
      break;
    case BurnElement::kFp64:
      fill_f64_kernel<<<s.blocks, s.threads_per_block, 0, stream>>>(static_cast<double*>(data),
                                                                    count, seed, matrix);
      break;
  }
}

void enqueue_count_differences(const void* a, const void* b, std::uint64_t count,
                               unsigned element_bytes, unsigned long long* differences,
                               int sm_count, cudaStream_t stream) {
  switch (element_bytes) {
    case 1:
      launch_count_differences<std::uint8_t>(a, b, count, differences, sm_count, stream);
      break;
    case 2:
      launch_count_differences<std::uint16_t>(a, b, count, differences, sm_count, stream);
      break;
    case 4:
      launch_count_differences<std::uint32_t>(a, b, count, differences, sm_count, stream);
      break;
    default:
      launch_count_differences<unsigned long long>(a, b, count, differences, sm_count, stream);
  }
}

void enqueue_fingerprint(const void* data, std::uint64_t count, unsigned element_bytes,
                         unsigned long long* fingerprint, int sm_count, cudaStream_t stream) {
  switch (element_bytes) {
    case 1:
      launch_fingerprint<std::uint8_t>(data, count, fingerprint, sm_count, stream);
      break;
    case 2:
      launch_fingerprint<std::uint16_t>(data, count, fingerprint, sm_count, stream);
      break;
    case 4:
      launch_fingerprint<std::uint32_t>(data, count, fingerprint, sm_count, stream);
      break;
    default:
      launch_fingerprint<unsigned long long>(data, count, fingerprint, sm_count, stream);
  }
}

void enqueue_power_fma(float* out, const PowerFmaLaunch& launch, std::uint64_t seed,
                       const PowerFmaShears& shears, cudaStream_t stream) {
  power_fma_kernel<<<launch.blocks, launch.threads_per_block, 0, stream>>>(out, launch.steps, seed,
                                                                           shears);
}

}  // namespace commcert
