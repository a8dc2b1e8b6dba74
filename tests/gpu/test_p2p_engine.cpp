// commcert p2p's engine and kernels on a real GPU: the spin gate holds a stream until released
// (or gives up at its timeout), the pointer chase follows the chain it is given, and a short run
// of every test a node allows comes back clean with plausible figures. Skipped, with the reason,
// where no GPU is usable. Nothing here asserts a speed: plausibility bounds only catch timing
// that is off by a large factor.

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include <gtest/gtest.h>

#include "bench/gpu/cuda_support.hpp"
#include "bench/gpu_datasheet.hpp"
#include "bench/p2p_engine.hpp"
#include "comm/gpu_runtime.hpp"
#include "health/pci_address.hpp"
#include "kernels/p2p_kernels.hpp"

namespace commcert {
namespace {

#define SKIP_WITHOUT_GPU()                                             \
  do {                                                                 \
    const GpuRuntimeInfo gpu = probe_gpu_runtime();                    \
    if (gpu.device_count == 0) GTEST_SKIP() << gpu.unavailable_reason; \
  } while (false)

std::vector<GpuDescription> every_gpu() {
  std::vector<int> devices(static_cast<std::size_t>(probe_gpu_runtime().device_count));
  std::iota(devices.begin(), devices.end(), 0);
  return describe_gpus(devices);
}

TEST(P2pKernels, TheSpinKernelHoldsItsStreamUntilReleased) {
  SKIP_WITHOUT_GPU();
  COMMCERT_CHECK_CUDA(cudaSetDevice(0));
  PinnedMemory gate_memory(sizeof(SpinGate));
  auto* gate = gate_memory.as<SpinGate>();
  gate->release = 0;
  gate->gave_up = 0;
  CudaStream stream;
  enqueue_spin(gate, 30'000'000'000ULL, stream.get());
  CudaEvent after;
  after.record(stream.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(cudaEventQuery(after.get()), cudaErrorNotReady);
  std::atomic_ref<int>(gate->release).store(1);
  wait_for(after, Deadline::after_seconds(10), "released spin kernel");
  EXPECT_EQ(std::atomic_ref<int>(gate->gave_up).load(), 0);
}

TEST(P2pKernels, TheSpinKernelGivesUpAtItsTimeoutAndSaysSo) {
  SKIP_WITHOUT_GPU();
  COMMCERT_CHECK_CUDA(cudaSetDevice(0));
  PinnedMemory gate_memory(sizeof(SpinGate));
  auto* gate = gate_memory.as<SpinGate>();
  gate->release = 0;
  gate->gave_up = 0;
  CudaStream stream;
  enqueue_spin(gate, 1'000'000ULL, stream.get());  // 1 ms, never released
  drain(stream.get(), Deadline::after_seconds(10), "spin kernel at its timeout");
  EXPECT_EQ(std::atomic_ref<int>(gate->gave_up).load(), 1);
}

TEST(P2pKernels, ThePointerChaseFollowsTheChainItIsGiven) {
  SKIP_WITHOUT_GPU();
  COMMCERT_CHECK_CUDA(cudaSetDevice(0));
  constexpr std::uint32_t kSlots = 64;
  constexpr std::uint32_t kStride = 128;
  DeviceMemory chain(kSlots * kStride);
  const auto base = reinterpret_cast<std::uint64_t>(chain.get());
  const std::vector<std::uint32_t> next = pointer_chase_cycle(kSlots, 11);
  std::vector<std::uint64_t> image(kSlots * kStride / 8, 0);
  for (std::uint32_t i = 0; i < kSlots; ++i)
    image[i * kStride / 8] = base + std::uint64_t{next[i]} * kStride;
  COMMCERT_CHECK_CUDA(
      cudaMemcpy(chain.get(), image.data(), image.size() * 8, cudaMemcpyHostToDevice));
  DeviceMemory cursor(sizeof(std::uint64_t));
  CudaStream stream;
  for (const std::uint64_t loads : {std::uint64_t{5}, std::uint64_t{kSlots}}) {
    COMMCERT_CHECK_CUDA(cudaMemcpy(cursor.get(), &base, 8, cudaMemcpyHostToDevice));
    enqueue_pointer_chase(cursor.as<std::uint64_t>(), loads, stream.get());
    drain(stream.get(), Deadline::after_seconds(10), "pointer chase");
    std::uint64_t ended = 0;
    COMMCERT_CHECK_CUDA(cudaMemcpy(&ended, cursor.get(), 8, cudaMemcpyDeviceToHost));
    std::uint32_t slot = 0;
    for (std::uint64_t i = 0; i < loads; ++i)
      slot = next[slot];
    EXPECT_EQ(ended, base + std::uint64_t{slot} * kStride) << loads << " loads";
  }
}

P2pSettings short_settings() {
  P2pSettings s;
  s.bytes = 64ULL << 20;
  s.copies_per_sample = 4;
  s.iterations = 3;
  s.warmup = 1;
  s.chase_bytes = 32ULL << 20;
  s.chase_loads = 2000;
  s.timeout_s = 60;
  return s;
}

TEST(P2pEngine, EveryTestOfThisNodeRunsCleanWithPlausibleFigures) {
  SKIP_WITHOUT_GPU();
  const P2pSettings s = short_settings();
  const auto gpus = every_gpu();
  const auto peer = probe_peer_access(gpus);
  HostNuma numa;
  numa.online_nodes = online_numa_nodes("/sys");
  for (const auto& gpu : gpus)
    numa.gpu_node.push_back(pci_numa_node("/sys", gpu.identity.pci_bus_id));
  const auto tests = plan_p2p_tests(static_cast<int>(gpus.size()), peer, numa, s.selection);
  const P2pRun run = run_p2p_tests(s, gpus, tests, {});
  ASSERT_FALSE(run.abandoned);
  ASSERT_EQ(run.results.size(), tests.size());
  int host_tests = 0;
  int local_tests = 0;
  for (std::size_t t = 0; t < tests.size(); ++t) {
    const P2pTest& test = tests[t];
    const P2pTestResult& r = run.results[t];
    if (test.skip_reason) {
      EXPECT_EQ(r.status, RecordStatus::kSkipped);
      continue;
    }
    ASSERT_EQ(r.status, RecordStatus::kOk) << t << ": " << r.reason;
    ASSERT_EQ(r.samples_s.size(), test.streams.size());
    host_tests += test.path == P2pPath::kHostGpu;
    local_tests += test.path == P2pPath::kDeviceLocal;
    for (const auto& samples : r.samples_s) {
      ASSERT_EQ(samples.size(), static_cast<std::size_t>(s.iterations));
      const bool chase = test.method == P2pMethod::kPointerChase;
      const P2pMeasurement m =
          p2p_measurement(*test.method, chase ? s.chase_bytes : s.bytes,
                          chase ? s.chase_loads : s.copies_per_sample, s.warmup, samples);
      if (chase) {
        // A dependent load takes longer than 50 ns and less than 100 us on any GPU we know.
        ASSERT_TRUE(m.latency_s);
        EXPECT_GT(*m.latency_s, 50e-9) << t;
        EXPECT_LT(*m.latency_s, 100e-6) << t;
        continue;
      }
      ASSERT_TRUE(m.bytes_per_s);
      EXPECT_GT(*m.bytes_per_s, 1e9) << t;
      if (test.path == P2pPath::kHostGpu) {
        EXPECT_LT(*m.bytes_per_s, 130e9) << t;  // above PCIe Gen6 x16
      }
      const GpuDatasheet* sheet = find_gpu_datasheet(gpus[0].identity.name);
      if (test.path == P2pPath::kDeviceLocal && sheet) {
        // A copy reads and writes each byte: bytes copied per second above HBM's peak would be
        // timing that is off, not a fast GPU.
        EXPECT_LT(*m.bytes_per_s, sheet->hbm_bytes_per_s) << t;
      }
    }
  }
  EXPECT_GE(host_tests, 2 * static_cast<int>(gpus.size()));
  EXPECT_EQ(local_tests, 3 * static_cast<int>(gpus.size()));
  if (gpus.size() == 1) {
    const auto lone = std::find_if(tests.begin(), tests.end(),
                                   [](const P2pTest& t) { return t.path == P2pPath::kGpuGpu; });
    ASSERT_NE(lone, tests.end());
    EXPECT_EQ(lone->skip_reason, "one GPU");
  }
}

}  // namespace
}  // namespace commcert
