#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"
#include "health/gpu_health.hpp"
#include "health/ib_sysfs.hpp"
#include "health/topology.hpp"
#include "health/verbs_probe.hpp"

namespace commcert {

struct HealthOptions {
  std::filesystem::path sysfs_root = "/sys";
  std::string nvml_library = kDefaultNvmlLibrary;
  double watch_seconds = 0;  // how long to listen for Xid events before reporting
};

// Everything `commcert health` learns about one node, without putting load on it.
struct NodeHealth {
  std::string nvml_unavailable_reason;  // non-empty: no NVML here, so no GPU evidence
  std::string gpu_count_error;          // NVML is there but could not count GPUs
  std::optional<unsigned> gpu_count;
  std::vector<GpuHealth> gpus;
  std::filesystem::path sysfs_root;
  IbScan ib;
  TopologyReport topology;
  VerbsProbe verbs;
};

// Reads NVML, sysfs, hwloc and verbs. `on_watch(elapsed, total)` is called while waiting for Xid
// events so the caller can show progress. Never throws for missing hardware or drivers.
[[nodiscard]] NodeHealth collect_node_health(
    const HealthOptions& options, const std::function<void(double, double)>& on_watch = {});

// Every record of a node, in order: gpu components, ib_port components, the node component.
// Components that could not be looked at get one `skipped` record saying why.
[[nodiscard]] std::vector<Json> node_health_records(const NodeHealth& health,
                                                    const RecordOrigin& origin);

}  // namespace commcert
