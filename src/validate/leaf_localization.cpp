#include "validate/leaf_localization.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace commcert {
namespace {

using Pair = std::pair<int, int>;

// The circle method over `count` seats: count − 1 matchings for even count, count for odd (each
// with one seat out), every pair in exactly one.
std::vector<std::vector<Pair>> circle_matchings(int count) {
  std::vector<std::vector<Pair>> out;
  if (count < 2) return out;
  const int seats = count % 2 == 0 ? count : count + 1;  // seat `count` sits out
  std::vector<int> ring(static_cast<std::size_t>(seats));
  std::iota(ring.begin(), ring.end(), 0);
  for (int round = 0; round < seats - 1; ++round) {
    std::vector<Pair> matching;
    for (int i = 0; i < seats / 2; ++i) {
      const int a = ring[static_cast<std::size_t>(i)];
      const int b = ring[static_cast<std::size_t>(seats - 1 - i)];
      if (a < count && b < count) matching.emplace_back(std::min(a, b), std::max(a, b));
    }
    out.push_back(std::move(matching));
    std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());
  }
  return out;
}

struct Measured {
  int a = 0;
  int b = 0;
  bool fast = true;
};

class LeafSearch {
 public:
  LeafSearch(const LeafFabric& fabric, const PairRoundRunner& run)
      : fabric_(fabric), run_(run), members_(static_cast<std::size_t>(fabric.leaves)) {
    for (std::size_t node = 0; node < fabric.leaf_of.size(); ++node) {
      const int leaf = fabric.leaf_of[node];
      if (leaf < 0 || leaf >= fabric.leaves) {
        throw std::invalid_argument(
            fmt::format("node {} has leaf {} of {}", node, leaf, fabric.leaves));
      }
      members_[static_cast<std::size_t>(leaf)].push_back(static_cast<int>(node));
    }
  }

  LeafLocalization run() {
    inside_leaves();
    leaf_against_leaf();
    across_slow_leaves();
    name_fabric_fault();
    std::sort(out_.bad_nodes.begin(), out_.bad_nodes.end());
    std::sort(out_.cleared.begin(), out_.cleared.end());
    std::sort(out_.unresolved.begin(), out_.unresolved.end());
    return out_;
  }

 private:
  struct Suspect {
    int node = 0;
    int leaf = 0;
    bool slow_in_first_round = false;  // else the odd node out, not yet measured
    std::set<int> tried;
    int failed = 0;
    bool decided = false;
  };

  std::vector<bool> measure(const std::vector<Pair>& pairs) {
    std::vector<bool> fast = run_(pairs);
    if (fast.size() != pairs.size()) {
      throw std::invalid_argument(
          fmt::format("a round of {} pairs answered {} results", pairs.size(), fast.size()));
    }
    return fast;
  }

  // First inside every leaf: its traffic crosses no uplink, so a slow pair there is one of its
  // two nodes (or their own cables). Each is then measured with known-good leaf mates (nodes of a
  // fast pair), two where the leaf has two: slow with both is a bad node, fast with one clears it.
  void inside_leaves() {
    std::vector<Pair> first;
    std::vector<std::set<int>> good(members_.size());
    std::vector<Suspect> suspects;
    for (std::size_t leaf = 0; leaf < members_.size(); ++leaf) {
      const auto& nodes = members_[leaf];
      for (std::size_t i = 0; i + 1 < nodes.size(); i += 2)
        first.emplace_back(nodes[i], nodes[i + 1]);
      // The odd node out of a leaf with an odd count (a leaf of one node has nobody to measure
      // it with: it stays healthy as far as the leaf can tell).
      if (nodes.size() % 2 == 1 && nodes.size() > 1) {
        suspects.push_back({nodes.back(), static_cast<int>(leaf), false, {}, 0, false});
      }
    }
    if (!first.empty()) {
      const auto fast = measure(first);
      ++out_.node_rounds;
      for (std::size_t i = 0; i < first.size(); ++i) {
        const int leaf = fabric_.leaf_of[static_cast<std::size_t>(first[i].first)];
        if (fast[i]) {
          good[static_cast<std::size_t>(leaf)].insert({first[i].first, first[i].second});
          continue;
        }
        for (const int node : {first[i].first, first[i].second})
          suspects.push_back({node, leaf, true, {}, 0, false});
      }
    }
    while (true) {
      std::vector<Pair> round;
      std::vector<Suspect*> asked;
      std::vector<std::set<int>> busy(members_.size());
      for (auto& s : suspects) {
        if (s.decided) continue;
        const auto& known = good[static_cast<std::size_t>(s.leaf)];
        if (known.empty()) {
          s.decided = true;
          if (s.slow_in_first_round) out_.unresolved.push_back(s.node);
          continue;
        }
        auto& taken = busy[static_cast<std::size_t>(s.leaf)];
        for (const int partner : known) {
          if (s.tried.count(partner) || taken.count(partner)) continue;
          taken.insert(partner);
          s.tried.insert(partner);
          round.emplace_back(s.node, partner);
          asked.push_back(&s);
          break;
        }
      }
      if (round.empty()) break;
      const auto fast = measure(round);
      ++out_.node_rounds;
      for (std::size_t i = 0; i < round.size(); ++i) {
        Suspect& s = *asked[i];
        const std::size_t wanted =
            std::min<std::size_t>(2, good[static_cast<std::size_t>(s.leaf)].size());
        if (fast[i]) {
          s.decided = true;
          if (s.slow_in_first_round) out_.cleared.push_back(s.node);
        } else if (static_cast<std::size_t>(++s.failed) >= wanted) {
          s.decided = true;
          out_.bad_nodes.push_back(s.node);
        }
      }
    }
    const std::set<int> out_of_play(out_.bad_nodes.begin(), out_.bad_nodes.end());
    const std::set<int> unresolved(out_.unresolved.begin(), out_.unresolved.end());
    healthy_.resize(members_.size());
    for (std::size_t leaf = 0; leaf < members_.size(); ++leaf) {
      for (const int node : members_[leaf]) {
        if (!out_of_play.count(node) && !unresolved.count(node)) healthy_[leaf].push_back(node);
      }
    }
  }

