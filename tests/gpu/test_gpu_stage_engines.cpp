// The burn and membw engines, and health's NVML reading, on a real GPU: short runs that must be
// clean, deterministic and plausible. Skipped, with the reason, where no GPU is usable. Speed
// targets (burn vs a plain GEMM, copy vs cudaMemcpy) are checked by the self-test
// (scripts/selftest), not here: a unit test asserts behaviour, not timing.

#include <gtest/gtest.h>

#include "bench/burn_engine.hpp"
#include "bench/gpu_datasheet.hpp"
#include "bench/membw_engine.hpp"
#include "comm/gpu_runtime.hpp"
#include "health/node_gpu_index.hpp"
#include "health/node_health.hpp"
#include "health/nvml_library.hpp"
#include "health/telemetry.hpp"

namespace commcert {
namespace {

#define SKIP_WITHOUT_GPU()                                             \
  do {                                                                 \
    const GpuRuntimeInfo gpu = probe_gpu_runtime();                    \
    if (gpu.device_count == 0) GTEST_SKIP() << gpu.unavailable_reason; \
  } while (false)

BurnOutcome burn(BurnKernel kernel, double seconds, std::uint64_t seed = 1) {
  BurnSettings s;
  s.kernel = kernel;
  s.size = 4096;
  s.duration_s = seconds;
  s.window_s = 0.25;
  s.seed = seed;
  s.timeout_s = 60;
  const BurnRun run = run_burn(s, describe_gpus({0}), {});
  EXPECT_FALSE(run.abandoned);
  return run.outcomes.at(0);
}

TEST(BurnEngine, AShortBf16BurnIsCleanAndMeasuresPlausibleThroughput) {
  SKIP_WITHOUT_GPU();
  const BurnOutcome o = burn(BurnKernel::kGemmBf16, 3);
  ASSERT_EQ(o.status, RecordStatus::kOk) << o.reason;
  EXPECT_EQ(o.miscompares, 0u);
  ASSERT_GE(o.window_tflops.size(), 4u);
  EXPECT_GE(o.checked_results, o.window_tflops.size());
  EXPECT_TRUE(o.fingerprint.has_value());
  EXPECT_GT(o.iterations, 0u);
  EXPECT_NEAR(o.duration_s, 3.0, 1.0);
  for (const double t : o.window_tflops)
    EXPECT_GT(t, 0);
  // Event timing that is off by a large factor would show as throughput above the datasheet.
  if (const GpuDatasheet* sheet = find_gpu_datasheet(o.gpu.name)) {
    for (const double t : o.window_tflops)
      EXPECT_LT(t, 1.1 * *sheet->bf16_tflops);
  }
}

TEST(BurnEngine, TheSameGpuComputesTheSameFirstResultEveryRun) {
  SKIP_WITHOUT_GPU();
  const BurnOutcome a = burn(BurnKernel::kGemmBf16, 0.5, 7);
  const BurnOutcome b = burn(BurnKernel::kGemmBf16, 0.5, 7);
  const BurnOutcome c = burn(BurnKernel::kGemmBf16, 0.5, 8);
  ASSERT_TRUE(a.fingerprint && b.fingerprint && c.fingerprint);
  EXPECT_EQ(*a.fingerprint, *b.fingerprint);
  EXPECT_NE(*a.fingerprint, *c.fingerprint);  // the fingerprint sees the data
}

TEST(BurnEngine, EveryKernelRunsOrSaysWhyNot) {
  SKIP_WITHOUT_GPU();
  const int cc = describe_gpus({0}).at(0).compute_capability;
  for (const auto kernel : {BurnKernel::kGemmFp16, BurnKernel::kGemmTf32, BurnKernel::kGemmFp8,
                            BurnKernel::kGemmFp64, BurnKernel::kPowerFma}) {
    const BurnOutcome o = burn(kernel, 1);
    if (cc < burn_min_compute_capability(kernel)) {
      EXPECT_EQ(o.status, RecordStatus::kSkipped) << burn_kernel_name(kernel);
      EXPECT_NE(o.reason.find("compute capability"), std::string::npos);
      continue;
    }
    ASSERT_EQ(o.status, RecordStatus::kOk) << burn_kernel_name(kernel) << ": " << o.reason;
    EXPECT_EQ(o.miscompares, 0u) << burn_kernel_name(kernel);
    EXPECT_FALSE(o.window_tflops.empty()) << burn_kernel_name(kernel);
  }
}

TEST(MembwEngine, MeasuresEveryBandwidthAndFindsNoErrorInHealthyMemory) {
  SKIP_WITHOUT_GPU();
  MembwSettings s;
  s.buffer_bytes = 512ull << 20;
  s.iterations = 5;
  s.memtest_fraction = 0.25;
  s.timeout_s = 120;
  const auto gpus = describe_gpus({0});
  const MembwRun run = measure_device_memory(s, gpus, {});
  ASSERT_EQ(run.outcomes.size(), 1u);
  const MembwOutcome& o = run.outcomes[0];
  ASSERT_EQ(o.status, RecordStatus::kOk) << o.reason;
  EXPECT_GT(*o.read_bytes_per_s, 0);
  EXPECT_GT(*o.write_bytes_per_s, 0);
  EXPECT_GT(*o.copy_bytes_per_s, 0);
  EXPECT_GT(*o.memcpy_d2d_bytes_per_s, 0);
  ASSERT_TRUE(o.integrity.has_value());
  EXPECT_EQ(o.integrity->errors, 0u);
  EXPECT_EQ(o.integrity->patterns.size(), 4u);
  EXPECT_GT(o.integrity->bytes_tested, 0u);
  if (const GpuDatasheet* sheet = find_gpu_datasheet(o.gpu.name)) {
    EXPECT_LT(*o.copy_bytes_per_s, 1.05 * sheet->hbm_bytes_per_s);
  }
  const HostTransfer host = measure_host_transfer(s, gpus[0]);
  EXPECT_GT(*host.h2d_bytes_per_s, 1e9);
  EXPECT_GT(*host.d2h_bytes_per_s, 1e9);
}

TEST(BurnEngine, ChecksAfterEveryLaunchStayOutsideTheTimedSpans) {
  SKIP_WITHOUT_GPU();
  BurnSettings s;
  s.size = 4096;
  s.duration_s = 1;
  s.window_s = 0.25;
  s.check_every = 1;
  s.timeout_s = 60;
  const BurnOutcome o = run_burn(s, describe_gpus({0}), {}).outcomes.at(0);
  ASSERT_EQ(o.status, RecordStatus::kOk) << o.reason;
  EXPECT_EQ(o.miscompares, 0u);
  EXPECT_EQ(o.checked_results, o.iterations);  // one check per launch
}

TEST(MembwEngine, RunsOnAGpuOtherThanDeviceZero) {
  SKIP_WITHOUT_GPU();
  const int last = probe_gpu_runtime().device_count - 1;
  if (last == 0) GTEST_SKIP() << "one GPU: device 0 is the only one (run with two or more)";
  MembwSettings s;
  s.buffer_bytes = 256ull << 20;
  s.iterations = 3;
  s.memtest_fraction = 0.05;
  s.timeout_s = 60;
  const MembwRun run = measure_device_memory(s, describe_gpus({last}), {});
  ASSERT_EQ(run.outcomes.size(), 1u);
  EXPECT_EQ(run.outcomes[0].status, RecordStatus::kOk) << run.outcomes[0].reason;
}

TEST(GpuHealth, EveryVisibleGpuGetsNvmlsNodeWideIndex) {
  SKIP_WITHOUT_GPU();
  auto opened = NvmlLibrary::open();
  if (!opened.library) GTEST_SKIP() << opened.unavailable_reason;
  const NodeGpuIndex node_index(kDefaultNvmlLibrary, "/sys");
  const int count = probe_gpu_runtime().device_count;
  for (int device = 0; device < count; ++device) {
    const auto gpu = describe_gpus({device}).at(0);
    const auto handle = opened.library->device_by_pci_bus_id(gpu.identity.pci_bus_id);
    ASSERT_TRUE(handle.ok()) << gpu.identity.pci_bus_id;
    EXPECT_EQ(node_index.index_of(gpu.identity.pci_bus_id, device),
              static_cast<int>(*opened.library->index(*handle.value).value));
  }
}

TEST(GpuHealth, NvmlAndCudaAgreeOnWhereGpuZeroIs) {
  SKIP_WITHOUT_GPU();
  auto opened = NvmlLibrary::open();
  if (!opened.library) GTEST_SKIP() << opened.unavailable_reason;
  const auto gpu = describe_gpus({0}).at(0);
  // Burn telemetry finds each CUDA device in NVML by this address.
  const auto device = opened.library->device_by_pci_bus_id(gpu.identity.pci_bus_id);
  ASSERT_TRUE(device.ok()) << opened.library->describe(device.code);
  EXPECT_EQ(opened.library->uuid(*device.value).value, gpu.identity.uuid);
  TelemetrySampler sampler(*opened.library, {*device.value}, 0.05);
  sampler.start();
  (void)burn(BurnKernel::kGemmBf16, 1);
  sampler.stop();
  const Json t = telemetry_json(sampler.series(0));
  EXPECT_GT(t["samples"].get<int>(), 5);
  EXPECT_GT(t["sm_clock_mhz"]["max"].get<double>(), 0);
}

TEST(GpuHealth, ARealNodeReportsItsGpus) {
  SKIP_WITHOUT_GPU();
  HealthOptions options;
  const NodeHealth health = collect_node_health(options);
  if (!health.nvml_unavailable_reason.empty()) GTEST_SKIP() << health.nvml_unavailable_reason;
  ASSERT_TRUE(health.gpu_count.has_value());
  ASSERT_GE(*health.gpu_count, 1u);
  EXPECT_TRUE(health.gpus[0].name.has_value());
  EXPECT_TRUE(health.gpus[0].pci_bus_id.has_value());
  EXPECT_FALSE(health.gpus[0].lost);
}

}  // namespace
}  // namespace commcert
