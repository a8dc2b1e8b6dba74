// Prints how many rounds each localization strategy needs to find one bad node and one bad link
// among N nodes (default 1024): all pairs by the circle method (N-1 rounds, every pair once) and
// bisection over disjoint groups; then, on a fat tree of 32 leaves and 4 spines, a bad leaf
// uplink, a bad spine port and a bad node under a bad leaf, found leaf against leaf first
// (localize_by_leaves) within its bound and with nobody healthy blamed.
// Usage: commcert_localization_simulation [N]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench/groups.hpp"
#include "validate/leaf_localization.hpp"
#include "validate/localization.hpp"
#include "validate/pair_cut.hpp"

namespace {

struct Scenario {
  const char* name;
  std::set<int> bad_nodes;
  std::set<std::pair<int, int>> bad_links;
};

bool passes(const Scenario& s, const std::vector<int>& group) {
  if (group.size() < 2) return true;
  const std::set<int> members(group.begin(), group.end());
  for (const int bad : s.bad_nodes) {
    if (members.contains(bad)) return false;
  }
  for (const auto& [a, b] : s.bad_links) {
    if (members.contains(a) && members.contains(b)) return false;
  }
  return true;
}

// ---- A fat tree: kLeaves leaves of n / kLeaves nodes each, kSpines spines -------------------

constexpr int kLeaves = 32;
constexpr int kSpines = 4;

struct FatTree {
  int nodes = 1024;
  [[nodiscard]] int per_leaf() const { return nodes / kLeaves; }
  [[nodiscard]] int leaf(int node) const { return node / per_leaf(); }
  // InfiniBand's d-mod-k: the spine carrying traffic to a node is its place in its leaf modulo
  // the spines, whoever sends it.
  [[nodiscard]] int route(int, int to) const { return (to % per_leaf()) % kSpines; }
};

// What is broken in the fabric, and what a pair measured across it sees: slow when it touches a
// bad node, leaves or enters a leaf whose uplinks are bad, or runs (either way) over the bad
// cable between a leaf and a spine.
struct FabricScenario {
  const char* name;
  std::set<int> bad_nodes;
  int bad_uplinks_leaf = -1;
  int cable_leaf = -1;
  int cable_spine = -1;
  bool routes_known = true;
  std::vector<commcert::FabricFault> expected;