  // Then leaf against leaf: one pair of healthy nodes per pair of leaves, the circle method's
  // matchings of the leaves, as many at once as the leaf with the fewest healthy nodes allows
  // (each matching takes one node of every leaf in it).
  void leaf_against_leaf() {
    for (std::size_t leaf = 0; leaf < healthy_.size(); ++leaf) {
      if (!healthy_[leaf].empty()) active_.push_back(static_cast<int>(leaf));
    }
    if (active_.size() < 2) return;
    std::size_t fewest = healthy_[static_cast<std::size_t>(active_.front())].size();
    for (const int leaf : active_)
      fewest = std::min(fewest, healthy_[static_cast<std::size_t>(leaf)].size());
    const auto matchings = circle_matchings(static_cast<int>(active_.size()));
    for (std::size_t start = 0; start < matchings.size(); start += fewest) {
      std::vector<Pair> round;
      for (std::size_t t = 0; t < fewest && start + t < matchings.size(); ++t) {
        for (const auto& [i, j] : matchings[start + t]) {
          const int a = active_[static_cast<std::size_t>(i)];
          const int b = active_[static_cast<std::size_t>(j)];
          // Each leaf's t-th node of the round, rotated by the leaf so the two ends of a pair sit
          // at different places in their leaves (and so under different routes).
          round.emplace_back(node_at(a, (t + static_cast<std::size_t>(a)) % fewest),
                             node_at(b, (t + static_cast<std::size_t>(b)) % fewest));
        }
      }
      record(round, measure(round));
      ++out_.leaf_rounds;
    }
    for (const auto& m : across_) {
      if (m.fast) continue;
      slow_leaf_pairs_.insert(std::minmax(leaf_of(m.a), leaf_of(m.b)));
    }
  }

  // Only where a leaf pair was slow: when the slow leaf pairs share a leaf, every healthy node of
  // it is measured with a node of another leaf, spread over the leaves and their places (so over
  // the routes); else each slow leaf pair is measured once more with other nodes.
  void across_slow_leaves() {
    if (slow_leaf_pairs_.empty()) return;
    std::set<int> common = {slow_leaf_pairs_.begin()->first, slow_leaf_pairs_.begin()->second};
    for (const Pair& pair : slow_leaf_pairs_) {
      std::erase_if(common, [&](int leaf) { return leaf != pair.first && leaf != pair.second; });
    }
    common_ = common;
    std::set<int> used;
    if (!common.empty()) {
      std::vector<int> others;
      for (const int leaf : active_) {
        if (!common.count(leaf)) others.push_back(leaf);
      }
      if (others.empty()) return;
      std::map<int, std::size_t> cursor;
      for (const int leaf : others) {
        cursor[leaf] =
            static_cast<std::size_t>(leaf) % healthy_[static_cast<std::size_t>(leaf)].size();
      }
      std::vector<Pair> round;
      for (const int leaf : common) {
        const auto& nodes = healthy_[static_cast<std::size_t>(leaf)];
        for (std::size_t i = 0; i < nodes.size(); ++i) {
          // The i-th node with a node of the i-th other leaf (after this leaf), at that leaf's
          // next place; a leaf whose nodes are all taken passes to the next.
          for (std::size_t step = 0; step < others.size(); ++step) {
            const int partner_leaf =
                others[(i + static_cast<std::size_t>(leaf) + step) % others.size()];
            const int partner = partner_in(partner_leaf, nodes[i], i, cursor[partner_leaf], used);
            if (partner < 0) continue;
            used.insert(partner);
            round.emplace_back(nodes[i], partner);
            break;
          }
        }
      }
      if (round.empty()) return;
      record(round, measure(round));
      ++out_.narrow_rounds;
      return;
    }
    // No leaf in every slow leaf pair: each slow leaf pair once more, with other nodes, in rounds
    // of disjoint pairs.
    std::vector<Pair> wanted(slow_leaf_pairs_.begin(), slow_leaf_pairs_.end());
    std::size_t pass = 1;
    while (!wanted.empty()) {
      std::vector<Pair> round;
      std::vector<Pair> later;
      std::set<int> busy;
      for (const auto& [a, b] : wanted) {
        const int x = pick(a, pass, busy);
        const int y = pick(b, pass, busy);
        if (x < 0 || y < 0) {
          later.emplace_back(a, b);
          continue;
        }
        busy.insert({x, y});
        round.emplace_back(x, y);
      }
      if (round.empty()) break;
      record(round, measure(round));
      ++out_.narrow_rounds;
      wanted = std::move(later);
      ++pass;
    }
  }

