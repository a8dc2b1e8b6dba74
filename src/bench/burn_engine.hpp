#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "bench/burn.hpp"
#include "bench/gpu_devices.hpp"

namespace commcert {

struct BurnHooks {
  // Runs on the calling thread once every GPU is set up and before any burns: where the caller
  // lines up with other processes (all GPUs of a job burn at once) and starts telemetry.
  std::function<void()> ready;
  // Runs on the calling thread about once a second while GPUs burn, with seconds since start.
  std::function<void(double)> tick;
  const std::atomic<bool>* stop = nullptr;  // set (e.g. by SIGINT) to end the burn early
};

struct BurnRun {
  std::vector<BurnOutcome> outcomes;  // one per GPU, in the order given
  // A GPU thread is stuck inside the driver past every deadline; the process must not wait for
  // it at exit (the caller ends the process once its records are written).
  bool abandoned = false;
};

// Burns every GPU at once, one host thread each. Per-GPU failures become outcomes (error,
// timeout, skipped); only a failure of `hooks.ready` propagates.
[[nodiscard]] BurnRun run_burn(const BurnSettings& settings,
                               const std::vector<GpuDescription>& gpus, const BurnHooks& hooks);

}  // namespace commcert
