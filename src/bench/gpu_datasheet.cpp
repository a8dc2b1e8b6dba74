#include "bench/gpu_datasheet.hpp"

#include <array>

namespace commcert {
namespace {

struct Entry {
  std::array<std::string_view, 3> names;  // as CUDA/NVML spell them; empty slots unused
  GpuDatasheet sheet;
};

// Sources (see ../shared/reference/burnin-bandwidth-health.md section 6.1 for the survey):
//  [a] NVIDIA A100 product page (https://www.nvidia.com/en-us/data-center/a100/): HBM 1,555 GB/s
//      (40GB), 1,935 GB/s (80GB PCIe), 2,039 GB/s (80GB SXM); FP64 tensor 19.5, FP32 19.5 TF.
//  [b] NVIDIA H100 product page (https://www.nvidia.com/en-us/data-center/h100/): SXM 3.35 TB/s,
//      FP64 tensor 67, FP32 67 TF; PCIe 2.0 TB/s, FP64 tensor 51, FP32 51 TF, and the PCIe
//      tensor figures printed with sparsity (TF32 756, BF16/FP16 1,513, FP8 3,026), halved here.
//      The PCIe column was not cross-checked in the reference notes.
//  [c] NVIDIA H200 product page (https://www.nvidia.com/en-us/data-center/h200/): 4.8 TB/s,
//      FP64 tensor 67 TF, FP32 67 TF.
//  [d] DGX B200 datasheet: 8 TB/s per GPU.
//  [f] stas00/ml-engineering compute/accelerator/README.md @744d01e, dense tensor TFLOP/s:
//      A100 TF32 156, BF16/FP16 312; H100/H200 SXM TF32 494.5, BF16/FP16 989, FP8 1,979;
//      B200 TF32 1,100-1,125, BF16/FP16 2,250, FP8 4,500.
//  [g] glennklockwood.com/garden/processors/B200: HGX B200 (1000 W) FP64 40, TF32 1,100.
//  B200 FP32 (non-tensor) was not found in a source we trust: null.
constexpr double kTB = 1e12;
constexpr double kGB = 1e9;

const std::array<Entry, 7> kTable = {{
    {{"NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB", ""},
     {"A100 40GB", 1555 * kGB, 312, 312, 156, std::nullopt, 19.5, 19.5}},  // [a][f]
    {{"NVIDIA A100-SXM4-80GB", "", ""},
     {"A100 SXM 80GB", 2039 * kGB, 312, 312, 156, std::nullopt, 19.5, 19.5}},  // [a][f]
    {{"NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-80GB", ""},
     {"A100 PCIe 80GB", 1935 * kGB, 312, 312, 156, std::nullopt, 19.5, 19.5}},  // [a][f]
    {{"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB", ""},
     {"H100 SXM", 3.35 * kTB, 989, 989, 494.5, 1979, 67, 67}},  // [b][f]
    {{"NVIDIA H100 PCIe", "", ""}, {"H100 PCIe", 2.0 * kTB, 756, 756, 378, 1513, 51, 51}},  // [b]
    {{"NVIDIA H200", "", ""}, {"H200 SXM", 4.8 * kTB, 989, 989, 494.5, 1979, 67, 67}},  // [c][f]
    {{"NVIDIA B200", "", ""},
     {"B200", 8.0 * kTB, 2250, 2250, 1100, 4500, 40, std::nullopt}},  // [d][f][g]
}};

}  // namespace

const GpuDatasheet* find_gpu_datasheet(std::string_view name) {
  for (const auto& entry : kTable) {
    for (const auto& known : entry.names) {
      if (!known.empty() && known == name) return &entry.sheet;
    }
  }
  return nullptr;
}

std::optional<double> datasheet_peak_tflops(const GpuDatasheet& sheet, std::string_view kernel) {
  if (kernel == "gemm_bf16") return sheet.bf16_tflops;
  if (kernel == "gemm_fp16") return sheet.fp16_tflops;
  if (kernel == "gemm_tf32") return sheet.tf32_tflops;
  if (kernel == "gemm_fp8") return sheet.fp8_tflops;
  if (kernel == "gemm_fp64") return sheet.fp64_tflops;
  if (kernel == "power_fma") return sheet.fp32_tflops;
  return std::nullopt;
}

}  // namespace commcert
