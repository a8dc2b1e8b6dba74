#include "health/topology.hpp"

#include <algorithm>

namespace commcert {

std::vector<std::string> nearest_by_ancestry(
    const std::vector<std::uintptr_t>& gpu_chain,
    const std::vector<std::pair<std::string, std::vector<std::uintptr_t>>>& nics) {
  std::vector<std::pair<std::size_t, std::string>> shared;
  std::size_t best = 0;
  for (const auto& [name, chain] : nics) {
    std::size_t common = 0;
    while (common < gpu_chain.size() && common < chain.size() &&
           gpu_chain[common] == chain[common]) {
      ++common;
    }
    best = std::max(best, common);
    shared.emplace_back(common, name);
  }
  std::vector<std::string> nearest;
  for (const auto& [common, name] : shared) {
    if (common == best && best > 0) nearest.push_back(name);
  }
  return nearest;
}

Json affinity_json(const TopologyReport& report) {
  if (!report.available) return nullptr;
  Json out = Json::array();
  for (const auto& gpu : report.gpus) {
    out.push_back({{"gpu", gpu.gpu ? Json(*gpu.gpu) : Json(nullptr)},
                   {"pci_bus_id", gpu.pci_bus_id},
                   {"numa_node", gpu.numa_node ? Json(*gpu.numa_node) : Json(nullptr)},
                   {"nearest_ib_devices", gpu.nearest_ib_devices}});
  }
  return out;
}

}  // namespace commcert
