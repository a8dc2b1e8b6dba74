#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "health/nvml_library.hpp"

namespace commcert {

// A GPU's place among its node's GPUs: the index nvidia-smi, NVML and health records give it,
// whatever CUDA_VISIBLE_DEVICES this process has. Under one process per GPU (Slurm
// --gpus-per-task=1) every process sees its GPU as CUDA device 0; records must still say GPU 5
// where health says GPU 5, or the validator finds no evidence for GPUs 1..7.
class NodeGpuIndex {
 public:
  // Asks NVML (`nvml_library`) by PCI bus id; where NVML cannot answer, takes the GPU's place
  // in PCI bus order under <sysfs_root>/bus/pci/devices, the order NVML enumerates in.
  NodeGpuIndex(const std::string& nvml_library, const std::filesystem::path& sysfs_root);
  ~NodeGpuIndex();
  NodeGpuIndex(const NodeGpuIndex&) = delete;
  NodeGpuIndex& operator=(const NodeGpuIndex&) = delete;

  // The node-wide index of the GPU at `pci_bus_id`; `cuda_ordinal` (this process's device
  // number) is mapped through CUDA_VISIBLE_DEVICES when neither NVML nor sysfs know the GPU.
  [[nodiscard]] int index_of(std::string_view pci_bus_id, int cuda_ordinal) const;

 private:
  std::unique_ptr<NvmlLibrary> nvml_;
  std::filesystem::path sysfs_root_;
  mutable std::optional<std::vector<std::string>> sysfs_gpus_;  // bus ids in PCI order
};

// Bus ids (sysfs spelling, sorted) of the NVIDIA display and 3D controllers under
// <sysfs_root>/bus/pci/devices; NVSwitches and bridges are not GPUs. Empty when unreadable.
[[nodiscard]] std::vector<std::string> nvidia_gpus_in_sysfs(
    const std::filesystem::path& sysfs_root);

// Position of `pci_bus_id` (any spelling) among `sorted_bus_ids`; nullopt when absent.
[[nodiscard]] std::optional<int> position_in_bus_order(
    const std::vector<std::string>& sorted_bus_ids, std::string_view pci_bus_id);

// What CUDA_VISIBLE_DEVICES (`visible`) says device `cuda_ordinal` is, when the entry is a plain
// index ("4,5" -> ordinal 1 is 4); nullopt for UUIDs, MIG names or no such entry. Unset or empty
// visible devices (`visible` nullopt) leave the ordinal as it is.
[[nodiscard]] std::optional<int> visible_device_index(std::optional<std::string_view> visible,
                                                      int cuda_ordinal);

}  // namespace commcert
