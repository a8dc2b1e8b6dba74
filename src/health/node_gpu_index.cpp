#include "health/node_gpu_index.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "health/pci_address.hpp"

namespace commcert {
namespace {

// PCI class 0x0300xx (VGA) and 0x0302xx (3D controller): what an NVIDIA GPU presents itself as.
bool is_gpu_class(std::string_view pci_class) {
  return pci_class.rfind("0x0300", 0) == 0 || pci_class.rfind("0x0302", 0) == 0;
}

}  // namespace

std::vector<std::string> nvidia_gpus_in_sysfs(const std::filesystem::path& sysfs_root) {
  std::vector<std::string> gpus;
  std::error_code error;
  std::filesystem::directory_iterator it(sysfs_root / "bus/pci/devices", error);
  if (error) return gpus;
  for (const auto& entry : it) {
    if (read_first_line(entry.path() / "vendor") != "0x10de") continue;
    if (!is_gpu_class(read_first_line(entry.path() / "class").value_or(""))) continue;
    if (auto bus_id = normalize_pci_bus_id(entry.path().filename().string())) {
      gpus.push_back(*bus_id);
    }
  }
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

std::optional<int> position_in_bus_order(const std::vector<std::string>& sorted_bus_ids,
                                         std::string_view pci_bus_id) {
  const auto wanted = normalize_pci_bus_id(pci_bus_id);
  if (!wanted) return std::nullopt;
  const auto it = std::find(sorted_bus_ids.begin(), sorted_bus_ids.end(), *wanted);
  if (it == sorted_bus_ids.end()) return std::nullopt;
  return static_cast<int>(it - sorted_bus_ids.begin());
}

std::optional<int> visible_device_index(std::optional<std::string_view> visible, int cuda_ordinal) {
  if (!visible || visible->empty()) return cuda_ordinal;
  std::string_view rest = *visible;
  for (int entry = 0;; ++entry) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (entry == cuda_ordinal) {
      int index = -1;
      const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), index);
      if (error != std::errc() || end != item.data() + item.size() || index < 0) {
        return std::nullopt;
      }
      return index;
    }
    if (comma == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(comma + 1);
  }
}

NodeGpuIndex::NodeGpuIndex(const std::string& nvml_library, const std::filesystem::path& sysfs_root)
    : nvml_(NvmlLibrary::open(nvml_library).library),
      sysfs_gpus_(nvidia_gpus_in_sysfs(sysfs_root)) {}

NodeGpuIndex::~NodeGpuIndex() = default;

int NodeGpuIndex::index_of(std::string_view pci_bus_id, int cuda_ordinal) const {
  if (nvml_) {
    const auto device = nvml_->device_by_pci_bus_id(std::string(pci_bus_id));
    if (device.ok()) {
      if (const auto index = nvml_->index(*device.value); index.ok()) {
        return static_cast<int>(*index.value);
      }
    }
  }
  // Listed on first need only: with NVML answering, sysfs is never walked.
  if (!sysfs_gpus_) sysfs_gpus_ = nvidia_gpus_in_sysfs(sysfs_root_);
  if (const auto position = position_in_bus_order(*sysfs_gpus_, pci_bus_id)) return *position;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const auto listed = visible_device_index(
      visible ? std::optional<std::string_view>(visible) : std::nullopt, cuda_ordinal);
  return listed.value_or(cuda_ordinal);
}

}  // namespace commcert
