#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.hpp"

namespace commcert {

// Where a GPU sits relative to NUMA nodes and RDMA NICs (docs/records.md, component node).
struct GpuLocality {
  std::optional<int> gpu;  // NVML index; nullopt for a GPU seen on PCI only (no driver)
  std::string pci_bus_id;
  std::optional<int> numa_node;
  std::vector<std::string> nearest_ib_devices;
};

struct TopologyReport {
  bool available = false;
  std::string source;              // e.g. "hwloc 2.9.0"
  std::string unavailable_reason;  // when !available
  std::vector<GpuLocality> gpus;
};

// A GPU to place: its NVML index (if NVML knows it) and PCI address.
struct GpuAddress {
  std::optional<int> index;
  std::string pci_bus_id;
};

// Places `gpus` in the machine's topology; with no GPUs given, places every NVIDIA display or 3D
// controller hwloc finds on PCI (a GPU whose driver is missing is still evidence). Never throws.
[[nodiscard]] TopologyReport read_topology(const std::vector<GpuAddress>& gpus);

// The NICs closest to a GPU in the I/O tree: those whose ancestor chain shares the longest
// prefix with the GPU's (same PCIe switch beats same root port beats same package...). Chains
// list object ids from the root down. Pure, so the rule is tested without hwloc.
[[nodiscard]] std::vector<std::string> nearest_by_ancestry(
    const std::vector<std::uintptr_t>& gpu_chain,
    const std::vector<std::pair<std::string, std::vector<std::uintptr_t>>>& nics);

// The node record's `affinity` array; null when no topology is available.
[[nodiscard]] Json affinity_json(const TopologyReport& report);

}  // namespace commcert
