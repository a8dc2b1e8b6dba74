#include "bench/groups.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {

std::string_view name_of(Scope scope) {
  switch (scope) {
    case Scope::kNode:
      return "node";
    case Scope::kPairs:
      return "pairs";
    case Scope::kCluster:
      break;
  }
  return "cluster";
}

Scope parse_scope(std::string_view text, std::string_view flag) {
  if (text == "cluster") return Scope::kCluster;
  if (text == "node") return Scope::kNode;
  if (text == "pairs") return Scope::kPairs;
  throw UsageError(fmt::format("{}: unknown scope '{}' (cluster, node or pairs)", flag, text));
}

std::vector<std::vector<std::pair<int, int>>> round_robin_pairs(int count) {
  // Circle method: fix the first seat, rotate the others one step per round. An odd count gets
  // a phantom seat; whoever faces it has the bye.
  const int seats = count % 2 == 0 ? count : count + 1;
  std::vector<int> circle(static_cast<std::size_t>(seats));
  for (int i = 0; i < seats; ++i)
    circle[static_cast<std::size_t>(i)] = i;
  std::vector<std::vector<std::pair<int, int>>> rounds;
  for (int round = 0; round + 1 < seats; ++round) {
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < seats / 2; ++i) {
      const int a = circle[static_cast<std::size_t>(i)];
      const int b = circle[static_cast<std::size_t>(seats - 1 - i)];
      if (a < count && b < count) pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
    rounds.push_back(std::move(pairs));
    std::rotate(circle.begin() + 1, circle.end() - 1, circle.end());
  }
  return rounds;
}

std::vector<NodePair> parse_pair_list(std::string_view text, std::string_view flag) {
  std::vector<NodePair> pairs;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view entry = text.substr(start, end - start);
    const std::size_t colon = entry.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == entry.size() ||
        entry.find(':', colon + 1) != std::string_view::npos) {
      throw UsageError(fmt::format(
          "{}: '{}' is not a pair of nodes (expected NODE:NODE[,NODE:NODE...])", flag, entry));
    }
    NodePair pair{std::string(entry.substr(0, colon)), std::string(entry.substr(colon + 1))};
    if (pair.first == pair.second) {
      throw UsageError(fmt::format("{}: '{}' pairs a node with itself", flag, entry));
    }
    pairs.push_back(std::move(pair));
    start = end + 1;
  }
  return pairs;
}

namespace {

// Listed pairs into rounds: each pair goes to the first round where neither node is busy yet.
std::vector<std::vector<std::pair<int, int>>> pack_listed_pairs(
    const std::vector<NodePair>& pair_list, const std::vector<std::string>& nodes) {
  const auto index_of = [&](const std::string& node) {
    const auto found = std::find(nodes.begin(), nodes.end(), node);
    if (found == nodes.end()) {
      throw UsageError(fmt::format("--pair-list: no rank runs on node '{}' in this job", node));
    }
    return static_cast<int>(found - nodes.begin());
  };
  std::vector<std::vector<std::pair<int, int>>> rounds;
  std::vector<std::vector<bool>> busy;
  for (const auto& [first, second] : pair_list) {
    const int a = index_of(first);
    const int b = index_of(second);
    std::size_t r = 0;
    while (r < rounds.size() &&
           (busy[r][static_cast<std::size_t>(a)] || busy[r][static_cast<std::size_t>(b)])) {
      ++r;
    }
    if (r == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back(nodes.size(), false);
    }
    rounds[r].emplace_back(std::min(a, b), std::max(a, b));
    busy[r][static_cast<std::size_t>(a)] = busy[r][static_cast<std::size_t>(b)] = true;
  }
  return rounds;
}

}  // namespace

std::vector<GroupRound> plan_rounds(Scope scope, const std::vector<RankIdentity>& ranks,
                                    PairRanks pair_ranks, const std::vector<NodePair>& pair_list) {
  const auto nodes = distinct_nodes(ranks);
  std::map<std::string, std::vector<int>> ranks_of_node;
  for (const auto& rank : ranks)
    ranks_of_node[rank.node].push_back(rank.rank);
  const auto make_round = [&](int round, std::vector<RankGroup> groups) {
    GroupRound out;
    out.round = round;
    out.group_of_rank.assign(ranks.size(), -1);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      std::sort(groups[g].ranks.begin(), groups[g].ranks.end());
      for (const int rank : groups[g].ranks) {
        out.group_of_rank[static_cast<std::size_t>(rank)] = static_cast<int>(g);
      }
    }
    out.groups = std::move(groups);
    return out;
  };

  switch (scope) {
    case Scope::kCluster: {
      RankGroup all{{}, nodes};
      for (const auto& rank : ranks)
        all.ranks.push_back(rank.rank);
      return {make_round(0, {all})};
    }
    case Scope::kNode: {
      std::vector<RankGroup> groups;
      groups.reserve(nodes.size());
      for (const auto& node : nodes)
        groups.push_back({ranks_of_node[node], {node}});
      return {make_round(0, groups)};
    }
    case Scope::kPairs:
      break;
  }
  std::vector<GroupRound> rounds;
  const auto schedule = pair_list.empty() ? round_robin_pairs(static_cast<int>(nodes.size()))
                                          : pack_listed_pairs(pair_list, nodes);
  for (std::size_t r = 0; r < schedule.size(); ++r) {
    std::vector<RankGroup> groups;
    for (const auto& [a, b] : schedule[r]) {
      RankGroup group{{}, {nodes[static_cast<std::size_t>(a)], nodes[static_cast<std::size_t>(b)]}};
      for (const auto& node : group.nodes) {
        const auto& members = ranks_of_node[node];
        if (pair_ranks == PairRanks::kOne) {
          group.ranks.push_back(members.front());
        } else {
          group.ranks.insert(group.ranks.end(), members.begin(), members.end());
        }
      }
      groups.push_back(std::move(group));
    }
    rounds.push_back(make_round(static_cast<int>(r), std::move(groups)));
  }
  return rounds;
}

}  // namespace commcert
