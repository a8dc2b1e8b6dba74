#pragma once

#include <array>
#include <string>
#include <vector>

namespace commcert {

// Which CUDA devices a process drives. One process per GPU under MPI (the process's index among
// those on its host picks the GPU), or one process driving several with -g.
struct DeviceAssignment {
  std::vector<int> devices;  // CUDA ordinals, in slot order
  std::string error;         // non-empty: the launch does not fit the visible GPUs
};

// `visible`: CUDA devices this process sees; `local_index`/`local_count`: this process among
// those on its host; `per_process`: -g (0 = every visible device, for one process per host).
// When each process sees only its own GPUs (CUDA_VISIBLE_DEVICES set per rank), it takes them.
[[nodiscard]] DeviceAssignment assign_devices(int visible, int local_index, int local_count,
                                              int per_process);

// NVML's spelling of a GPU UUID ("GPU-2f8c5b4e-...") from the 16 bytes CUDA reports.
[[nodiscard]] std::string format_gpu_uuid(const std::array<unsigned char, 16>& bytes);

}  // namespace commcert
