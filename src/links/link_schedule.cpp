#include "links/link_schedule.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "bench/groups.hpp"

namespace commcert {

std::vector<LinkRound> plan_link_rounds(const std::vector<RankIdentity>& ranks,
                                        const std::vector<int>& rail_of_rank) {
  if (rail_of_rank.size() != ranks.size()) {
    throw std::invalid_argument("plan_link_rounds: one rail entry per rank");
  }
  const auto nodes = distinct_nodes(ranks);
  // node -> rail -> rank
  std::map<std::string, std::map<int, int>> rails;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int rail = rail_of_rank[i];
    if (rail < 0) continue;
    auto [it, inserted] = rails[ranks[i].node].emplace(rail, ranks[i].rank);
    if (!inserted) {
      throw std::invalid_argument(
          fmt::format("plan_link_rounds: node {} holds rail {} twice", ranks[i].node, rail));
    }
  }
  std::vector<LinkRound> rounds;
  const auto schedule = round_robin_pairs(static_cast<int>(nodes.size()));
  for (std::size_t r = 0; r < schedule.size(); ++r) {
    LinkRound round;
    round.round = static_cast<int>(r);
    round.pair_of_rank.assign(ranks.size(), -1);
    for (const auto& [a, b] : schedule[r]) {
      const std::string& node_a = nodes[static_cast<std::size_t>(a)];
      const std::string& node_b = nodes[static_cast<std::size_t>(b)];
      const auto& rails_b = rails[node_b];
      for (const auto& [rail, rank_a] : rails[node_a]) {
        const auto other = rails_b.find(rail);
        if (other == rails_b.end()) continue;
        const int index = static_cast<int>(round.pairs.size());
        round.pairs.push_back({rail, {rank_a, other->second}, {node_a, node_b}});
        round.pair_of_rank[static_cast<std::size_t>(rank_a)] = index;
        round.pair_of_rank[static_cast<std::size_t>(other->second)] = index;
      }
    }
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<int> first_rank_rails(const std::vector<RankIdentity>& ranks) {
  std::vector<int> rails(ranks.size(), -1);
  std::map<std::string, int> lowest;
  for (const auto& rank : ranks) {
    auto [it, inserted] = lowest.emplace(rank.node, rank.rank);
    if (!inserted) it->second = std::min(it->second, rank.rank);
  }
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (lowest[ranks[i].node] == ranks[i].rank) rails[i] = 0;
  }
  return rails;
}

std::vector<std::vector<std::string>> links_of_timeout(const std::vector<int>& absent,
                                                       const LinkRound* round,
                                                       const std::vector<RankIdentity>& ranks,
                                                       const LinkPair* own) {
  std::vector<std::vector<std::string>> out;
  const auto add = [&out](std::vector<std::string> nodes) {
    if (std::find(out.begin(), out.end(), nodes) == out.end()) out.push_back(std::move(nodes));
  };
  for (const int rank : absent) {
    if (rank < 0 || static_cast<std::size_t>(rank) >= ranks.size()) continue;
    const int pair = round && static_cast<std::size_t>(rank) < round->pair_of_rank.size()
                         ? round->pair_of_rank[static_cast<std::size_t>(rank)]
                         : -1;
    if (pair >= 0 && static_cast<std::size_t>(pair) < round->pairs.size()) {
      const auto& nodes = round->pairs[static_cast<std::size_t>(pair)].nodes;
      add({nodes[0], nodes[1]});
    } else {
      add({ranks[static_cast<std::size_t>(rank)].node});
    }
  }
  if (absent.empty() && own) add({own->nodes[0], own->nodes[1]});
  return out;
}

bool natural_less(const std::string& a, const std::string& b) {
  const auto split = [](const std::string& text) {
    std::size_t digits = text.size();
    while (digits > 0 && text[digits - 1] >= '0' && text[digits - 1] <= '9')
      --digits;
    const std::string stem = text.substr(0, digits);
    const std::string number = text.substr(digits);
    return std::tuple(stem, number.size(), number);
  };
  return split(a) < split(b);
}

std::vector<int> rails_by_affinity(const std::vector<std::vector<std::string>>& nearest_nics,
                                   const std::vector<std::string>& node_nics) {
  std::vector<std::string> sorted = node_nics;
  std::sort(sorted.begin(), sorted.end(), natural_less);
  const auto position = [&](const std::string& nic) {
    const auto found = std::find(sorted.begin(), sorted.end(), nic);
    return found == sorted.end() ? -1 : static_cast<int>(found - sorted.begin());
  };
  std::vector<int> out;
  std::vector<std::string> taken;
  for (const auto& nearest : nearest_nics) {
    std::vector<std::string> known;
    for (const auto& nic : nearest) {
      if (position(nic) >= 0) known.push_back(nic);
    }
    if (known.empty()) {
      out.push_back(-1);
      continue;
    }
    std::sort(known.begin(), known.end(), natural_less);
    auto free = std::find_if(known.begin(), known.end(), [&](const std::string& nic) {
      return std::find(taken.begin(), taken.end(), nic) == taken.end();
    });
    if (free == known.end()) {
      out.push_back(-1);
      continue;
    }
    taken.push_back(*free);
    out.push_back(position(*free));
  }
  return out;
}

std::vector<std::vector<std::string>> nearest_nics_by_address(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& topology_gpus,
    const std::vector<std::string>& local_rank_gpu_addresses) {
  std::vector<std::vector<std::string>> nearest;
  nearest.reserve(local_rank_gpu_addresses.size());
  for (const std::string& address : local_rank_gpu_addresses) {
    const auto gpu = std::find_if(topology_gpus.begin(), topology_gpus.end(),
                                  [&](const auto& known) { return known.first == address; });
    nearest.push_back(address.empty() || gpu == topology_gpus.end() ? std::vector<std::string>{}
                                                                    : gpu->second);
  }
  return nearest;
}

std::vector<int> verbs_rails_for_node(std::vector<std::vector<std::string>> nearest_nics,
                                      const std::vector<std::string>& node_nics, int local_ranks) {
  nearest_nics.resize(static_cast<std::size_t>(std::max(local_ranks, 0)));
  const bool topology_known = std::any_of(nearest_nics.begin(), nearest_nics.end(),
                                          [](const auto& nearest) { return !nearest.empty(); });
  if (topology_known) return rails_by_affinity(nearest_nics, node_nics);
  std::vector<int> rails;
  rails.reserve(static_cast<std::size_t>(std::max(local_ranks, 0)));
  const int nics = static_cast<int>(node_nics.size());
  for (int i = 0; i < local_ranks; ++i)
    rails.push_back(i < nics ? i : -1);
  return rails;
}

}  // namespace commcert
