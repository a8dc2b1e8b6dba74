#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// One spelling of a PCI address for every source: CUDA says "0000:3B:00.0", NVML
// "00000000:3B:00.0", sysfs and hwloc "0000:3b:00.0". Records use the sysfs form so a validator
// can join burn, membw and health records on it. Returns nullopt for text that is no address.
[[nodiscard]] std::optional<std::string> normalize_pci_bus_id(std::string_view text);

// The first line of a sysfs attribute file without trailing whitespace; nullopt when unreadable.
[[nodiscard]] std::optional<std::string> read_first_line(const std::filesystem::path& path);

// The NUMA node sysfs gives a PCI device (<sysfs>/bus/pci/devices/<bdf>/numa_node); nullopt
// when the file is missing or says -1 (no NUMA information, e.g. a single-node machine).
[[nodiscard]] std::optional<int> pci_numa_node(const std::filesystem::path& sysfs_root,
                                               std::string_view bus_id);

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; throws std::invalid_argument on malformed text.
[[nodiscard]] std::vector<int> parse_cpu_list(std::string_view text);

// CPUs of a NUMA node (<sysfs>/devices/system/node/node<N>/cpulist); empty when unknown.
[[nodiscard]] std::vector<int> numa_node_cpus(const std::filesystem::path& sysfs_root, int node);

}  // namespace commcert
