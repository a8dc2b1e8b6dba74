#pragma once

// Kernels of the burn besides the GEMM itself (cuBLASLt does that): input fill, result
// comparison and fingerprint, and the power kernel. Each enqueues on `stream` and returns.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/burn_math.hpp"

namespace commcert {

// Element types of burn matrices.
enum class BurnElement : std::uint8_t { kBf16, kFp16, kFp32, kFp8E4M3, kFp64 };

inline unsigned burn_element_bytes(BurnElement type) {
  switch (type) {
    case BurnElement::kFp8E4M3:
      return 1;
    case BurnElement::kBf16:
    case BurnElement::kFp16:
      return 2;
    case BurnElement::kFp32:
      return 4;
    case BurnElement::kFp64:
      return 8;
  }
  return 0;
}

// data[i] = burn_input_value(seed, matrix, i) rounded to `type` (burn_input_value_f64 for fp64).
void enqueue_fill_burn_input(void* data, std::uint64_t count, BurnElement type, std::uint64_t seed,
                             unsigned matrix, int sm_count, cudaStream_t stream);

// Adds to *differences (device) the number of elements whose bits differ between a and b.
// element_bytes is 1, 2, 4 or 8.
void enqueue_count_differences(const void* a, const void* b, std::uint64_t count,
                               unsigned element_bytes, unsigned long long* differences,
                               int sm_count, cudaStream_t stream);

// Adds to *fingerprint (device) the fingerprint_share of every element of data.
void enqueue_fingerprint(const void* data, std::uint64_t count, unsigned element_bytes,
                         unsigned long long* fingerprint, int sm_count, cudaStream_t stream);

struct PowerFmaLaunch {
  unsigned blocks = 1;
  unsigned threads_per_block = 256;
  unsigned steps = 1;
};

// Each thread runs `steps` power_fma_step on kPowerFmaPairs pairs and writes its final pairs to
// out[thread * 2 * kPowerFmaPairs ...] (x then y per pair).
void enqueue_power_fma(float* out, const PowerFmaLaunch& launch, std::uint64_t seed,
                       const PowerFmaShears& shears, cudaStream_t stream);

}  // namespace commcert
