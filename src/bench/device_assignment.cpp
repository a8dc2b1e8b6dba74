#include "bench/device_assignment.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "bench/gpu_devices.hpp"

namespace commcert {

DeviceAssignment assign_devices(int visible, int local_index, int local_count, int per_process) {
  DeviceAssignment out;
  if (visible <= 0) return out;
  if (per_process == 0) {
    if (local_count > 1) {
      out.error = fmt::format(
          "-g 0 (every GPU) needs one process per host, but {} processes share this host",
          local_count);
      return out;
    }
    for (int device = 0; device < visible; ++device)
      out.devices.push_back(device);
    return out;
  }
  if (visible >= local_count * per_process) {
    for (int slot = 0; slot < per_process; ++slot)
      out.devices.push_back(local_index * per_process + slot);
    return out;
  }
  if (visible == per_process) {
    for (int slot = 0; slot < per_process; ++slot)
      out.devices.push_back(slot);
    return out;
  }
  out.error = fmt::format(
      "{} process(es) on this host x {} GPU(s) each need {} GPUs, but {} are visible to this "
      "process",
      local_count, per_process, local_count * per_process, visible);
  return out;
}

DeviceAssignment in_pci_order(DeviceAssignment assignment,
                              const std::vector<std::string>& pci_bus_ids) {
  const bool known = std::none_of(pci_bus_ids.begin(), pci_bus_ids.end(),
                                  [](const std::string& id) { return id.empty(); });
  if (!known) return assignment;
  std::vector<int> by_address(pci_bus_ids.size());
  std::iota(by_address.begin(), by_address.end(), 0);
  std::stable_sort(by_address.begin(), by_address.end(), [&](int a, int b) {
    return pci_bus_ids[static_cast<std::size_t>(a)] < pci_bus_ids[static_cast<std::size_t>(b)];
  });
  for (const int device : assignment.devices) {
    if (device < 0 || static_cast<std::size_t>(device) >= by_address.size()) return assignment;
  }
  for (int& device : assignment.devices)
    device = by_address[static_cast<std::size_t>(device)];
  return assignment;
}

DeviceAssignment assign_devices_in_pci_order(int visible, int local_index, int local_count,
                                             int per_process) {
  DeviceAssignment assignment = assign_devices(visible, local_index, local_count, per_process);
  if (!assignment.error.empty() || assignment.devices.empty()) return assignment;
  std::vector<int> all(static_cast<std::size_t>(visible));
  std::iota(all.begin(), all.end(), 0);
  std::vector<std::string> addresses;
  try {
    for (const GpuDescription& gpu : describe_gpus(all))
      addresses.push_back(gpu.identity.pci_bus_id);
  } catch (const std::exception&) {
    return assignment;  // CUDA cannot say: its own order, as before
  }
  if (addresses.size() != all.size()) return assignment;
  return in_pci_order(std::move(assignment), addresses);
}

std::string format_gpu_uuid(const std::array<unsigned char, 16>& b) {
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}"
      "{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
      b[15]);
}

}  // namespace commcert
