#include "topology/topology.hpp"

#include <algorithm>
#include <deque>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/printable.hpp"

namespace commcert {
namespace {

// Switch indexes by name; a second declaration of a name is refused where it is written.
std::map<std::string, std::size_t, std::less<>> index_switches(
    const std::vector<SwitchDeclaration>& declarations) {
  std::map<std::string, std::size_t, std::less<>> index;
  for (std::size_t i = 0; i < declarations.size(); ++i) {
    const auto [found, added] = index.emplace(declarations[i].name, i);
    if (!added) {
      throw UsageError(fmt::format("{}: switch '{}' is defined twice (first at {})",
                                   declarations[i].origin, printable(declarations[i].name),
                                   declarations[found->second].origin));
    }
  }
  return index;
}

std::size_t declared_switch(const std::map<std::string, std::size_t, std::less<>>& index,
                            std::string_view name, std::string_view origin) {
  const auto found = index.find(name);
  if (found == index.end()) {
    throw UsageError(fmt::format("{}: switch '{}' is not defined", origin, printable(name)));
  }
  return found->second;
}

// The distinct neighbours of every switch in one direction, by index.
struct Adjacency {
  std::vector<std::set<std::size_t>> parents;
  std::vector<std::set<std::size_t>> children;
  // The first link from each parent to each child, for naming where a cycle is written.
  std::map<std::pair<std::size_t, std::size_t>, std::string> origin_of_link;
};

Adjacency link_switches(const std::map<std::string, std::size_t, std::less<>>& index,
                        const std::vector<SwitchLink>& links) {
  Adjacency adjacency;
  adjacency.parents.resize(index.size());
  adjacency.children.resize(index.size());
  for (const SwitchLink& link : links) {
    const std::size_t child = declared_switch(index, link.child, link.origin);
    const std::size_t parent = declared_switch(index, link.parent, link.origin);
    adjacency.parents[child].insert(parent);
    adjacency.children[parent].insert(child);
    adjacency.origin_of_link.emplace(std::pair{parent, child}, link.origin);
  }
  return adjacency;
}

// Some switches are their own descendants: one cycle among them, found by following child links
// between such switches (each has a child that is one of them) until a switch repeats.
[[noreturn]] void throw_cycle(const Adjacency& adjacency, const std::vector<bool>& placed,
                              const std::vector<SwitchDeclaration>& declarations) {
  std::size_t current =
      static_cast<std::size_t>(std::find(placed.begin(), placed.end(), false) - placed.begin());
  std::vector<std::size_t> walk;
  std::vector<std::size_t> position_in_walk(placed.size(), SIZE_MAX);
  while (position_in_walk[current] == SIZE_MAX) {
    position_in_walk[current] = walk.size();
    walk.push_back(current);
    for (std::size_t child : adjacency.children[current]) {
      if (!placed[child]) {
        current = child;
        break;
      }
    }
  }
  const std::vector<std::size_t> cycle(walk.begin() + position_in_walk[current], walk.end());
  std::string names;
  for (std::size_t member : cycle)
    names += printable(declarations[member].name) + " -> ";
  names += printable(declarations[cycle.front()].name);
  const std::size_t next = cycle.size() > 1 ? cycle[1] : cycle[0];
  throw UsageError(fmt::format("{}: switches form a cycle: {} (each one above the next)",
                               adjacency.origin_of_link.at({cycle.front(), next}), names));
}

// Slurm's levels (0 for a switch without child switches, else one above its highest child) and
// an order of the switches in which every switch comes after all of its children.
struct Levels {
  std::vector<int> level;
  std::vector<std::size_t> children_first;
};

Levels order_by_level(const Adjacency& adjacency,
                      const std::vector<SwitchDeclaration>& declarations) {
  const std::size_t count = declarations.size();
  Levels levels{std::vector<int>(count, 0), {}};
  std::vector<std::size_t> children_left(count);
  std::deque<std::size_t> ready;
  for (std::size_t i = 0; i < count; ++i) {
    children_left[i] = adjacency.children[i].size();
    if (children_left[i] == 0) ready.push_back(i);
  }
  std::vector<bool> placed(count, false);
  while (!ready.empty()) {
    const std::size_t current = ready.front();
    ready.pop_front();
    placed[current] = true;
    levels.children_first.push_back(current);
    for (std::size_t parent : adjacency.parents[current]) {
      levels.level[parent] = std::max(levels.level[parent], levels.level[current] + 1);
      if (--children_left[parent] == 0) ready.push_back(parent);
    }
  }
  if (levels.children_first.size() != count) throw_cycle(adjacency, placed, declarations);
  return levels;
}

std::vector<std::string> names_of(const std::set<std::size_t>& indexes,
                                  const std::vector<SwitchDeclaration>& declarations) {
  std::vector<std::string> names;
  names.reserve(indexes.size());
  for (std::size_t i : indexes)
    names.push_back(declarations[i].name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

Topology build_topology(TopologyParts parts) {
  Topology topology;
  topology.index_ = index_switches(parts.switches);
  const Adjacency links = link_switches(topology.index_, parts.links);
  const Levels order = order_by_level(links, parts.switches);
  for (std::size_t i = 0; i < parts.switches.size(); ++i) {
    Switch& added = topology.switches_.emplace_back();
    added.name = parts.switches[i].name;
    added.level = order.level[i];
    added.parents = names_of(links.parents[i], parts.switches);
    added.children = names_of(links.children[i], parts.switches);
    added.link_speed = parts.switches[i].link_speed;
    added.origin = parts.switches[i].origin;
    topology.parents_.emplace_back(links.parents[i].begin(), links.parents[i].end());
  }
  topology.by_level_descending_.assign(order.children_first.rbegin(), order.children_first.rend());
  std::vector<std::set<std::string, std::less<>>> hosts_on(parts.switches.size());
  for (auto& [node, attachment] : parts.attachments) {
    const std::size_t leaf = declared_switch(topology.index_, attachment.leaf, attachment.origin);
    if (!links.children[leaf].empty()) {
      throw UsageError(
          fmt::format("{}: host '{}' is attached to switch '{}', which has child "
                      "switches: hosts attach to leaves",
                      attachment.origin, printable(node), printable(attachment.leaf)));
    }
    if (hosts_on[leaf].insert(node).second) topology.switches_[leaf].nodes.push_back(node);
    topology.attachments_[node].push_back(std::move(attachment));
  }
  topology.links_ = std::move(parts.links);
  topology.lateral_links_ = std::move(parts.lateral_links);
  return topology;
}

const Switch* Topology::find_switch(std::string_view name) const {
  const auto found = index_.find(name);
  return found == index_.end() ? nullptr : &switches_[found->second];
}

std::vector<std::string> Topology::node_names() const {
  std::vector<std::string> names;
  names.reserve(attachments_.size());
  for (const auto& [node, attachments] : attachments_)
    names.push_back(node);
  return names;
}

const std::vector<NodeAttachment>& Topology::attachments(std::string_view node) const {
  static const std::vector<NodeAttachment> kNone;
  const auto found = attachments_.find(node);
  return found == attachments_.end() ? kNone : found->second;
}

std::vector<std::string> Topology::leaves_of(std::string_view node) const {
  std::vector<std::string> leaves;
  for (const NodeAttachment& attachment : attachments(node))
    leaves.push_back(attachment.leaf);
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  return leaves;
}

std::optional<std::string> Topology::leaf_of(std::string_view node) const {
  std::vector<std::string> leaves = leaves_of(node);
  if (leaves.size() != 1) return std::nullopt;
  return std::move(leaves.front());
}

std::size_t Topology::index_of(std::string_view name) const {
  const auto found = index_.find(name);
  if (found == index_.end()) {
    throw std::invalid_argument(fmt::format("no switch named '{}'", printable(name)));
  }
  return found->second;
}

std::vector<int> Topology::hops_up(std::size_t start) const {
  std::vector<int> hops(switches_.size(), -1);
  hops[start] = 0;
  std::deque<std::size_t> frontier{start};
  while (!frontier.empty()) {
    const std::size_t current = frontier.front();
    frontier.pop_front();
    for (std::size_t parent : parents_[current]) {
      if (hops[parent] >= 0) continue;
      hops[parent] = hops[current] + 1;
      frontier.push_back(parent);
    }
  }
  return hops;
}

std::vector<int> Topology::hops_via_turn(const std::vector<int>& up_from_target) const {
  // Every switch after its parents: a switch's route is its own turn or one hop up to a
  // parent's route, whichever is shorter.
  std::vector<int> hops = up_from_target;
  for (std::size_t current : by_level_descending_) {
    for (std::size_t parent : parents_[current]) {
      if (hops[parent] < 0) continue;
      if (hops[current] < 0 || hops[parent] + 1 < hops[current]) hops[current] = hops[parent] + 1;
    }
  }
  return hops;
}

std::optional<LeafPath> Topology::path_between(std::string_view from, std::string_view to) const {
  const std::vector<int> up_from = hops_up(index_of(from));
  const std::vector<int> up_to = hops_up(index_of(to));
  int length = -1;
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    if (up_from[i] < 0 || up_to[i] < 0) continue;
    const int through = up_from[i] + up_to[i];
    if (length < 0 || through < length) length = through;
  }
  if (length < 0) return std::nullopt;

  // A switch is on a shortest route when its hops from one end plus its fewest hops on to the
  // other end make the route's length; its place is its distance from `from`.
  const std::vector<int> on_to_to = hops_via_turn(up_to);
  const std::vector<int> on_to_from = hops_via_turn(up_from);
  std::vector<std::set<std::string>> hops(static_cast<std::size_t>(length) + 1);
  std::set<std::string> lowest_common;
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    const std::string& name = switches_[i].name;
    if (up_from[i] >= 0 && on_to_to[i] >= 0 && up_from[i] + on_to_to[i] == length) {
      hops[static_cast<std::size_t>(up_from[i])].insert(name);
    }
    if (up_to[i] >= 0 && on_to_from[i] >= 0 && up_to[i] + on_to_from[i] == length) {
      hops[static_cast<std::size_t>(length - up_to[i])].insert(name);
    }
    if (up_from[i] >= 0 && up_to[i] >= 0 && up_from[i] + up_to[i] == length) {
      lowest_common.insert(name);
    }
  }
  LeafPath path;
  for (const std::set<std::string>& hop : hops)
    path.hops.emplace_back(hop.begin(), hop.end());
  path.lowest_common.assign(lowest_common.begin(), lowest_common.end());
  return path;
}

}  // namespace commcert
