#pragma once

#include <cstdint>
#include <memory>

#include <cuda_runtime_api.h>

#include "bench/burn.hpp"
#include "bench/gpu/cuda_support.hpp"

namespace commcert {

// One tensor-core GEMM, D = A^T * B (m = n = k = size), through cuBLASLt with the algorithm its
// heuristic picks for this GPU. Inputs are the deterministic burn data (burn_math.hpp), so the
// same model, toolkit and algorithm give bit-identical D on every GPU (cuBLAS's reproducibility
// rule: same architecture, same SM count, one stream, our own workspace).
//
// A^T B ("TN") is the layout cuBLASLt requires for fp8 and a fast one for every type, so all
// kernels share it.
class GemmRunner {
 public:
  GemmRunner(BurnKernel kernel, std::uint64_t size, std::uint64_t seed, int sm_count,
             cudaStream_t stream);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  void enqueue();
  [[nodiscard]] const void* result() const { return d_.get(); }
  [[nodiscard]] std::uint64_t result_elements() const { return size_ * size_; }
  [[nodiscard]] unsigned result_element_bytes() const { return d_element_bytes_; }
  [[nodiscard]] double flops_per_call() const;

 private:
  struct Lt;
  std::uint64_t size_;
  unsigned d_element_bytes_ = 0;
  cudaStream_t stream_;
  DeviceMemory a_;
  DeviceMemory b_;
  DeviceMemory d_;
  DeviceMemory workspace_;
  std::unique_ptr<Lt> lt_;
};

}  // namespace commcert
