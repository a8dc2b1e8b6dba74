#include "cli/topology_option.hpp"

#include <cstdlib>

namespace commcert {

CLI::Option* add_topology_option(CLI::App& app, std::optional<std::string>& path) {
  return app.add_option(
      "--topology", path,
      "The fabric's topology (Slurm topology.conf, `scontrol show topology` output or "
      "ibnetdiscover output): names the switch of a suspect switch path; default in a Slurm job: "
      "`scontrol show topology`");
}

std::optional<Topology> read_topology_option(const std::optional<std::string>& path) {
  if (!path) return std::nullopt;
  return find_topology(path, nullptr).topology;
}

void complete_topology_from_slurm(std::optional<Topology>& topology, std::vector<InputNote>& notes,
                                  const TopologyCommandRunner& run) {
  if (topology) return;
  FoundTopology found = find_topology(std::nullopt, std::getenv("SLURM_JOB_ID"), run);
  if (found.topology) {
    topology = std::move(found.topology);
  } else if (!found.unavailable.empty()) {
    notes.push_back({"topology.unavailable", "", 0, found.unavailable});
  }
}

}  // namespace commcert
