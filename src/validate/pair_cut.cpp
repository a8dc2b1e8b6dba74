#include "validate/pair_cut.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace commcert {
namespace {

// Union-find over the nodes' positions in `nodes`.
class CutComponents {
 public:
  explicit CutComponents(std::size_t size) : parent_(size) {
    std::iota(parent_.begin(), parent_.end(), std::size_t{0});
  }
  std::size_t root(std::size_t i) {
    while (parent_[i] != i)
      i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void join(std::size_t a, std::size_t b) { parent_[root(a)] = root(b); }

 private:
  std::vector<std::size_t> parent_;
};

std::size_t index_in_cut(const std::vector<NodeId>& nodes, NodeId node) {
  return static_cast<std::size_t>(std::lower_bound(nodes.begin(), nodes.end(), node) -
                                  nodes.begin());
}

}  // namespace

std::vector<std::vector<NodeId>> find_cut(const PairSlowness& pairs) {
  std::set<NodeId> seen;
  for (const auto& [pair, slow] : pairs) {
    seen.insert(pair.first);
    seen.insert(pair.second);
  }
  const std::vector<NodeId> nodes(seen.begin(), seen.end());
  // Every pair measured: a missing one could be the fast path across, or a slow one within.
  if (pairs.size() != nodes.size() * (nodes.size() - 1) / 2) return {};
  CutComponents components(nodes.size());
  for (const auto& [pair, slow] : pairs) {
    if (!slow) components.join(index_in_cut(nodes, pair.first), index_in_cut(nodes, pair.second));
  }
  std::map<std::size_t, std::vector<NodeId>> by_root;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    by_root[components.root(i)].push_back(nodes[i]);
  std::vector<std::vector<NodeId>> groups;
  for (auto& [root, members] : by_root) {
    if (members.size() < kMinCutGroupSize) return {};
    groups.push_back(std::move(members));
  }
  if (groups.size() < 2) return {};
  // Fine among themselves means every pair within a group, not only a chain of fast pairs.
  for (const auto& [pair, slow] : pairs) {
    const bool same = components.root(index_in_cut(nodes, pair.first)) ==
                      components.root(index_in_cut(nodes, pair.second));
    if (same && slow) return {};
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

}  // namespace commcert