  // A partner for the i-th node `node` of a leaf whose leaf pairs were slow, under `leaf`, not
  // yet `used`: where routes are known, one whose traffic with `node` runs through spine
  // i mod spines both ways, so the pairs of the round try each spine alone (a slow cable then
  // shows as fast pairs through the others); else the leaf's next place from `at`, which then
  // moves on a quarter of the leaf so the places vary. -1 when every node of the leaf is used.
  int partner_in(int leaf, int node, std::size_t i, std::size_t& at,
                 const std::set<int>& used) const {
    const auto& theirs = healthy_[static_cast<std::size_t>(leaf)];
    if (fabric_.route && fabric_.spines > 0) {
      const int spine = static_cast<int>(i % static_cast<std::size_t>(fabric_.spines));
      int one_way = -1;
      for (std::size_t k = 0; k < theirs.size(); ++k) {
        const int b = theirs[(at + k) % theirs.size()];
        if (used.count(b) || fabric_.route(node, b) != spine) continue;
        if (fabric_.route(b, node) == spine) return b;
        if (one_way < 0) one_way = b;
      }
      if (one_way >= 0) return one_way;
    }
    for (std::size_t tries = 0; tries < theirs.size(); ++tries, ++at) {
      const int b = theirs[at % theirs.size()];
      if (used.count(b)) continue;
      at += 1 + theirs.size() / 4;
      return b;
    }
    return -1;
  }

