#include "validate/localization.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>

namespace commcert {

// ---- Attribution from pairwise results --------------------------------------------------------

namespace {

struct PartnerTally {
  int partners = 0;
  int failed = 0;
  std::vector<std::string> failed_with;
};

std::map<std::string, PartnerTally> tally(const std::vector<PairOutcome>& outcomes) {
  std::map<std::string, PartnerTally> tallies;
  for (const auto& pair : outcomes) {
    for (const auto& [self, other] : {std::pair{pair.a, pair.b}, std::pair{pair.b, pair.a}}) {
      auto& t = tallies[self];
      ++t.partners;
      if (!pair.passed) {
        ++t.failed;
        t.failed_with.push_back(other);
      }
    }
  }
  return tallies;
}

bool is_bad(const PartnerTally& t) {
  return t.failed >= 2 && 2 * t.failed > t.partners;
}

}  // namespace

std::vector<LocalizationFinding> attribute_pair_failures(const std::vector<PairOutcome>& outcomes) {
  std::vector<LocalizationFinding> findings;
  std::set<std::string> bad;
  for (const auto& [node, t] : tally(outcomes)) {
    if (!is_bad(t)) continue;
    findings.push_back({LocalizationKind::kBadNode, node, "", t.failed, t.partners});
    bad.insert(node);
  }
  // Judge the remaining failures without the bad nodes' pairs: a partner of a bad node is not
  // suspect for having failed with it.
  std::vector<PairOutcome> rest;
  for (const auto& pair : outcomes) {
    if (!bad.contains(pair.a) && !bad.contains(pair.b)) rest.push_back(pair);
  }
  const auto tallies = tally(rest);
  std::set<std::string> explained;
  for (const auto& pair : rest) {
    if (pair.passed) continue;
    const auto& ta = tallies.at(pair.a);
    const auto& tb = tallies.at(pair.b);
    // Both ends work with someone else: what fails is the path between them.
    if (ta.failed == 1 && tb.failed == 1 && ta.partners > 1 && tb.partners > 1) {
      findings.push_back({LocalizationKind::kSuspectLink, pair.a, pair.b, 1, ta.partners});
      continue;
    }
    for (const auto& node : {pair.a, pair.b}) {
      if (explained.insert(node).second) {
        const auto& t = tallies.at(node);
        findings.push_back({LocalizationKind::kSuspectNode, node, "", t.failed, t.partners});
      }
    }
  }
  return findings;
}

std::vector<std::pair<std::string, std::string>> second_pass_pairs(
    const std::vector<PairOutcome>& outcomes, const std::vector<LocalizationFinding>& findings) {
  std::vector<std::string> good;
  for (const auto& [node, t] : tally(outcomes)) {
    if (t.failed == 0) good.push_back(node);
  }
  std::vector<std::string> suspects;
  for (const auto& finding : findings) {
    if (finding.kind == LocalizationKind::kSuspectNode) suspects.push_back(finding.node);
    if (finding.kind == LocalizationKind::kSuspectLink) {
      suspects.push_back(finding.node);
      suspects.push_back(finding.other);
    }
  }
  std::vector<std::pair<std::string, std::string>> plan;
  for (std::size_t i = 0; i < suspects.size() && i < good.size(); ++i) {
    plan.emplace_back(suspects[i], good[i]);
  }
  return plan;
}

// ---- Bisection over collective rounds ---------------------------------------------------------

namespace {

using Nodes = std::vector<int>;

std::pair<Nodes, Nodes> halves(const Nodes& nodes) {
  const auto middle = nodes.begin() + static_cast<std::ptrdiff_t>((nodes.size() + 1) / 2);
  return {Nodes(nodes.begin(), middle), Nodes(middle, nodes.end())};
}

Nodes join(const Nodes& a, const Nodes& b) {
  Nodes out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// A search in progress: either a fault somewhere inside `inside`, or a link between `left`
// and `right` (both of which pass on their own).
struct Search {
  enum class Kind { kWithin, kAcross } kind = Kind::kWithin;
  Nodes inside;
  Nodes left;
  Nodes right;
  int across_phase = 0;  // kAcross: 0 tests (L1+R1, L2+R2), 1 tests (L1+R2, L2+R1)
};

// The groups a search wants tested this round, and how to read the answers back.
struct Request {
  std::vector<Nodes> groups;    // as tested (helpers included)
  std::vector<Nodes> members;   // the search's own nodes in each group
  std::vector<Nodes> deferred;  // lone nodes left for a later round (no reference yet)
};

}  // namespace

BisectionResult bisect_faults(int n, const GroupRoundRunner& run_round) {
  if (n < 2) throw std::invalid_argument("bisection needs at least two nodes");
  BisectionResult result;
  Nodes all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    all[static_cast<std::size_t>(i)] = i;

  std::deque<Search> open{{Search::Kind::kWithin, all, {}, {}, 0}};
  // Each verification round either confirms the findings or starts a search for a further fault.
  constexpr int kMaxVerifications = 8;
  int verifications = 0;
  std::vector<int> known_good;
  const auto mark_good = [&](const Nodes& nodes) {
    known_good.insert(known_good.end(), nodes.begin(), nodes.end());
  };

  while (!open.empty()) {
    std::vector<Nodes> round_groups;
    std::vector<std::pair<std::size_t, Request>> requests;  // search index -> its request
    std::size_t next_helper = 0;
    std::deque<Search> waiting;
    for (std::size_t s = 0; s < open.size(); ++s) {
      const Search& search = open[s];
      Request request;
      if (search.kind == Search::Kind::kWithin) {
        // A lone node (inside.size() == 1) is confirmed against a node known to be good.
        const auto [a, b] =
            search.inside.size() == 1 ? std::pair{search.inside, Nodes{}} : halves(search.inside);
        for (const Nodes& half : {a, b}) {
          if (half.empty()) continue;
          if (half.size() >= 2) {
            request.groups.push_back(half);
            request.members.push_back(half);
          } else if (next_helper < known_good.size()) {
            request.groups.push_back({half.front(), known_good[next_helper++]});
            request.members.push_back(half);
          } else {
            request.deferred.push_back(half);  // no reference yet: confirm it in a later round
          }
        }
        if (request.groups.empty()) {
          waiting.push_back(search);
          continue;
        }
      } else {
        const auto [l1, l2] = halves(search.left);
        const auto [r1, r2] = halves(search.right);
        const bool first = search.across_phase == 0;
        for (const auto& [l, r] :
             {std::pair{l1, first ? r1 : r2}, std::pair{l2, first ? r2 : r1}}) {
          if (l.empty() || r.empty()) continue;
          request.groups.push_back(join(l, r));
          request.members.push_back(join(l, r));
        }
      }
      for (const auto& group : request.groups)
        round_groups.push_back(group);
      requests.emplace_back(s, std::move(request));
    }
    if (round_groups.empty()) {
      // Nothing testable: two nodes with no known-good reference to tell them apart.
      for (const auto& search : waiting) {
        result.unresolved.insert(result.unresolved.end(), search.inside.begin(),
                                 search.inside.end());
      }
      break;
    }

    const auto passed = run_round(round_groups);
    ++result.rounds;
    std::size_t answer = 0;
    std::deque<Search> next;
    for (auto& [index, request] : requests) {
      const Search& search = open[index];
      std::vector<bool> ok(request.groups.size());
      for (auto&& flag : ok)
        flag = passed.at(answer++);
      if (search.kind == Search::Kind::kWithin) {
        for (const Nodes& lone : request.deferred)
          next.push_back({Search::Kind::kWithin, lone, {}, {}, 0});
        const bool all_passed = std::all_of(ok.begin(), ok.end(), [](bool p) { return p; });
        if (all_passed && request.members.size() == 2) {
          // Both halves pass on their own: the fault is a link between them.
          next.push_back({Search::Kind::kAcross, {}, request.members[0], request.members[1], 0});
          continue;
        }
        for (std::size_t h = 0; h < ok.size(); ++h) {
          const Nodes& half = request.members[h];
          if (ok[h]) {
            mark_good(half);
          } else if (half.size() == 1) {
            result.bad_nodes.push_back(half.front());
          } else {
            next.push_back({Search::Kind::kWithin, half, {}, {}, 0});
          }
        }
      } else {
        const auto failing = std::find(ok.begin(), ok.end(), false);
        if (failing == ok.end()) {
          if (search.across_phase == 0) {
            Search again = search;
            again.across_phase = 1;
            next.push_back(again);
          }
          continue;  // both phases passed: the fault did not reproduce
        }
        // The failing group is one quarter pair: its left part came from `left`.
        const Nodes& group = request.members[static_cast<std::size_t>(failing - ok.begin())];
        const std::set<int> left_set(search.left.begin(), search.left.end());
        Nodes l;
        Nodes r;
        for (const int node : group)
          (left_set.contains(node) ? l : r).push_back(node);
        if (l.size() == 1 && r.size() == 1) {
          result.bad_links.emplace_back(std::min(l[0], r[0]), std::max(l[0], r[0]));
        } else {
          next.push_back({Search::Kind::kAcross, {}, l, r, 0});
        }
      }
    }
    for (auto& search : waiting)
      next.push_back(std::move(search));
    open = std::move(next);
    if (!open.empty() || verifications >= kMaxVerifications) continue;

    // Every search ended: does the fleet pass without what was found? One fault can hide
    // another (a half failing for its bad node is not searched for a link across the halves).
    std::set<int> excluded(result.bad_nodes.begin(), result.bad_nodes.end());
    for (const auto& [a, b] : result.bad_links)
      excluded.insert(b);
    Nodes rest;
    for (const int node : all) {
      if (!excluded.contains(node)) rest.push_back(node);
    }
    if (rest.size() < 2) break;
    ++verifications;
    ++result.rounds;
    if (!run_round({rest}).at(0)) open.push_back({Search::Kind::kWithin, rest, {}, {}, 0});
  }
  std::sort(result.bad_nodes.begin(), result.bad_nodes.end());
  std::sort(result.bad_links.begin(), result.bad_links.end());
  return result;
}

}  // namespace commcert
