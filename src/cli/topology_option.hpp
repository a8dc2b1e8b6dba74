#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "topology/topology.hpp"
#include "topology/topology_source.hpp"
#include "validate/verdict.hpp"

namespace commcert {

// `--topology FILE` on `certify` and `run` (docs/cli.md): the fabric's topology, Slurm's
// topology.conf, `scontrol show topology` output or ibnetdiscover output, told apart by content.
// With it a suspect switch path is named by its switch (docs/localization.md).
CLI::Option* add_topology_option(CLI::App& app, std::optional<std::string>& path);

// Reads --topology FILE before anything runs; nothing without one. A file that cannot be read or
// is malformed is a UsageError naming FILE:LINE (exit 2).
[[nodiscard]] std::optional<Topology> read_topology_option(const std::optional<std::string>& path);

// Without a topology (no --topology) in a Slurm job (SLURM_JOB_ID set): takes `scontrol show
// topology`'s, or, where that gives none, adds one note (`topology.unavailable`) saying why and
// judging goes on without. With one, or outside a Slurm job, changes nothing.
void complete_topology_from_slurm(std::optional<Topology>& topology, std::vector<InputNote>& notes,
                                  const TopologyCommandRunner& run = run_process);

}  // namespace commcert
