#include <gtest/gtest.h>

#include "bench/gpu_datasheet.hpp"

namespace commcert {
namespace {

TEST(GpuDatasheet, KnowsTheModelsByTheNamesCudaReports) {
  const GpuDatasheet* h200 = find_gpu_datasheet("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(h200->hbm_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(*h200->bf16_tflops, 989);
  const GpuDatasheet* h100 = find_gpu_datasheet("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->hbm_bytes_per_s, 3.35e12);
  EXPECT_NE(find_gpu_datasheet("NVIDIA H100 PCIe"), nullptr);
  EXPECT_DOUBLE_EQ(find_gpu_datasheet("NVIDIA A100-SXM4-80GB")->hbm_bytes_per_s, 2039e9);
  EXPECT_DOUBLE_EQ(find_gpu_datasheet("NVIDIA A100-SXM4-40GB")->hbm_bytes_per_s, 1555e9);
  EXPECT_DOUBLE_EQ(find_gpu_datasheet("NVIDIA B200")->hbm_bytes_per_s, 8e12);
}

TEST(GpuDatasheet, UnknownModelHasNoPeakRatherThanAGuess) {
  EXPECT_EQ(find_gpu_datasheet("NVIDIA GeForce RTX 4090"), nullptr);
  EXPECT_EQ(find_gpu_datasheet(""), nullptr);
  EXPECT_EQ(find_gpu_datasheet("H200"), nullptr);  // names match exactly
}

TEST(GpuDatasheet, PeakPerBurnKernel) {
  const GpuDatasheet& a100 = *find_gpu_datasheet("NVIDIA A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(*datasheet_peak_tflops(a100, "gemm_bf16"), 312);
  EXPECT_DOUBLE_EQ(*datasheet_peak_tflops(a100, "gemm_tf32"), 156);
  EXPECT_DOUBLE_EQ(*datasheet_peak_tflops(a100, "gemm_fp64"), 19.5);
  EXPECT_FALSE(datasheet_peak_tflops(a100, "gemm_fp8").has_value());  // Ampere has no fp8
  EXPECT_FALSE(datasheet_peak_tflops(a100, "nonsense").has_value());
  const GpuDatasheet& b200 = *find_gpu_datasheet("NVIDIA B200");
  EXPECT_DOUBLE_EQ(*datasheet_peak_tflops(b200, "gemm_fp8"), 4500);
  EXPECT_FALSE(datasheet_peak_tflops(b200, "power_fma").has_value());
}

}  // namespace
}  // namespace commcert
