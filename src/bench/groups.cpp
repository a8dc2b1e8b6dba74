#include "bench/groups.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {

std::string_view name_of(Scope scope) {
  switch (scope) {
    case Scope::kNode:
      return "node";
    case Scope::kPairs:
      return "pairs";
    case Scope::kGroups:
      return "groups";
    case Scope::kCluster:
      break;
  }
  return "cluster";
}

Scope parse_scope(std::string_view text, std::string_view flag) {
  if (text == "cluster") return Scope::kCluster;
  if (text == "node") return Scope::kNode;
  if (text == "pairs") return Scope::kPairs;
  if (text == "groups") return Scope::kGroups;
  throw UsageError(
      fmt::format("{}: unknown scope '{}' (cluster, node, pairs or groups)", flag, text));
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

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// Splits `text` at any of `separators`, keeping empty pieces (they are errors to report).
std::vector<std::string_view> split_any(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find_first_of(separators, start);
    pieces.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return pieces;
    start = end + 1;
  }
}

}  // namespace

std::vector<std::vector<std::string>> parse_node_groups(std::string_view text,
                                                        std::string_view flag) {
  // Each group with where it was written: "group 2", or "groups.txt:3".
  std::vector<std::pair<std::string, std::string_view>> entries;
  std::string file_text;
  if (text.starts_with('@')) {
    const std::string path(text.substr(1));
    std::ifstream in(path);
    if (!in) throw UsageError(fmt::format("{}: cannot read the group file '{}'", flag, path));
    std::ostringstream all;
    all << in.rdbuf();
    file_text = all.str();
    std::vector<std::pair<int, std::string_view>> lines;
    int number = 0;
    for (std::string_view line : split_any(file_text, "\n")) {
      ++number;
      line = trim(line.substr(0, line.find('#')));
      if (line.empty()) continue;  // blank lines and comments separate nothing
      for (const auto group : split_any(line, ";")) {
        entries.emplace_back(fmt::format("{}:{}", path, number), group);
      }
    }
    if (entries.empty()) throw UsageError(fmt::format("{}: '{}' names no group", flag, path));
  } else {
    int number = 0;
    for (const auto group : split_any(text, ";")) {
      entries.emplace_back(fmt::format("group {}", ++number), group);
    }
  }
  std::vector<std::vector<std::string>> groups;
  std::map<std::string, std::string> placed;  // node -> where its group was written
  for (const auto& [where, entry] : entries) {
    if (trim(entry).empty()) throw UsageError(fmt::format("{}: {} is empty", flag, where));
    std::vector<std::string> members;
    for (const auto piece : split_any(entry, ",")) {
      if (trim(piece).empty()) {
        throw UsageError(fmt::format("{}: {} has an empty node name in '{}'", flag, where, entry));
      }
      for (const auto node : split_any(trim(piece), " \t")) {
        if (node.empty()) continue;  // a run of blanks
        const auto [it, fresh] = placed.try_emplace(std::string(node), where);
        if (!fresh) {
          throw UsageError(
              fmt::format("{}: node '{}' is in {} and in {}: groups of a round must be disjoint",
                          flag, node, it->second, where));
        }
        members.emplace_back(node);
      }
    }
    groups.push_back(std::move(members));
  }
  return groups;
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

// A round of `groups`, each group's ranks sorted, and the group of each of the job's ranks.
GroupRound round_of(int round, std::vector<RankGroup> groups, std::size_t rank_count) {
  GroupRound out;
  out.round = round;
  out.group_of_rank.assign(rank_count, -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::sort(groups[g].ranks.begin(), groups[g].ranks.end());
    for (const int rank : groups[g].ranks) {
      out.group_of_rank[static_cast<std::size_t>(rank)] = static_cast<int>(g);
    }
  }
  out.groups = std::move(groups);
  return out;
}

// --groups: every rank of each named node in its node's group.
std::vector<RankGroup> named_groups(const NodeGroups& node_groups,
                                    std::map<std::string, std::vector<int>>& ranks_of_node) {
  std::vector<RankGroup> groups;
  for (const auto& members : node_groups.groups) {
    RankGroup group{{}, {}};
    for (const auto& node : members) {
      const auto found = ranks_of_node.find(node);
      if (found == ranks_of_node.end()) {
        throw UsageError(fmt::format("--groups: no rank runs on node '{}' in this job", node));
      }
      group.ranks.insert(group.ranks.end(), found->second.begin(), found->second.end());
    }
    // Node identities in first-rank order, as the other scopes record them.
    std::vector<std::pair<int, std::string>> by_rank;
    by_rank.reserve(members.size());
    for (const auto& node : members)
      by_rank.emplace_back(ranks_of_node[node].front(), node);
    std::sort(by_rank.begin(), by_rank.end());
    for (auto& [rank, node] : by_rank)
      group.nodes.push_back(std::move(node));
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace

std::vector<GroupRound> plan_rounds(Scope scope, const std::vector<RankIdentity>& ranks,
                                    PairRanks pair_ranks, const std::vector<NodePair>& pair_list,
                                    const NodeGroups& node_groups) {
  const auto nodes = distinct_nodes(ranks);
  std::map<std::string, std::vector<int>> ranks_of_node;
  for (const auto& rank : ranks)
    ranks_of_node[rank.node].push_back(rank.rank);
  const auto make_round = [&](int round, std::vector<RankGroup> groups) {
    return round_of(round, std::move(groups), ranks.size());
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
    case Scope::kGroups: {
      return {make_round(node_groups.round, named_groups(node_groups, ranks_of_node))};
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
