#include <algorithm>
#include <hwloc.h>

#include <fmt/format.h>

#include "health/pci_address.hpp"
#include "health/topology.hpp"

namespace commcert {
namespace {

// Owns a loaded topology. hwloc honours HWLOC_XMLFILE, which tests use to load a fixture.
class Topology {
 public:
  Topology() {
    if (hwloc_topology_init(&topology_) != 0) return;
    // Linux's own component reads PCI from sysfs. The libpciaccess plugin only repeats that (and
    // leaks memory on every load); the OpenCL and OpenGL plugins add nothing we read and the
    // latter may try to reach a display server.
    for (const char* redundant : {"pci", "opencl", "gl"}) {
      hwloc_topology_set_components(topology_, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, redundant);
    }
    // Keep the PCI devices and OS devices that matter (GPUs, NICs) and the bridges above them.
    hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    loaded_ = hwloc_topology_load(topology_) == 0;
  }
  ~Topology() {
    if (topology_) hwloc_topology_destroy(topology_);
  }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  [[nodiscard]] bool loaded() const { return loaded_; }
  [[nodiscard]] hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
  bool loaded_ = false;
};

std::vector<std::uintptr_t> ancestry(hwloc_obj_t object) {
  std::vector<std::uintptr_t> chain;
  for (hwloc_obj_t o = object; o; o = o->parent)
    chain.push_back(reinterpret_cast<std::uintptr_t>(o));
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::string bus_id_of(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func);
}

// The one NUMA node local to an I/O object, or nullopt when its locality spans several (or the
// topology has no NUMA information).
std::optional<int> numa_node_of(hwloc_topology_t topology, hwloc_obj_t object) {
  const hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology, object);
  if (!local || !local->nodeset) return std::nullopt;
  std::optional<int> found;
  int count = 0;
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr); node;
       node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    if (node->nodeset && hwloc_bitmap_isincluded(node->nodeset, local->nodeset)) {
      found = static_cast<int>(node->os_index);
      ++count;
    }
  }
  if (count != 1) return std::nullopt;
  return found;
}

bool is_nvidia_gpu(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  return a.vendor_id == 0x10de && (a.class_id >> 8) == 0x03;  // display / 3D controller
}

}  // namespace

TopologyReport read_topology(const std::vector<GpuAddress>& gpus) {
  TopologyReport report;
  report.source = "hwloc " HWLOC_VERSION;
  Topology topology;
  if (!topology.loaded()) {
    report.unavailable_reason = "hwloc could not load this machine's topology";
    return report;
  }
  report.available = true;
  const hwloc_topology_t t = topology.get();

  std::vector<std::pair<std::string, std::vector<std::uintptr_t>>> nics;
  for (hwloc_obj_t os = hwloc_get_next_osdev(t, nullptr); os; os = hwloc_get_next_osdev(t, os)) {
    if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && os->name) {
      nics.emplace_back(os->name, ancestry(os->parent ? os->parent : os));
    }
  }

  std::vector<GpuAddress> targets = gpus;
  if (targets.empty()) {
    for (hwloc_obj_t pci = hwloc_get_next_pcidev(t, nullptr); pci;
         pci = hwloc_get_next_pcidev(t, pci)) {
      if (is_nvidia_gpu(pci)) targets.push_back({std::nullopt, bus_id_of(pci)});
    }
  }
  for (const auto& target : targets) {
    GpuLocality locality;
    locality.gpu = target.index;
    locality.pci_bus_id = normalize_pci_bus_id(target.pci_bus_id).value_or(target.pci_bus_id);
    const hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(t, locality.pci_bus_id.c_str());
    if (pci) {
      locality.numa_node = numa_node_of(t, pci);
      locality.nearest_ib_devices = nearest_by_ancestry(ancestry(pci), nics);
    }
    report.gpus.push_back(std::move(locality));
  }
  return report;
}

}  // namespace commcert
