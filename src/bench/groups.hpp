#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/rank_identity.hpp"

namespace commcert {

// Which ranks run a collective together.
//   cluster: every rank in one communicator;
//   node:    one communicator per node (NVLink/PCIe inside a node);
//   pairs:   node pairs, in N-1 rounds by the circle method (all pairs of a round at once, a bye
//            when N is odd), so every pair of nodes is measured exactly once;
//   groups:  disjoint groups of nodes named by the caller (`sweep --groups`), all at once, every
//            rank of a node in its node's group; nodes in no group sit the round out
//            (bisection, docs/localization.md).
enum class Scope { kCluster, kNode, kPairs, kGroups };

[[nodiscard]] std::string_view name_of(Scope scope);
[[nodiscard]] Scope parse_scope(std::string_view text, std::string_view flag);

// Which ranks of a node take part in a pair: the first rank of each node, or all of them.
enum class PairRanks { kOne, kAll };

// Two node identities measured together (`sweep --pair-list a:b`).
using NodePair = std::pair<std::string, std::string>;

// "a:b,c:d" -> {a, b}, {c, d}. Throws UsageError naming `flag`.
[[nodiscard]] std::vector<NodePair> parse_pair_list(std::string_view text, std::string_view flag);

// Disjoint groups of node identities measured at once (`sweep --groups`), and the round number
// their records carry (a caller that runs one round per sweep numbers them).
struct NodeGroups {
  std::vector<std::vector<std::string>> groups;
  int round = 0;
};

// "a,b;c,d,e" -> {a, b}, {c, d, e}; "@FILE" reads the groups from a file, one per line (or ';'),
// nodes separated by ',' or blanks, '#' starts a comment. An empty group, an empty node name or
// a node in two groups is a UsageError naming `flag` (and the file and line).
[[nodiscard]] std::vector<std::vector<std::string>> parse_node_groups(std::string_view text,
                                                                      std::string_view flag);

// One collective communicator of a round.
struct RankGroup {
  std::vector<int> ranks;          // global ranks, ascending; group rank i is ranks[i]
  std::vector<std::string> nodes;  // node identities, in first-rank order
};

// The groups that run at the same time. Ranks in no group sit the round out (a bye, or
// PairRanks::kOne for the node's other ranks).
struct GroupRound {
  int round = 0;
  std::vector<RankGroup> groups;
  std::vector<int> group_of_rank;  // indexed by global rank; -1 when idle this round
};

// Rounds for `scope`, identical on every process (a pure function of the rank map). With a
// `pair_list` the pairs scope measures only those pairs, packed into as few rounds of disjoint
// pairs as a greedy pass finds; the groups scope is one round of `node_groups`. A node the job
// does not have is a UsageError.
[[nodiscard]] std::vector<GroupRound> plan_rounds(Scope scope,
                                                  const std::vector<RankIdentity>& ranks,
                                                  PairRanks pair_ranks = PairRanks::kOne,
                                                  const std::vector<NodePair>& pair_list = {},
                                                  const NodeGroups& node_groups = {});

// The circle-method schedule: for `count` items, rounds of disjoint pairs (indices) covering
// every pair exactly once; count-1 rounds for even counts, count rounds (one bye each) for odd.
[[nodiscard]] std::vector<std::vector<std::pair<int, int>>> round_robin_pairs(int count);

}  // namespace commcert