  [[nodiscard]] bool slow(const FatTree& tree, int a, int b) const {
    if (bad_nodes.count(a) || bad_nodes.count(b)) return true;
    const int la = tree.leaf(a);
    const int lb = tree.leaf(b);
    if (la == lb) return false;
    if (la == bad_uplinks_leaf || lb == bad_uplinks_leaf) return true;
    const bool touches = la == cable_leaf || lb == cable_leaf;
    return touches && (tree.route(a, b) == cable_spine || tree.route(b, a) == cable_spine);
  }
};

std::string leaf_name(int leaf) {
  char text[16];
  std::snprintf(text, sizeof text, "leaf%02d", leaf + 1);
  return text;
}
std::string spine_name(int spine) {
  return "spine" + std::to_string(spine + 1);
}

// What the pairs scope would make of the same fabric: every pair once (N - 1 rounds); a clean
// split of the nodes is a suspect switch path (find_cut), else the nodes slow with most partners
// are bad-node candidates, re-tested against known-good nodes, which for a node under a bad leaf
// sit beyond the same uplinks.
std::string pairs_view(const FatTree& tree, const FabricScenario& scenario) {
  commcert::PairSlowness slowness;
  std::vector<commcert::PairOutcome> outcomes;
  for (const auto& round : commcert::round_robin_pairs(tree.nodes)) {
    for (const auto& [a, b] : round) {
      const bool slow = scenario.slow(tree, a, b);
      slowness.emplace(
          std::minmax(static_cast<commcert::NodeId>(a), static_cast<commcert::NodeId>(b)), slow);
      outcomes.push_back({std::to_string(a), std::to_string(b), !slow});
    }
  }
  const auto cut = commcert::find_cut(slowness);
  if (!cut.empty()) {
    std::string groups;
    for (const auto& group : cut)
      groups += (groups.empty() ? "" : " | ") + std::to_string(group.size()) + " nodes";
    return "a suspect switch path between groups of " + groups;
  }
  int healthy = 0;
  int bad = 0;
  for (const auto& finding : commcert::attribute_pair_failures(outcomes)) {
    if (finding.kind != commcert::LocalizationKind::kBadNode) continue;
    (scenario.bad_nodes.count(std::stoi(finding.node)) ? bad : healthy) += 1;
  }
  return std::to_string(bad) + " bad and " + std::to_string(healthy) +
         " healthy nodes look bad (slow with most partners)";
}

// Leaf against leaf first: every case found, nobody healthy blamed, within the bound.
bool fat_tree(int n) {
  const FatTree tree{n};
  const int per_leaf = tree.per_leaf();
  using commcert::FabricFault;
  using Kind = FabricFault::Kind;
  const int leaf = kLeaves / 4;                     // a leaf in the first half
  const int other = kLeaves * 3 / 5;                // a leaf in the second half
  const int node = leaf * per_leaf + per_leaf / 3;  // a node under `leaf`
  const std::vector<FabricScenario> scenarios = {
      {"healthy fabric", {}, -1, -1, -1, true, {}},
      {"bad leaf uplink", {}, leaf, -1, -1, true, {{Kind::kLeafUplinks, leaf, -1, 0}}},
      {"bad spine port", {}, -1, other, 2, true, {{Kind::kUplinkPort, other, 2, 0}}},
      {"bad spine port (no routes)", {}, -1, other, 2, false, {{Kind::kLeafPort, other, -1, 0}}},
      {"bad node + bad leaf", {node}, leaf, -1, -1, true, {{Kind::kLeafUplinks, leaf, -1, 0}}},
  };
  std::printf(
      "\nFat tree: N = %d under %d leaves of %d nodes and %d spines (routes d-mod-k)\n"
      "leaf-first bound: 1 + 2 ceil(s/g) + ceil(M/c) + 1 rounds, M = L - 1 = %d matchings of the "
      "leaves, c the fewest healthy nodes a leaf has, s the most suspects in a leaf (0 when no "
      "pair inside a leaf is slow), g the fewest known-good nodes such a leaf has\n\n",
      n, kLeaves, per_leaf, kSpines, kLeaves - 1);
  std::printf("%-28s %-10s %7s %6s  %s\n", "scenario", "strategy", "rounds", "bound", "found");
  bool all_found = true;
  for (const auto& scenario : scenarios) {
    commcert::LeafFabric fabric;
    for (int i = 0; i < n; ++i)
      fabric.leaf_of.push_back(tree.leaf(i));
    fabric.leaves = kLeaves;
    fabric.spines = kSpines;
    if (scenario.routes_known) fabric.route = [&](int a, int b) { return tree.route(a, b); };
    bool disjoint = true;
    const auto result =
        commcert::localize_by_leaves(fabric, [&](const std::vector<std::pair<int, int>>& round) {
          std::vector<bool> fast;
          std::set<int> busy;
          for (const auto& [a, b] : round) {
            disjoint = disjoint && busy.insert(a).second && busy.insert(b).second;
            fast.push_back(!scenario.slow(tree, a, b));
          }
          return fast;
        });
    // The bound's figures: a bad node and its partner of the first round are a leaf's suspects,
    // the rest of the leaf's first-round pairs its known-good nodes.
    const bool suspects = !scenario.bad_nodes.empty();
    const int bound =
        commcert::leaf_round_bound(kLeaves, per_leaf - static_cast<int>(scenario.bad_nodes.size()),
                                   suspects ? 2 : 0, suspects ? per_leaf - 2 : per_leaf);
    std::string found;
    for (const int bad : result.bad_nodes)
      found += "node " + std::to_string(bad) + " ";
    for (const auto& fault : result.fabric)
      found += commcert::describe(fault, leaf_name, spine_name) + " ";
    if (result.fabric_unexplained) found += "(slow leaf pairs unexplained) ";
    if (found.empty()) found = "nothing";
    std::printf("%-28s %-10s %7d %6d  %s\n", scenario.name, "leaf-first", result.rounds(), bound,
                found.c_str());
    if (scenario.routes_known) {
      std::printf("%-28s %-10s %7d %6s  %s\n", scenario.name, "pairs", n - 1, "",
                  pairs_view(tree, scenario).c_str());
    }
    std::vector<FabricFault> fabric_found = result.fabric;
    for (auto& fault : fabric_found)
      fault.slow_pairs = 0;
    const std::vector<int> expected_nodes(scenario.bad_nodes.begin(), scenario.bad_nodes.end());
    all_found = all_found && disjoint && result.bad_nodes == expected_nodes &&
                fabric_found == scenario.expected && !result.fabric_unexplained &&
                result.unresolved.empty() && result.rounds() <= bound;
  }
  return all_found;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  if (n < 4) {
    std::fprintf(stderr, "N must be at least 4\n");
    return 2;
  }
  const std::vector<Scenario> scenarios = {
      {"one bad node", {n / 3}, {}},
      {"one bad link", {}, {{n / 5, n - 7}}},
      {"bad node + bad link", {n / 3}, {{n / 5, n - 7}}},
  };
  const int log2n = static_cast<int>(std::ceil(std::log2(n)));
  std::printf(
      "N = %d nodes; bounds: pairs N-1 = %d rounds; bisection 2*ceil(log2 N) = %d rounds per fault "
      "(%d for a node and a link at once)\n\n",
      n, n - 1, 2 * log2n, 3 * log2n + 2);
  std::printf("%-22s %-10s %8s  %s\n", "scenario", "strategy", "rounds", "found");
  bool all_found = true;
  for (const auto& scenario : scenarios) {
    // All pairs, circle method.
    std::vector<commcert::PairOutcome> outcomes;
    const auto rounds = commcert::round_robin_pairs(n);
    for (const auto& round : rounds) {
      for (const auto& [a, b] : round) {
        outcomes.push_back({std::to_string(a), std::to_string(b), passes(scenario, {a, b})});
      }
    }
    std::string found;
    std::set<std::string> pair_nodes;
    std::set<std::pair<std::string, std::string>> pair_links;
    for (const auto& finding : commcert::attribute_pair_failures(outcomes)) {
      switch (finding.kind) {
        case commcert::LocalizationKind::kBadNode:
          found += "node " + finding.node + " ";
          pair_nodes.insert(finding.node);
          break;
        case commcert::LocalizationKind::kSuspectLink:
          found += "link " + finding.node + "-" + finding.other + " ";
          pair_links.insert(std::minmax(finding.node, finding.other));
          break;
        case commcert::LocalizationKind::kSuspectNode:
          found += "suspect " + finding.node + " ";
          break;
      }
    }
    std::printf("%-22s %-10s %8zu  %s\n", scenario.name, "pairs", rounds.size(), found.c_str());

    // Bisection over disjoint groups.
    const auto result =
        commcert::bisect_faults(n, [&](const std::vector<std::vector<int>>& groups) {
          std::vector<bool> passed;
          for (const auto& group : groups)
            passed.push_back(passes(scenario, group));
          return passed;
        });
    found.clear();
    for (const int bad : result.bad_nodes)
      found += "node " + std::to_string(bad) + " ";
    for (const auto& [a, b] : result.bad_links) {
      found += "link " + std::to_string(a) + "-" + std::to_string(b) + " ";
    }
    std::printf("%-22s %-10s %8d  %s\n", scenario.name, "bisection", result.rounds, found.c_str());
    const std::set<int> nodes(result.bad_nodes.begin(), result.bad_nodes.end());
    const std::set<std::pair<int, int>> links(result.bad_links.begin(), result.bad_links.end());
    std::set<std::string> expected_nodes;
    std::set<std::pair<std::string, std::string>> expected_links;
    for (const int bad : scenario.bad_nodes)
      expected_nodes.insert(std::to_string(bad));
    for (const auto& [a, b] : scenario.bad_links) {
      expected_links.insert(std::minmax(std::to_string(a), std::to_string(b)));
    }
    const int bound =
        scenario.bad_nodes.empty() || scenario.bad_links.empty() ? 2 * log2n : 3 * log2n + 2;
    all_found = all_found && pair_nodes == expected_nodes && pair_links == expected_links &&
                static_cast<int>(rounds.size()) <= n - 1 && nodes == scenario.bad_nodes &&
                links == scenario.bad_links && result.rounds <= bound;
  }
  // The fat tree needs whole leaves of at least two nodes.
  if (n % kLeaves == 0 && n / kLeaves >= 4) all_found = fat_tree(n) && all_found;
  return all_found ? 0 : 1;
}
