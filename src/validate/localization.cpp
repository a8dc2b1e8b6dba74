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
};

std::map<std::string, PartnerTally> tally(const std::vector<PairOutcome>& outcomes) {
  std::map<std::string, PartnerTally> tallies;
  for (const auto& pair : outcomes) {
    for (const auto& node : {pair.a, pair.b}) {
      auto& t = tallies[node];
      ++t.partners;
      if (!pair.passed) ++t.failed;
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

// A search in progress: a fault somewhere inside `inside`; a link between `left` and `right`
// (both of which pass on their own); or a lone node that failed with one known-good node and is
// tested with another before it is blamed.
struct Search {
  enum class Kind { kWithin, kAcross, kConfirm } kind = Kind::kWithin;
  Nodes inside;          // kWithin; kConfirm: the one candidate
  Nodes left;            // kAcross
  Nodes right;           // kAcross
  int across_phase = 0;  // kAcross: 0 tests (L1+R1, L2+R2), 1 tests (L1+R2, L2+R1)
  Nodes tested_with;     // kConfirm: the known-good nodes it already failed with
};

Search within(Nodes nodes) {
  return {Search::Kind::kWithin, std::move(nodes), {}, {}, 0, {}};
}

// The groups a search wants tested this round, and how to read the answers back.
struct Request {
  std::vector<Nodes> groups;    // as tested (helpers included)
  std::vector<Nodes> members;   // the search's own nodes in each group
  std::vector<int> helpers;     // the known-good node added to each group; -1: none
  std::vector<Nodes> deferred;  // lone nodes left for a later round (no reference free yet)
  std::vector<Nodes> lone;      // lone halves still to be given a helper
};

// Known-good nodes, in the order they were found, and the ones taken in the current round.
class Helpers {
 public:
  void add(const Nodes& nodes) {
    for (const int node : nodes) {
      if (known_.insert(node).second) order_.push_back(node);
    }
  }
  void start_round(const std::set<int>& busy) { busy_ = busy; }
  void reserve(int node) { busy_.insert(node); }
  // A free known-good node not in `avoid`; else any free one when `allow_repeat`; else -1.
  int take(const Nodes& avoid, bool allow_repeat) {
    for (const bool repeat : {false, true}) {
      if (repeat && !allow_repeat) break;
      for (const int node : order_) {
        if (busy_.contains(node)) continue;
        if (!repeat && std::find(avoid.begin(), avoid.end(), node) != avoid.end()) continue;
        busy_.insert(node);
        return node;
      }
    }
    return -1;
  }
  [[nodiscard]] bool any_other_than(const Nodes& avoid) const {
    return std::any_of(order_.begin(), order_.end(), [&](int node) {
      return std::find(avoid.begin(), avoid.end(), node) == avoid.end();
    });
  }

 private:
  std::set<int> known_;
  Nodes order_;
  std::set<int> busy_;
};

// One bisection: the searches still open, the known-good nodes found so far, and the result.
class Bisection {
 public:
  Bisection(int n, const GroupRoundRunner& run_round, const BisectionOptions& options)
      : run_round_(run_round), options_(options), all_(static_cast<std::size_t>(n)) {
    for (int i = 0; i < n; ++i)
      all_[static_cast<std::size_t>(i)] = i;
  }

  BisectionResult run() {
    search();
    std::sort(result_.bad_nodes.begin(), result_.bad_nodes.end());
    std::sort(result_.bad_links.begin(), result_.bad_links.end());
    std::sort(result_.cleared.begin(), result_.cleared.end());
    std::sort(result_.unresolved.begin(), result_.unresolved.end());
    std::sort(result_.failed_with.begin(), result_.failed_with.end());
    return result_;
  }

 private:
  // Each verification round either confirms the findings or starts a search for a further fault.
  static constexpr int kMaxVerifications = 8;

  // Rounds until every search ended and the rest of the fleet passes, or a round is not measured
  // yet, or nothing more can be told apart.
  void search() {
    std::deque<Search> open{within(all_)};
    while (!open.empty()) {
      std::vector<Request> requests = plan_round(open);
      std::vector<Nodes> round_groups;
      std::deque<Search> waiting;
      for (std::size_t s = 0; s < open.size(); ++s) {
        if (requests[s].groups.empty()) {
          waiting.push_back(open[s]);
          continue;
        }
        for (const auto& group : requests[s].groups)
          round_groups.push_back(group);
      }
      if (round_groups.empty()) {
        // Nothing testable: nodes with no known-good reference to tell them apart.
        for (const auto& search : waiting) {
          result_.unresolved.insert(result_.unresolved.end(), search.inside.begin(),
                                    search.inside.end());
        }
        return;
      }
      std::vector<bool> passed;
      if (!measure(round_groups, passed)) return;
      std::deque<Search> next = read_answers(open, requests, passed);
      for (auto& search : waiting)
        next.push_back(std::move(search));
      open = std::move(next);
      if (open.empty() && !verify(open)) return;
    }
  }

  // Runs one round; false when it has not been measured yet (the caller stops there).
  bool measure(const std::vector<Nodes>& groups, std::vector<bool>& passed) {
    passed = run_round_(groups);
    if (passed.empty()) {
      result_.pending = groups;
      return false;
    }
    if (passed.size() != groups.size()) {
      throw std::invalid_argument("a round's answer must say for every group whether it passed");
    }
    ++result_.rounds;
    std::vector<GroupOutcome> outcomes;
    outcomes.reserve(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g)
      outcomes.push_back({groups[g], passed[g]});
    result_.history.push_back(std::move(outcomes));
    return true;
  }

  // Searches that halve or pair up quarters come first; lone nodes and confirmations then get a
  // known-good node that no group of this round holds, so the groups stay disjoint.
  std::vector<Request> plan_round(const std::deque<Search>& open) {
    std::vector<Request> requests(open.size());
    std::set<int> busy;
    for (std::size_t s = 0; s < open.size(); ++s) {
      const Search& search = open[s];
      if (search.kind == Search::Kind::kWithin) {
        plan_within(search, requests[s], busy);
      } else if (search.kind == Search::Kind::kAcross) {
        plan_across(search, requests[s], busy);
      } else {
        busy.insert(search.inside.begin(), search.inside.end());
      }
    }
    helpers_.start_round(busy);
    for (std::size_t s = 0; s < open.size(); ++s)
      assign_helpers(open[s], requests[s]);
    return requests;
  }

  static void plan_within(const Search& search, Request& request, std::set<int>& busy) {
    const auto [a, b] =
        search.inside.size() == 1 ? std::pair{search.inside, Nodes{}} : halves(search.inside);
    for (const Nodes& half : {a, b}) {
      if (half.empty()) continue;
      if (half.size() >= 2) {
        request.groups.push_back(half);
        request.members.push_back(half);
        request.helpers.push_back(-1);
      } else {
        request.lone.push_back(half);
      }
      busy.insert(half.begin(), half.end());
    }
  }

  static void plan_across(const Search& search, Request& request, std::set<int>& busy) {
    const auto [l1, l2] = halves(search.left);
    const auto [r1, r2] = halves(search.right);
    const bool first = search.across_phase == 0;
    for (const auto& [l, r] : {std::pair{l1, first ? r1 : r2}, std::pair{l2, first ? r2 : r1}}) {
      if (l.empty() || r.empty()) continue;
      request.groups.push_back(join(l, r));
      request.members.push_back(join(l, r));
      request.helpers.push_back(-1);
      busy.insert(l.begin(), l.end());
      busy.insert(r.begin(), r.end());
    }
  }

  void assign_helpers(const Search& search, Request& request) {
    if (search.kind == Search::Kind::kConfirm) {
      // Another known-good node than the one it failed with, where the run has another.
      const int helper =
          helpers_.take(search.tested_with, !helpers_.any_other_than(search.tested_with));
      if (helper >= 0) {
        request.groups.push_back({search.inside.front(), helper});
        request.members.push_back(search.inside);
        request.helpers.push_back(helper);
      }
      return;
    }
    for (const Nodes& lone : request.lone) {
      const int helper = helpers_.take({}, true);
      if (helper >= 0) {
        request.groups.push_back({lone.front(), helper});
        request.members.push_back(lone);
        request.helpers.push_back(helper);
      } else {
        request.deferred.push_back(lone);  // no reference yet: confirm it in a later round
      }
    }
  }

  // The searches the round's answers lead to (those waiting are added by the caller).
  std::deque<Search> read_answers(const std::deque<Search>& open,
                                  const std::vector<Request>& requests,
                                  const std::vector<bool>& passed) {
    std::size_t answer = 0;
    std::deque<Search> next;
    for (std::size_t s = 0; s < open.size(); ++s) {
      const Search& search = open[s];
      const Request& request = requests[s];
      if (request.groups.empty()) continue;  // waiting: carried over by the caller
      std::vector<bool> ok(request.groups.size());
      for (auto&& flag : ok)
        flag = passed.at(answer++);
      if (search.kind == Search::Kind::kConfirm) {
        read_confirmation(search, request, ok);
      } else if (search.kind == Search::Kind::kWithin) {
        read_within(request, ok, next);
      } else {
        read_across(search, request, ok, next);
      }
    }
    return next;
  }

  void read_confirmation(const Search& search, const Request& request,
                         const std::vector<bool>& ok) {
    const int node = search.inside.front();
    if (ok.front()) {
      result_.cleared.push_back(node);
    } else {
      Nodes partners = search.tested_with;
      partners.push_back(request.helpers.front());
      result_.bad_nodes.push_back(node);
      result_.failed_with.emplace_back(node, std::move(partners));
    }
  }

  void read_within(const Request& request, const std::vector<bool>& ok, std::deque<Search>& next) {
    for (const Nodes& lone : request.deferred)
      next.push_back(within(lone));
    const bool all_passed = std::all_of(ok.begin(), ok.end(), [](bool p) { return p; });
    if (all_passed && request.members.size() == 2) {
      // Both halves pass on their own: the fault is a link between them.
      if (options_.chase_links) {
        next.push_back({Search::Kind::kAcross, {}, request.members[0], request.members[1], 0, {}});
      } else {
        result_.spans.emplace_back(request.members[0], request.members[1]);
      }
      return;
    }
    for (std::size_t h = 0; h < ok.size(); ++h) {
      const Nodes& half = request.members[h];
      if (ok[h]) {
        helpers_.add(half);
      } else if (request.helpers[h] >= 0) {
        // Failed with a known-good node: test it with another before blaming it.
        next.push_back({Search::Kind::kConfirm, half, {}, {}, 0, {request.helpers[h]}});
      } else {
        next.push_back(within(half));
      }
    }
  }

  void read_across(const Search& search, const Request& request, const std::vector<bool>& ok,
                   std::deque<Search>& next) {
    if (std::all_of(ok.begin(), ok.end(), [](bool p) { return p; })) {
      if (search.across_phase == 0) {
        Search again = search;
        again.across_phase = 1;
        next.push_back(again);
      }
      return;  // both phases passed: the fault did not reproduce
    }
    // Each failing group is one quarter pair, its left part from `left`, and each is chased:
    // two links across the same halves are searched side by side (the pairs are disjoint).
    const std::set<int> left_set(search.left.begin(), search.left.end());
    for (std::size_t g = 0; g < ok.size(); ++g) {
      if (ok[g]) continue;
      Nodes l;
      Nodes r;
      for (const int node : request.members[g])
        (left_set.contains(node) ? l : r).push_back(node);
      if (l.size() == 1 && r.size() == 1) {
        result_.bad_links.emplace_back(std::min(l[0], r[0]), std::max(l[0], r[0]));
      } else {
        next.push_back({Search::Kind::kAcross, {}, l, r, 0, {}});
      }
    }
  }

  // Every search ended: does the fleet pass without what was found? One fault can hide another
  // (a half failing for its bad node is not searched for a link across the halves). False when
  // the bisection ends here; else `open` holds the next search, if any.
  bool verify(std::deque<Search>& open) {
    // A fault between halves that are not chased is handed on as it is: verifying the rest
    // would only find it again.
    if (!result_.spans.empty()) return false;
    if (verifications_ >= kMaxVerifications) {
      result_.unexplained = true;
      return false;
    }
    std::set<int> excluded(result_.bad_nodes.begin(), result_.bad_nodes.end());
    excluded.insert(result_.cleared.begin(), result_.cleared.end());
    for (const auto& [a, b] : result_.bad_links)
      excluded.insert(b);
    Nodes rest;
    for (const int node : all_) {
      if (!excluded.contains(node)) rest.push_back(node);
    }
    if (rest.size() < 2) return false;
    ++verifications_;
    std::vector<bool> passed;
    if (!measure({rest}, passed)) return false;
    if (!passed.at(0)) open.push_back(within(rest));
    return true;
  }

  const GroupRoundRunner& run_round_;
  const BisectionOptions& options_;
  Nodes all_;
  BisectionResult result_;
  Helpers helpers_;
  int verifications_ = 0;
};

}  // namespace

BisectionResult bisect_faults(int n, const GroupRoundRunner& run_round,
                              const BisectionOptions& options) {
  if (n < 2) throw std::invalid_argument("bisection needs at least two nodes");
  return Bisection(n, run_round, options).run();
}

}  // namespace commcert
