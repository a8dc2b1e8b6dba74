#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace commcert {

// ---- Attribution from pairwise results --------------------------------------------------------

// One pair's verdict from the pairs scope (every pair of nodes measured once, circle method).
struct PairOutcome {
  std::string a;
  std::string b;
  bool passed = true;
};

enum class LocalizationKind {
  kBadNode,      // fails with most of its partners: quarantine it
  kSuspectLink,  // one failing pair whose nodes pass with everyone else: the link between them
  kSuspectNode,  // fails with some partners but not most: re-test against a known-good node
};

struct LocalizationFinding {
  LocalizationKind kind = LocalizationKind::kSuspectNode;
  std::string node;
  std::string other;  // the other end of a suspect link
  int failed_partners = 0;
  int partners = 0;
};

// A node failing with more than half of its partners (and at least two) is bad. A failing pair
// none of whose nodes is bad, where both nodes pass with at least one other partner, is a
// suspect link. Nodes left with failures but no verdict are suspects for a second pass.
[[nodiscard]] std::vector<LocalizationFinding> attribute_pair_failures(
    const std::vector<PairOutcome>& outcomes);

// Second pass (before blaming a suspect): pairs each suspect node, and each end of each suspect
// link, with a node whose pairs all passed, one known-good partner per suspect so the re-tests of
// a round are disjoint. Returns (suspect, known-good) pairs; empty when there is no good node.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> second_pass_pairs(
    const std::vector<PairOutcome>& outcomes, const std::vector<LocalizationFinding>& findings);

// ---- Bisection over collective rounds ---------------------------------------------------------

// Runs one round: a collective in each of the given disjoint groups of nodes, all at once, and
// says which groups passed.
using GroupRoundRunner = std::function<std::vector<bool>(const std::vector<std::vector<int>>&)>;

struct BisectionResult {
  std::vector<int> bad_nodes;
  std::vector<std::pair<int, int>> bad_links;
  std::vector<int> unresolved;  // nodes that could not be told apart (no known-good reference)
  int rounds = 0;
};

// Finds the faults of a set of `n` nodes whose cluster-wide collective failed, by adaptive
// group testing: a group's collective fails when it holds a bad node or both ends of a bad
// link. Each round halves every open search (both halves run at once); a fault that spans the
// halves is chased with two rounds per halving (quadrant pairs). When every search has ended, a
// verification round re-tests all nodes but the ones found (and one end of each link found), and
// a further search starts if it still fails, so one fault cannot hide another. One bad node
// takes at most ceil(log2 n) + 1 rounds, one bad link at most 2 ceil(log2 n), both together at
// most 3 ceil(log2 n) + 2. Independent faults in disjoint parts are searched concurrently.
[[nodiscard]] BisectionResult bisect_faults(int n, const GroupRoundRunner& run_round);

}  // namespace commcert
