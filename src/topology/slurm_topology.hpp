#pragma once

#include <filesystem>
#include <string_view>

#include "topology/hostlist.hpp"
#include "topology/topology.hpp"

namespace commcert {

// Reads Slurm's topology.conf for the tree plugin, and the output of `scontrol show topology`,
// through one parser (docs/topology.md):
//
//   SwitchName=leaf1 Nodes=gpu[001-032]            # a leaf and its hosts
//   SwitchName=spine1 Switches=leaf[1-4] LinkSpeed=200
//   SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=gpu[001-128] Switches=leaf[1-4]   (scontrol)
//
// Keys are case-insensitive, as Slurm takes them; `#` starts a comment; a value may be quoted.
// Level= is informational. A switch with both Switches= and Nodes= (as scontrol prints every
// switch above the leaves) takes its children from Switches=, and its Nodes= must list exactly
// the hosts under them.
//
// Throws UsageError "ORIGIN:LINE: ..." for an unknown key, a line that does not begin with
// SwitchName=, a switch defined twice, a host under two leaves, a Switches= entry that no line
// defines, a cycle of switches, a malformed hostlist or an invalid name; "ORIGIN: ..." for a
// text without any switch, or hostlists that expand to more than `name_limit` names in all. The
// fuzz target passes a smaller limit: a million names is a legal file that takes about a second
// here and longer than its timeout under sanitizers and coverage.
[[nodiscard]] Topology parse_slurm_topology(std::string_view text, std::string_view origin,
                                            std::size_t name_limit = kMaxHostlistNames);

// parse_slurm_topology of a file of at most kMaxTopologyFileBytes.
[[nodiscard]] Topology read_slurm_topology(const std::filesystem::path& path);

}  // namespace commcert
