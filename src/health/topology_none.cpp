#include "health/topology.hpp"

namespace commcert {

TopologyReport read_topology(const std::vector<GpuAddress>& /*gpus*/) {
  TopologyReport report;
  report.unavailable_reason = "this build has no hwloc (install libhwloc-dev and reconfigure)";
  return report;
}

}  // namespace commcert
