#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "bench/gpu_devices.hpp"
#include "bench/gpu_worker_pool.hpp"
#include "bench/membw.hpp"

namespace commcert {

// One outcome per GPU, in the order given; `abandoned` when a GPU's thread is stuck in the driver.
using MembwRun = WorkerRun<MembwOutcome>;

// HBM read/write/copy bandwidth, the cudaMemcpy reference and the pattern test, on every GPU at
// once (one host thread each: they do not share a bus). `progress(fraction)` runs on the calling
// thread about five times a second.
[[nodiscard]] MembwRun measure_device_memory(const MembwSettings& settings,
                                             const std::vector<GpuDescription>& gpus,
                                             const std::function<void(double)>& progress);

// Pinned host memory <-> one GPU through the copy engines, the host buffer allocated by a thread
// bound to the GPU's NUMA node. Run one GPU at a time: GPUs share the host's memory and links.
// Throws RuntimeFailure (DeviceTimeout past the timeout).
[[nodiscard]] HostTransfer measure_host_transfer(const MembwSettings& settings,
                                                 const GpuDescription& gpu);

}  // namespace commcert
