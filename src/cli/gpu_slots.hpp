#pragma once

#include <string>
#include <vector>

#include "bench/gpu_devices.hpp"
#include "cli/process_group.hpp"
#include "cli/stage_session.hpp"
#include "comm/gpu_runtime.hpp"
#include "core/record.hpp"
#include "health/node_gpu_index.hpp"

namespace commcert {

// The GPUs this process drives in a burn or membw stage, or why it drives none.
struct GpuSlots {
  std::vector<GpuDescription> gpus;
  std::vector<StageSlot> slots;  // one per GPU, or one "host" slot when there is none
  RecordStatus unavailable_status = RecordStatus::kOk;  // kSkipped or kError when no GPUs
  std::string unavailable_reason;
};

// `per_process` is -g. No GPU (no driver, CPU-only build) is `skipped`; a launch that does not
// fit the visible GPUs, or a GPU CUDA cannot describe, is `error`. Each GPU's record index is
// its node-wide one from `node_index`.
[[nodiscard]] GpuSlots plan_gpu_slots(const GpuRuntimeInfo& runtime, const ProcessGroup& group,
                                      int per_process, const NodeGpuIndex& node_index);
// The same for a process that is `local_index` of `local_count` on its host.
[[nodiscard]] GpuSlots plan_gpu_slots(const GpuRuntimeInfo& runtime, int local_index,
                                      int local_count, int per_process,
                                      const NodeGpuIndex& node_index);

}  // namespace commcert
