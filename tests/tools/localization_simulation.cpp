// Prints how many rounds each localization strategy needs to find one bad node and one bad link
// among N nodes (default 1024): all pairs by the circle method (N-1 rounds, every pair once) and
// bisection over disjoint groups. Usage: commcert_localization_simulation [N]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench/groups.hpp"
#include "validate/localization.hpp"

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
  return all_found ? 0 : 1;
}
