#include "bench/device_assignment.hpp"

#include <fmt/format.h>

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

std::string format_gpu_uuid(const std::array<unsigned char, 16>& b) {
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}"
      "{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
      b[15]);
}

}  // namespace commcert
