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
// says which groups passed. An empty answer means the round has not been measured yet: the
// bisection stops there and says which groups it needs next (BisectionResult::pending), so a
// caller can measure them and replay the search (`commcert run` and the validator do).
using GroupRoundRunner = std::function<std::vector<bool>(const std::vector<std::vector<int>>&)>;

struct BisectionOptions {
  // When both halves of a failing set pass on their own, the fault lies between them (a link).
  // True: chase it, two rounds per halving of both sides. False: stop there and report the two
  // halves (BisectionResult::spans): on a real fabric a collective's algorithm may never send
  // between the two nodes of a bad link, so `commcert run` hands a link to the pairs scope.
  bool chase_links = true;
};

// One group of a round and whether its collective passed.
struct GroupOutcome {
  std::vector<int> nodes;
  bool passed = true;
};

struct BisectionResult {
  std::vector<int> bad_nodes;  // failed in the search and again with another known-good node
  std::vector<std::pair<int, int>> bad_links;
  // A candidate that failed with one known-good node and passed with another: noise, not blamed.
  std::vector<int> cleared;
  std::vector<int> unresolved;  // nodes that could not be told apart (no known-good reference)
  // chase_links false: failing sets whose two halves pass on their own (left, right).
  std::vector<std::pair<std::vector<int>, std::vector<int>>> spans;
  // Per bad node, the known-good nodes it failed with (the search's and the confirmation's).
  std::vector<std::pair<int, std::vector<int>>> failed_with;
  std::vector<std::vector<GroupOutcome>> history;  // every round measured, in order
  std::vector<std::vector<int>> pending;           // the next round to measure; empty: finished
  bool unexplained = false;  // the last verification still failed and no search was left
  int rounds = 0;

  [[nodiscard]] bool finished() const { return pending.empty(); }
  // Finished, every fault found confirmed, the rest verified healthy, nothing left open.
  [[nodiscard]] bool conclusive() const {
    return finished() && !unexplained && unresolved.empty() && spans.empty() && cleared.empty() &&
           (!bad_nodes.empty() || !bad_links.empty());
  }
};

// Finds the faults of a set of `n` nodes whose cluster-wide collective failed, by adaptive
// group testing: a group's collective fails when it holds a bad node or both ends of a bad
// link. Each round halves every open search (all halves run at once); a fault that spans the
// halves is chased with two rounds per halving (quadrant pairs). A lone node is tested with a node
// known to be good (one that passed in a group); if that fails, it is tested once more with
// another known-good node, in the next round, before it is called bad (re-test before blame):
// a node that passes there is cleared as noise. With no known-good node at all the nodes are
// unresolved, never bad. When every search has ended, a verification round re-tests all nodes
// but the ones found (and one end of each link found), and a further search starts if it still
// fails, so one fault cannot hide another. The groups of a round are disjoint. One bad node takes
// at most ceil(log2 n) + 2 rounds, one bad link at most 2 ceil(log2 n), both together at most
// 3 ceil(log2 n) + 2.
[[nodiscard]] BisectionResult bisect_faults(int n, const GroupRoundRunner& run_round,
                                            const BisectionOptions& options = {});

}  // namespace commcert
