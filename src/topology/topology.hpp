#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// The fabric as a tree of switches with hosts on its leaves (docs/topology.md), read from
// Slurm's topology.conf, `scontrol show topology` (slurm_topology.hpp) or ibnetdiscover's output
// (ibnetdiscover.hpp). Names are exact: nothing is trimmed or folded.

// The largest topology file read: ibnetdiscover's output for a fabric of 10,000 hosts with 8
// HCAs each is about 20 MiB (two lines of about 120 bytes per HCA port, one per switch port);
// 64 MiB is three times that and still read in a moment.
inline constexpr std::uint64_t kMaxTopologyFileBytes = std::uint64_t{64} << 20;

// Where a host plugs into the fabric. topology.conf gives one per host; ibnetdiscover one per
// HCA port, and a host's HCAs may sit on different leaves (rail-optimized fabrics).
struct NodeAttachment {
  std::string leaf;
  std::string adapter;           // "mlx5_0 port 1" from ibnetdiscover; empty from topology.conf
  std::optional<int> leaf_port;  // the leaf's port number, when the input says it
  std::string origin;            // "file:line" that says so
};

// A cable (ibnetdiscover: one per cable, parallel cables each listed) or a Switches= entry
// (topology.conf) between a switch and one above it.
struct SwitchLink {
  std::string child;
  std::string parent;
  std::optional<int> child_port, parent_port;  // ibnetdiscover only
  std::string origin;
};

struct Switch {
  std::string name;
  // 0 for a leaf (a switch without child switches), else one above its highest child: Slurm's
  // Level, which `scontrol show topology` prints.
  int level = 0;
  std::vector<std::string> parents;         // distinct, sorted by name
  std::vector<std::string> children;        // child switches, distinct, sorted by name
  std::vector<std::string> nodes;           // hosts attached here (leaves only), as read
  std::optional<std::uint32_t> link_speed;  // topology.conf's LinkSpeed=, a relative figure
  std::string origin;                       // "file:line" of its definition
};

// The switches traffic between two switches may cross under up/down routing: up from `from` to
// the lowest switches above both, then down to `to`. hops[i] is every switch the i-th hop may
// be (sorted by name): one where each switch has one parent, several where the tree offers a
// choice (the spines of a fat tree), because which of them carries a flow is the routing's
// choice, not the topology's. hops.front() is {from}, hops.back() is {to}; from == to is one hop.
struct LeafPath {
  std::vector<std::vector<std::string>> hops;
  std::vector<std::string> lowest_common;  // where the path turns down (sorted by name)
};

// A switch as a reader found it, before build_topology links it up.
struct SwitchDeclaration {
  std::string name;
  std::optional<std::uint32_t> link_speed;
  std::string origin;
};

// What a reader found; build_topology checks it and links it up.
struct TopologyParts {
  std::vector<SwitchDeclaration> switches;
  std::vector<SwitchLink> links;
  std::vector<std::pair<std::string, NodeAttachment>> attachments;  // host name, where
  std::vector<SwitchLink> lateral_links;  // cables the tree has no place for (ibnetdiscover)
};

class Topology {
 public:
  Topology() = default;

  [[nodiscard]] const std::vector<Switch>& switches() const { return switches_; }
  [[nodiscard]] const Switch* find_switch(std::string_view name) const;
  // Every up/down link, in the order read.
  [[nodiscard]] const std::vector<SwitchLink>& links() const { return links_; }
  // Cables between two switches at the same distance from the hosts (two leaves cabled to each
  // other, say): up/down routing does not use them, so they are kept out of the tree, and listed.
  [[nodiscard]] const std::vector<SwitchLink>& lateral_links() const { return lateral_links_; }

  // Every host, sorted by name.
  [[nodiscard]] std::vector<std::string> node_names() const;
  // Where `node` plugs in; empty for a host the topology does not hold.
  [[nodiscard]] const std::vector<NodeAttachment>& attachments(std::string_view node) const;
  // The distinct leaves `node` plugs into, sorted: one in most fabrics, several for a host whose
  // HCAs sit on different leaves, none for a host the topology does not hold.
  [[nodiscard]] std::vector<std::string> leaves_of(std::string_view node) const;
  // The leaf of a host that plugs into exactly one; nullopt for an unknown host and for one on
  // several leaves (ask leaves_of).
  [[nodiscard]] std::optional<std::string> leaf_of(std::string_view node) const;

  // The path between two switches (usually leaves), or nullopt when no switch is above both
  // (two separate trees). Throws std::invalid_argument for a name that is not a switch.
  [[nodiscard]] std::optional<LeafPath> path_between(std::string_view from,
                                                     std::string_view to) const;

 private:
  friend Topology build_topology(TopologyParts parts);

  [[nodiscard]] std::size_t index_of(std::string_view name) const;
  // Hops from `start` up to every switch above it (itself 0); -1 where not above it.
  [[nodiscard]] std::vector<int> hops_up(std::size_t start) const;
  // For every switch, the fewest hops from it up to a switch above `target` and down to it,
  // given hops_up(target); -1 where there is no such route.
  [[nodiscard]] std::vector<int> hops_via_turn(const std::vector<int>& up_from_target) const;

  std::vector<Switch> switches_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::vector<std::vector<std::size_t>> parents_;  // by index, for the path searches
  std::vector<std::size_t> by_level_descending_;
  std::map<std::string, std::vector<NodeAttachment>, std::less<>> attachments_;
  std::vector<SwitchLink> links_;
  std::vector<SwitchLink> lateral_links_;
};

// Checks the parts and links them up: a switch declared twice, a link or attachment naming an
// undeclared switch, hosts attached to a switch with child switches, and a cycle of switches
// are UsageErrors naming the origin ("file:line") that says so.
[[nodiscard]] Topology build_topology(TopologyParts parts);

}  // namespace commcert
