#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace commcert {

// What the fabric's topology (docs/topology.md) says about a suspect switch path: the nodes of a
// run split into groups fine among themselves and slow with every node of every other group
// (find_cut, pair_cut.hpp). A group that is exactly the judged nodes under one switch is cut off
// at that switch's uplinks; groups that are each exactly the judged nodes under a switch are cut
// apart at the level that joins them. Only the judged nodes count: a leaf's other hosts took no
// part in the run and say nothing (docs/localization.md).
struct SwitchPathNaming {
  enum class Kind {
    kUplink,        // one group or more is exactly the judged hosts under a switch (the others
                    // together are one group): that switch's uplinks
    kJoiningLevel,  // every group is exactly the judged hosts under a switch: the switches where
                    // the paths between them turn (the spines of a fat tree)
    kNoMatch,       // no switch explains the groups: they stay named by their nodes
  };
  // The lowest switches whose judged hosts are exactly one group (several where the hosts hang
  // from several, as in a rail-optimized fabric), sorted by name.
  struct Below {
    std::size_t group = 0;  // index into the groups given
    std::vector<std::string> switches;
    std::vector<std::string> parents;  // above them, sorted by name; empty at the top
  };

  Kind kind = Kind::kNoMatch;
  std::vector<Below> below;        // kUplink: the matched groups; kJoiningLevel: every group
  std::vector<std::string> above;  // kJoiningLevel: where the paths between them turn
  // In words, for the reason (localization.suspect_switch's {path}, {pattern}, {target}):
  std::string path;      // "leaf-a <-> spine1, spine2 (uplink of leaf-a)"
  std::string pattern;   // "3 nodes under leaf-a (h1, h2, h3) slow with each of the 3 nodes ..."
  std::string target;    // what to check: "the uplinks of leaf-a and the ports of spine1, ..."
  std::string mismatch;  // kNoMatch: why, for the verdict's note
};

// Names the switch path between `groups` (node names, each group in any order; at least two)
// from `topology`. Pure; never throws for names the topology lacks (that is a kNoMatch).
[[nodiscard]] SwitchPathNaming name_switch_path(
    const Topology& topology, const std::vector<std::vector<std::string>>& groups);

}  // namespace commcert
