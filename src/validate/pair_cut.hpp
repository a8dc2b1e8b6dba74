#pragma once

#include <map>
#include <utility>
#include <vector>

#include "validate/evidence.hpp"

namespace commcert {

// A slow switch path (a leaf's uplink, a spine port) slows every pair that crosses it and no pair
// inside a leaf: in the pair matrix the nodes split into groups that are fine among themselves
// and slow with every node of every other group. Such a split is not explained by any node.

// Whether each measured pair (smaller node id first) was slow.
using PairSlowness = std::map<std::pair<NodeId, NodeId>, bool>;

// The groups of such a split, each in ascending node order, ordered by their first node; empty
// when the pairs show none. A split needs every pair of the nodes measured, at least two groups
// and at least kMinCutGroupSize nodes in each: a node alone, slow with everyone, is a bad node
// (or its own cable), which pair localization judges as such.
inline constexpr std::size_t kMinCutGroupSize = 2;
[[nodiscard]] std::vector<std::vector<NodeId>> find_cut(const PairSlowness& pairs);

}  // namespace commcert
