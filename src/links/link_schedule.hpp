#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "core/rank_identity.hpp"

namespace commcert {

// Who measures a link with whom, and when (docs/links.md). Nodes meet in the circle-method
// rounds of `sweep --scope pairs` (round_robin_pairs: N-1 rounds for even N, N with a bye for
// odd N, every pair of nodes once); within a meeting, rail r of one node is paired with rail r
// of the other (NIC i of A with NIC i of B), all rails and all pairs of a round at once.

// The two ends of one link test.
struct LinkPair {
  int rail = 0;
  std::array<int, 2> ranks{};  // global ranks; [0] initiates and writes the record
  std::array<std::string, 2> nodes;
};

struct LinkRound {
  int round = 0;
  std::vector<LinkPair> pairs;
  std::vector<int> pair_of_rank;  // by global rank: index in `pairs`, -1 when idle this round
};

// `rail_of_rank[r]`: the rail global rank r drives, -1 for none. A rail that one node of a
// meeting lacks is not measured in that meeting (the validator finds it missing). Throws
// std::invalid_argument when a node holds one rail twice or the sizes differ.
[[nodiscard]] std::vector<LinkRound> plan_link_rounds(const std::vector<RankIdentity>& ranks,
                                                      const std::vector<int>& rail_of_rank);

// One rail per node: the node's lowest rank (the MPI transport has one path between two nodes).
[[nodiscard]] std::vector<int> first_rank_rails(const std::vector<RankIdentity>& ranks);

// Rails by NIC affinity: `nearest_nics[i]` lists the NICs closest to the GPU of a node's i-th
// rank (topology's nearest_by_ancestry), `node_nics` every NIC of the node. Each rank takes the
// first (by name) of its nearest NICs that no lower rank took; its rail is that NIC's position
// in `node_nics` sorted by name (mlx5_2 before mlx5_10), so NIC i of one node meets NIC i of
// another. A rank whose nearest NICs are unknown or all taken gets -1: each NIC is measured once.
[[nodiscard]] std::vector<int> rails_by_affinity(
    const std::vector<std::vector<std::string>>& nearest_nics,
    const std::vector<std::string>& node_nics);

// The rails of one node's `local_ranks` ranks for the verbs transport: rails_by_affinity when the
// topology knows the nearest NICs of any of them (`nearest_nics[i]` for local rank i; shorter or
// empty where unknown), otherwise local rank i drives NIC i in natural name order, as far as
// there are NICs; the rest sit out (-1).
[[nodiscard]] std::vector<int> verbs_rails_for_node(
    std::vector<std::vector<std::string>> nearest_nics, const std::vector<std::string>& node_nics,
    int local_ranks);

// The nearest NICs of each local rank's GPU, found by that GPU's PCI address (as CUDA reports it
// for the device the rank drives, normalized) among the topology's GPUs, given as (address,
// nearest NICs) in the topology's own order. CUDA's device order need not be the PCI order
// (CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES), so position alone can pair a GPU with another GPU's
// NIC. A rank whose address is unknown or not in the topology gets an empty list.
[[nodiscard]] std::vector<std::vector<std::string>> nearest_nics_by_address(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& topology_gpus,
    const std::vector<std::string>& local_rank_gpu_addresses);

// The links a timeout of the links stage is about, each as the nodes its record names (docs/
// links.md): for each rank in `absent` (ranks that did not arrive), the two ends of its link in
// `round`, the round under way (nullptr outside the rounds), or its node alone when it measures
// no link then; with no rank absent, `own` (the link the writing rank was measuring when it
// waited, nullptr for none). Each link once, in the order found; empty when none is known.
[[nodiscard]] std::vector<std::vector<std::string>> links_of_timeout(
    const std::vector<int>& absent, const LinkRound* round, const std::vector<RankIdentity>& ranks,
    const LinkPair* own);

// Device names in natural order: a trailing number compares as a number.
[[nodiscard]] bool natural_less(const std::string& a, const std::string& b);

}  // namespace commcert
