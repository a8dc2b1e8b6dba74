#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/health.hpp"

namespace commcert {

// One InfiniBand/RoCE port as sysfs shows it (Documentation/ABI/stable/sysfs-class-infiniband).
// One port as sysfs shows it: the health record's own fields (records/health.hpp), so the probe
// fills what is written without a copy. Every readable counter is kept raw: error counters are
// narrow and saturate instead of wrapping, and the data counters count 4-byte words, so the
// validator reads them as deltas.
using IbPort = IbPortHealthFields;

struct IbScan {
  bool class_present = false;  // <sysfs>/class/infiniband exists (an RDMA-capable kernel)
  std::vector<IbPort> ports;   // by device name (mlx5_2 before mlx5_10), then port number
};

// Reads <sysfs_root>/class/infiniband/*/ports/*. Never throws for missing or unreadable files:
// what cannot be read is absent.
[[nodiscard]] IbScan read_ib_ports(const std::filesystem::path& sysfs_root);

// "4: ACTIVE" -> "ACTIVE"; text without the "N: " prefix is returned trimmed.
[[nodiscard]] std::string ib_state_name(std::string_view text);
// "400 Gb/sec (4X NDR)" -> 400, "2.5 Gb/sec (1X SDR)" -> 2.5; nullopt when unreadable.
[[nodiscard]] std::optional<double> ib_rate_gbps(std::string_view text);

}  // namespace commcert
