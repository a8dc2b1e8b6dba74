#pragma once

#include <optional>
#include <string_view>

namespace commcert {

// Dense (no sparsity) datasheet peaks of one GPU model; nullopt where the model has no such
// unit or no source was found.
struct GpuDatasheet {
  std::string_view model;  // short name for humans
  double hbm_bytes_per_s = 0;
  std::optional<double> bf16_tflops;
  std::optional<double> fp16_tflops;
  std::optional<double> tf32_tflops;
  std::optional<double> fp8_tflops;
  std::optional<double> fp64_tflops;  // FP64 tensor core
  std::optional<double> fp32_tflops;  // FP32 without tensor cores (the power_fma kernel)
};

// The datasheet of a GPU by the name CUDA and NVML report (e.g. "NVIDIA H200"), or nullptr for
// a model not in the table: an unknown peak is null in records, never a guess.
[[nodiscard]] const GpuDatasheet* find_gpu_datasheet(std::string_view name);

// The peak for a burn kernel id ("gemm_bf16", ..., "power_fma"), or nullopt.
[[nodiscard]] std::optional<double> datasheet_peak_tflops(const GpuDatasheet& sheet,
                                                          std::string_view kernel);

}  // namespace commcert
