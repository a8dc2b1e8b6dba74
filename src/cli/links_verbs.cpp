#include "cli/links_verbs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bench/device_assignment.hpp"
#include "bench/gpu_devices.hpp"
#include "comm/gpu_runtime.hpp"
#include "core/errors.hpp"
#include "health/topology.hpp"
#include "health/verbs_probe.hpp"
#include "links/link_schedule.hpp"
#include "links/verbs_window.hpp"

namespace commcert {
namespace {

// The GPU this process drives, as every GPU stage assigns it (one per process); none without one.
struct OwnGpu {
  std::optional<int> cuda_device;
  std::string pci_bus_id;  // normalized; empty when unknown
};

OwnGpu own_gpu(StageSession& session) {
  OwnGpu own;
  const GpuRuntimeInfo runtime = probe_gpu_runtime();
  if (runtime.device_count <= 0) return own;
  const DeviceAssignment assignment = assign_devices_in_pci_order(
      runtime.device_count, session.group().local_index(), session.group().local_count(), 1);
  if (!assignment.error.empty() || assignment.devices.empty()) return own;
  own.cuda_device = assignment.devices.front();
  try {
    own.pci_bus_id = describe_gpus({*own.cuda_device}).front().identity.pci_bus_id;
  } catch (const std::exception&) {
    // The NIC is then chosen by position, as without a topology.
  }
  return own;
}

// This process's rail on its node, or -1. Each local rank's NICs are those nearest the GPU it
// drives, found by PCI address: every process's address is gathered first.
int my_rail(const StageSession& session, const std::vector<std::string>& nics,
            const std::vector<std::string>& addresses) {
  const RankIdentity& me = session.ranks()[static_cast<std::size_t>(session.first_rank())];
  std::vector<std::string> by_local_rank;
  for (const RankIdentity& rank : session.ranks()) {
    if (rank.node != me.node || rank.local_rank < 0) continue;
    const auto index = static_cast<std::size_t>(rank.local_rank);
    if (by_local_rank.size() <= index) by_local_rank.resize(index + 1);
    by_local_rank[index] = addresses[static_cast<std::size_t>(rank.process)];
  }
  const TopologyReport topology = read_topology({});
  std::vector<std::pair<std::string, std::vector<std::string>>> topology_gpus;
  if (topology.available) {
    for (const GpuLocality& located : topology.gpus)
      topology_gpus.emplace_back(located.pci_bus_id, located.nearest_ib_devices);
  }
  const std::vector<int> rails =
      verbs_rails_for_node(nearest_nics_by_address(topology_gpus, by_local_rank), nics,
                           static_cast<int>(by_local_rank.size()));
  const auto index = static_cast<std::size_t>(me.local_rank);
  return index < rails.size() ? rails[index] : -1;
}

}  // namespace

VerbsSetup set_up_verbs(StageSession& session, const LinksSettings& s) {
  VerbsSetup setup;
  const VerbsProbe probe = probe_verbs();
  // Every process takes part, with or without an RDMA device of its own.
  const OwnGpu gpu = own_gpu(session);
  const std::vector<std::string> gpu_addresses =
      session.all_gather("links: GPU addresses of the verbs transport", gpu.pci_bus_id);
  int rail = -1;
  if (!probe.built) {
    setup.problem = "this build has no libibverbs (configured without verbs)";
  } else if (probe.devices.empty()) {
    setup.problem = fmt::format("no RDMA device{}", probe.error.empty() ? "" : ": " + probe.error);
  } else {
    std::vector<std::string> nics = probe.devices;
    // Through a lambda: another natural_less overload in scope (unity batches put several files
    // in one translation unit) must not make the name ambiguous.
    std::sort(nics.begin(), nics.end(),
              [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    rail = my_rail(session, nics, gpu_addresses);
    if (rail >= 0 && s.memory == "gpu" && !gpu.cuda_device) {
      setup.problem = "--mem gpu: this process has no GPU";
      rail = -1;
    } else if (rail >= 0) {
      VerbsTransportOptions options;
      options.device = nics[static_cast<std::size_t>(rail)];
      options.port = s.ib_port;
      options.gid_index = s.gid_index;
      options.memory = s.memory;
      options.gpu = gpu.cuda_device.value_or(0);
      const std::uint64_t largest = *std::max_element(s.sizes.begin(), s.sizes.end());
      options.buffer_bytes = verbs_buffer_bytes(largest, s.window, s.latency_bytes);
      options.window = s.window;
      options.timeout_s = s.timeout_s;
      try {
        setup.transport = make_verbs_link_transport(options);
      } catch (const RuntimeFailure& e) {
        setup.problem = e.what();
        rail = -1;
      }
    }
  }
  const std::vector<std::string> rails =
      session.all_gather("links: rails of the verbs transport", std::to_string(rail));
  setup.rail_of_rank.assign(session.ranks().size(), -1);
  for (std::size_t r = 0; r < session.ranks().size(); ++r) {
    setup.rail_of_rank[r] = std::stoi(rails[static_cast<std::size_t>(session.ranks()[r].process)]);
  }
  if (std::all_of(setup.rail_of_rank.begin(), setup.rail_of_rank.end(),
                  [](int r) { return r < 0; })) {
    setup.unavailable =
        setup.problem.empty() ? "no process of the job has an RDMA rail to test" : setup.problem;
  }
  return setup;
}

}  // namespace commcert
