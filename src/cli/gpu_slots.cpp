#include "cli/gpu_slots.hpp"

#include <fmt/format.h>

#include "bench/device_assignment.hpp"

namespace commcert {

GpuSlots plan_gpu_slots(const GpuRuntimeInfo& runtime, const ProcessGroup& group, int per_process,
                        const NodeGpuIndex& node_index) {
  return plan_gpu_slots(runtime, group.local_index(), group.local_count(), per_process, node_index);
}

GpuSlots plan_gpu_slots(const GpuRuntimeInfo& runtime, int local_index, int local_count,
                        int per_process, const NodeGpuIndex& node_index) {
  GpuSlots plan;
  const auto none = [&plan](RecordStatus status, std::string reason) {
    plan.gpus.clear();
    plan.slots = {StageSlot{}};
    plan.unavailable_status = status;
    plan.unavailable_reason = std::move(reason);
    return plan;
  };
  if (runtime.device_count <= 0) return none(RecordStatus::kSkipped, runtime.unavailable_reason);
  const DeviceAssignment assignment =
      assign_devices_in_pci_order(runtime.device_count, local_index, local_count, per_process);
  if (!assignment.error.empty()) return none(RecordStatus::kError, assignment.error);
  try {
    plan.gpus = describe_gpus(assignment.devices);
  } catch (const std::exception& error) {
    return none(RecordStatus::kError, error.what());
  }
  for (auto& gpu : plan.gpus) {
    gpu.identity.index = node_index.index_of(gpu.identity.pci_bus_id, gpu.cuda_device);
    StageSlot slot;
    slot.device = fmt::format("GPU {} ({}, {})", gpu.identity.index, gpu.identity.name,
                              gpu.identity.pci_bus_id);
    slot.gpu = gpu.identity;
    slot.cuda_device = gpu.cuda_device;
    plan.slots.push_back(std::move(slot));
  }
  return plan;
}

}  // namespace commcert
