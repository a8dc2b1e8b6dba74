#include "health/node_health.hpp"

#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "health/xid_watcher.hpp"

namespace commcert {
namespace {

HealthRecord component_record(const RecordOrigin& origin, RecordStatus status,
                              std::string_view component) {
  HealthRecord record;
  record.origin = origin;
  record.status = status;
  record.component = component;
  return record;
}

Json skipped(const RecordOrigin& origin, std::string_view component, const std::string& reason) {
  HealthRecord record = component_record(origin, RecordStatus::kSkipped, component);
  record.reason = reason;
  return to_json(record);
}

void watch_xids(const NvmlLibrary& nvml, NodeHealth& health,
                const std::vector<nvml::Device>& devices, const HealthOptions& options,
                const std::function<void(double, double)>& on_watch) {
  XidWatcher watcher(nvml, devices);
  const auto start = SteadyClock::now();
  const double total = options.watch_seconds > 0 ? options.watch_seconds : 0.0;
  for (;;) {
    const double elapsed = seconds_between(start, SteadyClock::now());
    const double left = total - elapsed;
    if (on_watch && total > 0) on_watch(elapsed, total);
    if (left <= 0) break;
    watcher.poll(static_cast<unsigned>(std::min(left, 1.0) * 1000));
  }
  watcher.poll(0);
  std::size_t slot = 0;
  for (auto& gpu : health.gpus) {
    if (gpu.unreachable) continue;
    gpu.xid_events = watcher.events(slot);
    if (!gpu.xid_events) gpu.query_errors.push_back({"xid_events", watcher.unwatched_reason(slot)});
    ++slot;
  }
}

}  // namespace

NodeHealth collect_node_health(const HealthOptions& options,
                               const std::function<void(double, double)>& on_watch) {
  NodeHealth health;
  health.sysfs_root = options.sysfs_root;
  auto opened = NvmlLibrary::open(options.nvml_library);
  std::vector<GpuAddress> addresses;
  if (!opened.library) {
    health.nvml_unavailable_reason = opened.unavailable_reason;
  } else {
    const NvmlLibrary& nvml = *opened.library;
    const auto count = nvml.device_count();
    if (!count.ok()) {
      health.gpu_count_error =
          fmt::format("nvmlDeviceGetCount_v2 returned {}", nvml.describe(count.code));
    } else {
      health.gpu_count = *count.value;
      std::vector<nvml::Device> devices;
      for (unsigned index = 0; index < *count.value; ++index) {
        const auto device = nvml.device_by_index(index);
        if (!device.ok()) {
          GpuHealth unreachable;
          unreachable.index = index;
          unreachable.lost = device.gpu_lost();
          unreachable.unreachable = fmt::format("nvmlDeviceGetHandleByIndex_v2({}) returned {}",
                                                index, nvml.describe(device.code));
          health.gpus.push_back(std::move(unreachable));
          continue;
        }
        devices.push_back(*device.value);
        health.gpus.push_back(probe_gpu_health(nvml, *device.value, index));
        if (health.gpus.back().pci_bus_id) {
          addresses.push_back({static_cast<int>(index), *health.gpus.back().pci_bus_id});
        }
      }
      watch_xids(nvml, health, devices, options, on_watch);
    }
  }
  health.ib = read_ib_ports(options.sysfs_root);
  health.topology = read_topology(addresses);
  health.verbs = probe_verbs();
  return health;
}

std::vector<Json> node_health_records(const NodeHealth& health, const RecordOrigin& origin) {
  std::vector<Json> records;
  if (!health.nvml_unavailable_reason.empty()) {
    records.push_back(skipped(origin, HealthRecord::kComponentGpu, health.nvml_unavailable_reason));
  } else if (!health.gpu_count_error.empty()) {
    HealthRecord record =
        component_record(origin, RecordStatus::kError, HealthRecord::kComponentGpu);
    record.reason = health.gpu_count_error;
    records.push_back(to_json(record));
  } else if (health.gpus.empty()) {
    records.push_back(
        skipped(origin, HealthRecord::kComponentGpu, "no GPUs: NVML reports 0 devices"));
  }
  for (const auto& gpu : health.gpus) {
    RecordOrigin gpu_origin = origin;
    gpu_origin.gpu = gpu_identity_of(gpu);
    const bool failed = gpu.lost || gpu.unreachable;
    HealthRecord record = component_record(
        gpu_origin, failed ? RecordStatus::kError : RecordStatus::kOk, HealthRecord::kComponentGpu);
    if (gpu.unreachable) {
      record.reason = *gpu.unreachable;
    } else {
      if (gpu.lost) {
        record.reason = fmt::format(
            "GPU {} is lost: NVML answered 'GPU is lost' (fallen off the bus?)", gpu.index);
      }
      record.fields = static_cast<const GpuHealthFields&>(gpu);
    }
    Json written = to_json(record);
    // A GPU without a handle has no fields, but NVML's "GPU is lost" for it is still said.
    if (gpu.unreachable && gpu.lost) written[GpuHealthFields::kLost] = true;
    records.push_back(std::move(written));
  }

  if (health.ib.ports.empty()) {
    std::string reason = fmt::format("no RDMA devices under {}",
                                     (health.sysfs_root / "class" / "infiniband").string());
    if (!health.verbs.error.empty()) reason += fmt::format(" ({})", health.verbs.error);
    records.push_back(skipped(origin, HealthRecord::kComponentIbPort, reason));
  }
  for (const auto& port : health.ib.ports) {
    HealthRecord record =
        component_record(origin, RecordStatus::kOk, HealthRecord::kComponentIbPort);
    record.fields = port;
    records.push_back(to_json(record));
  }

  HealthRecord node = component_record(origin, RecordStatus::kOk, HealthRecord::kComponentNode);
  NodeHealthFields fields;
  fields.gpu_count = health.gpu_count;
  fields.ib_port_count = health.ib.ports.size();
  fields.affinity = affinity_json(health.topology);
  if (health.topology.available) fields.topology_source = health.topology.source;
  fields.verbs = verbs_json(health.verbs);
  node.fields = std::move(fields);
  records.push_back(to_json(node));
  return records;
}

}  // namespace commcert
