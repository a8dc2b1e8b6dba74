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

// CUDA numbers devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; NVML and nvidia-smi
// number them by PCI address. A process's position (local rank i, and its -g slots) picks the i-th
// visible GPU by PCI address, so the GPU a rank drives, the NIC nearest it and the index its
// records carry agree whatever CUDA's order. `pci_bus_ids[ordinal]` is each CUDA ordinal's
// normalized address; positions become the CUDA ordinals at those places in PCI order. Where an
// address is missing or the list does not cover every visible device, CUDA's order is kept.
[[nodiscard]] DeviceAssignment in_pci_order(DeviceAssignment assignment,
                                            const std::vector<std::string>& pci_bus_ids);

// assign_devices, then in_pci_order with the visible devices' addresses as CUDA reports them.
[[nodiscard]] DeviceAssignment assign_devices_in_pci_order(int visible, int local_index,
                                                           int local_count, int per_process);

// NVML's spelling of a GPU UUID ("GPU-2f8c5b4e-...") from the 16 bytes CUDA reports.
[[nodiscard]] std::string format_gpu_uuid(const std::array<unsigned char, 16>& bytes);

}  // namespace commcert
