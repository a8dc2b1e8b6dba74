#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/gpu_devices.hpp"
#include "bench/p2p_plan.hpp"
#include "core/record.hpp"

namespace commcert {

struct P2pSettings {
  std::uint64_t bytes = 256ULL << 20;  // per copy
  int copies_per_sample = 8;           // copies queued behind one spin kernel
  int iterations = 5;                  // timed samples per test (median reported)
  int warmup = 1;
  std::uint64_t chase_bytes = 128ULL << 20;  // the pointer chase's buffer
  std::uint32_t chase_stride = 128;          // bytes between slots: one cache line each
  int chase_loads = 20000;                   // dependent loads per sample
  std::uint64_t seed = 0x70327032ULL;
  double timeout_s = 120;  // bound on any one wait for a GPU
  std::filesystem::path sysfs_root = "/sys";
  P2pSelection selection;
};

// can[a][b]: GPU a can map GPU b's memory (cudaDeviceCanAccessPeer; the diagonal is true).
// Throws RuntimeFailure without CUDA.
[[nodiscard]] std::vector<std::vector<bool>> probe_peer_access(
    const std::vector<GpuDescription>& gpus);

// What one test ran: per stream, each timed sample's seconds.
struct P2pTestResult {
  RecordStatus status = RecordStatus::kOk;
  std::string reason;
  std::vector<std::vector<double>> samples_s;
};

struct P2pRun {
  std::vector<P2pTestResult> results;  // one per test, in the order given
  bool abandoned = false;              // the measuring thread is stuck in the driver (WorkerRun)
};

// Runs the tests one after another on the calling process's GPUs (`tests` from plan_p2p_tests
// over `gpus`); skipped tests come back skipped. After a test times out the rest are not run
// (error, naming it). `progress(tests_done)` runs on the calling thread about five times a
// second.
[[nodiscard]] P2pRun run_p2p_tests(const P2pSettings& settings,
                                   const std::vector<GpuDescription>& gpus,
                                   const std::vector<P2pTest>& tests,
                                   const std::function<void(std::size_t)>& progress);

}  // namespace commcert
