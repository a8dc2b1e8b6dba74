#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "bench/burn.hpp"
#include "bench/gpu_devices.hpp"
#include "bench/gpu_worker_pool.hpp"

namespace commcert {

struct BurnHooks {
  // Runs on the calling thread once every GPU is set up and before any burns: where the caller
  // lines up with other processes (all GPUs of a job burn at once) and starts telemetry.
  std::function<void()> ready;
  // Runs on the calling thread about once a second while GPUs burn, with seconds since start.
  std::function<void(double)> tick;
  const std::atomic<bool>* stop = nullptr;  // set (e.g. by SIGINT) to end the burn early
};

// One outcome per GPU, in the order given; `abandoned` when a GPU's thread is stuck in the driver.
using BurnRun = WorkerRun<BurnOutcome>;

// Burns every GPU at once, one host thread each. Per-GPU failures become outcomes (error,
// timeout, skipped); only a failure of `hooks.ready` propagates.
[[nodiscard]] BurnRun run_burn(const BurnSettings& settings,
                               const std::vector<GpuDescription>& gpus, const BurnHooks& hooks);

}  // namespace commcert
