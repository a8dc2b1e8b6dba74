#include "cli/links_verbs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "health/topology.hpp"
#include "health/verbs_probe.hpp"
#include "links/link_schedule.hpp"
#include "links/verbs_window.hpp"

namespace commcert {
namespace {

// This process's rail on its node, or -1.
int my_rail(const StageSession& session, const std::vector<std::string>& nics) {
  const RankIdentity& me = session.ranks()[static_cast<std::size_t>(session.first_rank())];
  const auto local_ranks = std::count_if(session.ranks().begin(), session.ranks().end(),
                                         [&](const RankIdentity& r) { return r.node == me.node; });
  const TopologyReport topology = read_topology({});
  std::vector<std::vector<std::string>> nearest;
  if (topology.available) {
    for (const GpuLocality& gpu : topology.gpus)
      nearest.push_back(gpu.nearest_ib_devices);
  }
  const std::vector<int> rails =
      verbs_rails_for_node(std::move(nearest), nics, static_cast<int>(local_ranks));
  const auto index = static_cast<std::size_t>(me.local_rank);
  return index < rails.size() ? rails[index] : -1;
}

}  // namespace

VerbsSetup set_up_verbs(StageSession& session, const LinksSettings& s) {
  VerbsSetup setup;
  const VerbsProbe probe = probe_verbs();
  int rail = -1;
  if (!probe.built) {
    setup.problem = "this build has no libibverbs (configured without verbs)";
  } else if (probe.devices.empty()) {
    setup.problem = fmt::format("no RDMA device{}", probe.error.empty() ? "" : ": " + probe.error);
  } else {
    std::vector<std::string> nics = probe.devices;
    std::sort(nics.begin(), nics.end(), natural_less);
    rail = my_rail(session, nics);
    if (rail >= 0) {
      VerbsTransportOptions options;
      options.device = nics[static_cast<std::size_t>(rail)];
      options.port = s.ib_port;
      options.gid_index = s.gid_index;
      options.memory = s.memory;
      options.gpu = session.ranks()[static_cast<std::size_t>(session.first_rank())].local_rank;
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