  // A healthy node of `leaf` not busy in this round, away from the one leaf against leaf used.
  int pick(int leaf, std::size_t pass, const std::set<int>& busy) const {
    const auto& nodes = healthy_[static_cast<std::size_t>(leaf)];
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const int node = nodes[(k + pass * 7) % nodes.size()];
      if (!busy.count(node)) return node;
    }
    return -1;
  }

  // The single part of the fabric that every slow pair across crosses and no fast pair does.
  void name_fabric_fault() {
    if (slow_leaf_pairs_.empty()) return;
    std::vector<FabricFault> hypotheses;
    for (const int leaf : active_) {
      hypotheses.push_back({FabricFault::Kind::kLeafUplinks, leaf, -1, 0});
      if (fabric_.route) {
        for (int spine = 0; spine < fabric_.spines; ++spine)
          hypotheses.push_back({FabricFault::Kind::kUplinkPort, leaf, spine, 0});
      }
    }
    if (fabric_.route) {
      for (int spine = 0; spine < fabric_.spines; ++spine)
        hypotheses.push_back({FabricFault::Kind::kSpine, -1, spine, 0});
    }
    std::vector<FabricFault> fitting;
    for (auto& h : hypotheses) {
      if (fits(h)) fitting.push_back(h);
    }
    if (const auto named = one_part(fitting)) {
      out_.fabric.push_back(*named);
      return;
    }
    // Routes unknown: some, not all, paths out of one leaf are slow: a port between it and the
    // spines, which one the routes would tell.
    if (fitting.empty() && !fabric_.route && common_.size() == 1) {
      const int leaf = *common_.begin();
      FabricFault port{FabricFault::Kind::kLeafPort, leaf, -1, 0};
      const FabricFault uplinks{FabricFault::Kind::kLeafUplinks, leaf, -1, 0};
      bool every_slow_crosses = true;
      for (const auto& m : across_) {
        if (m.fast) continue;
        if (!crosses_part(uplinks, m)) every_slow_crosses = false;
        ++port.slow_pairs;
      }
      if (every_slow_crosses && port.slow_pairs >= kMinFabricPairs) {
        out_.fabric.push_back(port);
        return;
      }
    }
    out_.fabric_unexplained = true;
  }

  // Every slow pair across crosses `fault`, no fast one does, and enough slow ones do; counts
  // them into fault.slow_pairs.
  bool fits(FabricFault& fault) const {
    int slow = 0;
    for (const auto& m : across_) {
      if (m.fast == crosses_part(fault, m)) return false;
      if (!m.fast) ++slow;
    }
    fault.slow_pairs = slow;
    return slow >= kMinFabricPairs;
  }

  // What the fitting hypotheses name, when they name one part. A leaf's uplinks and one of its
  // cables both fit where every pair measured out of the leaf crossed that cable: nothing shows
  // the other cables fine, so its uplinks are named (the cable is named only where pairs through
  // its other cables were fast). Two cables of one leaf that fit are one of its ports. Anything
  // else (two leaves, a leaf and a spine) is not one part.
  static std::optional<FabricFault> one_part(const std::vector<FabricFault>& fitting) {
    if (fitting.empty()) return std::nullopt;
    if (fitting.size() == 1) return fitting.front();
    const int leaf = fitting.front().leaf;
    if (leaf < 0) return std::nullopt;
    std::optional<FabricFault> uplinks;
    int slow = 0;
    for (const auto& f : fitting) {
      if (f.leaf != leaf) return std::nullopt;
      if (f.kind == FabricFault::Kind::kLeafUplinks) uplinks = f;
      slow = std::max(slow, f.slow_pairs);
    }
    if (uplinks) return uplinks;
    return FabricFault{FabricFault::Kind::kLeafPort, leaf, -1, slow};
  }

  bool crosses_part(const FabricFault& fault, const Measured& m) const {
    const int la = leaf_of(m.a);
    const int lb = leaf_of(m.b);
    const bool touches = la == fault.leaf || lb == fault.leaf;
    const auto via = [&](int spine) {
      return fabric_.route(m.a, m.b) == spine || fabric_.route(m.b, m.a) == spine;
    };
    switch (fault.kind) {
      case FabricFault::Kind::kLeafUplinks:
      case FabricFault::Kind::kLeafPort:
        return touches;
      case FabricFault::Kind::kUplinkPort:
        return touches && via(fault.spine);
      case FabricFault::Kind::kSpine:
        return via(fault.spine);
    }
    return false;
  }

  void record(const std::vector<Pair>& round, const std::vector<bool>& fast) {
    for (std::size_t i = 0; i < round.size(); ++i)
      across_.push_back({round[i].first, round[i].second, fast[i]});
  }

  int leaf_of(int node) const { return fabric_.leaf_of[static_cast<std::size_t>(node)]; }
  int node_at(int leaf, std::size_t place) const {
    return healthy_[static_cast<std::size_t>(leaf)][place];
  }

  const LeafFabric& fabric_;
  const PairRoundRunner& run_;
  std::vector<std::vector<int>> members_;  // per leaf, in node order
  std::vector<std::vector<int>> healthy_;  // per leaf: neither bad nor unresolved
  std::vector<int> active_;                // leaves with a healthy node
  std::vector<Measured> across_;           // every pair measured across two leaves
  std::set<Pair> slow_leaf_pairs_;
  std::set<int> common_;  // the leaves in every slow leaf pair
  LeafLocalization out_;
};

}  // namespace

LeafLocalization localize_by_leaves(const LeafFabric& fabric, const PairRoundRunner& run_round) {
  return LeafSearch(fabric, run_round).run();
}

int leaf_round_bound(int leaves, int fewest_healthy, int most_suspects, int fewest_known_good) {
  const int matchings = leaves % 2 == 0 ? leaves - 1 : leaves;
  const int healthy = std::max(1, fewest_healthy);
  const int good = std::max(1, fewest_known_good);
  const int inside = 1 + (most_suspects > 0 ? 2 * ((most_suspects + good - 1) / good) : 0);
  return inside + (matchings + healthy - 1) / healthy + 1;
}

std::string describe(const FabricFault& fault, const std::function<std::string(int)>& leaf_name,
                     const std::function<std::string(int)>& spine_name) {
  switch (fault.kind) {
    case FabricFault::Kind::kLeafUplinks:
      return fmt::format("uplinks of {}", leaf_name(fault.leaf));
    case FabricFault::Kind::kUplinkPort:
      return fmt::format("cable {} <-> {}", leaf_name(fault.leaf), spine_name(fault.spine));
    case FabricFault::Kind::kSpine:
      return spine_name(fault.spine);
    case FabricFault::Kind::kLeafPort:
      return fmt::format("a port between {} and the spines", leaf_name(fault.leaf));
  }
  return {};
}

}  // namespace commcert
