#include "validate/switch_path.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "validate/verdict.hpp"

namespace commcert {
namespace {

using NameSet = std::set<std::string>;

std::string joined(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

// Node names in natural order (node2 before node10), as the verdict lists nodes.
std::vector<std::string> naturally(std::vector<std::string> names) {
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  return names;
}

// The judged hosts under every switch above them: up from each host's leaves through every
// parent (a host on several leaves, as in a rail-optimized fabric, is under each).
std::map<std::string, NameSet> judged_under(const Topology& topology, const NameSet& judged) {
  std::map<std::string, NameSet> under;
  for (const std::string& host : judged) {
    std::vector<std::string> stack = topology.leaves_of(host);
    NameSet seen;
    while (!stack.empty()) {
      std::string name = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(name).second) continue;
      under[name].insert(host);
      if (const Switch* s = topology.find_switch(name)) {
        stack.insert(stack.end(), s->parents.begin(), s->parents.end());
      }
    }
  }
  return under;
}

// The lowest switches whose judged hosts are exactly `group`; empty when none.
std::vector<std::string> lowest_holding(const Topology& topology,
                                        const std::map<std::string, NameSet>& under,
                                        const NameSet& group) {
  std::vector<std::string> found;
  int lowest = 0;
  for (const auto& [name, hosts] : under) {
    if (hosts != group) continue;
    const Switch* s = topology.find_switch(name);
    const int level = s ? s->level : 0;
    if (found.empty() || level < lowest) {
      found.clear();
      lowest = level;
    }
    if (level == lowest) found.push_back(name);
  }
  return found;  // the map is ordered by name, so these are too
}

std::vector<std::string> parents_of(const Topology& topology,
                                    const std::vector<std::string>& switches) {
  NameSet parents;
  for (const auto& name : switches) {
    if (const Switch* s = topology.find_switch(name))
      parents.insert(s->parents.begin(), s->parents.end());
  }
  return {parents.begin(), parents.end()};
}

std::string uplink_path(const SwitchPathNaming::Below& below) {
  const std::string switches = joined(below.switches);
  const char* uplinks = below.switches.size() == 1 ? "uplink" : "uplinks";
  if (below.parents.empty()) {
    return fmt::format("{} ({} of {}; the topology names no switch above it)", switches, uplinks,
                       switches);
  }
  return fmt::format("{} <-> {} ({} of {})", switches, joined(below.parents), uplinks, switches);
}

// Why no switch explains the groups, for the verdict's note.
std::string mismatch_of(const Topology& topology, const std::vector<NameSet>& groups,
                        const std::vector<bool>& matched) {
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (matched[g]) continue;
    NameSet leaves;
    for (const auto& host : groups[g]) {
      for (auto& leaf : topology.leaves_of(host))
        leaves.insert(std::move(leaf));
    }
    std::size_t others = 0;
    for (std::size_t h = 0; h < groups.size(); ++h) {
      if (h == g) continue;
      for (const auto& host : groups[h]) {
        const auto theirs = topology.leaves_of(host);
        if (std::any_of(theirs.begin(), theirs.end(),
                        [&](const std::string& leaf) { return leaves.count(leaf) > 0; })) {
          ++others;
        }
      }
    }
    std::string text =
        fmt::format("no switch holds exactly the judged nodes {{{}}}: they hang from {}",
                    joined(naturally({groups[g].begin(), groups[g].end()})),
                    joined({leaves.begin(), leaves.end()}));
    if (others > 0) {
      text += fmt::format(", which hold {} judged node(s) of the other group(s) too", others);
    }
    return text;
  }
  return "the groups' switches are not joined by any switch above them";
}

// Every group is one switch's: the fault is where their paths meet. Fills `out` (a mismatch
// when no switch joins two of them).
void name_joining_level(const Topology& topology, const std::vector<NameSet>& groups,
                        SwitchPathNaming& out) {
  NameSet above;
  for (std::size_t i = 0; i < out.below.size(); ++i) {
    for (std::size_t j = i + 1; j < out.below.size(); ++j) {
      const auto path =
          topology.path_between(out.below[i].switches.front(), out.below[j].switches.front());
      if (!path) {
        out.mismatch = fmt::format("no switch of the topology joins {} and {}",
                                   joined(out.below[i].switches), joined(out.below[j].switches));
        out.below.clear();
        return;
      }
      above.insert(path->lowest_common.begin(), path->lowest_common.end());
    }
  }
  out.kind = SwitchPathNaming::Kind::kJoiningLevel;
  out.above.assign(above.begin(), above.end());
  std::vector<std::string> belows;
  std::vector<std::string> counts;
  for (const auto& below : out.below) {
    belows.push_back(joined(below.switches));
    counts.push_back(fmt::format("{} ({})", joined(below.switches), groups[below.group].size()));
  }
  out.path = belows.size() == 2
                 ? fmt::format("{} <-> {} <-> {} (the level joining {} and {})", belows[0],
                               joined(out.above), belows[1], belows[0], belows[1])
                 : fmt::format("{} <-> {} (the level joining {})", joined(belows),
                               joined(out.above), joined(belows));
  out.pattern = fmt::format(
      "the nodes under each of {} slow with every node under the others, fine with each other",
      joined(counts));
  out.target = fmt::format("{} and their ports facing {}, and the uplinks of those switches",
                           joined(out.above), joined(belows));
}

// The matched groups are cut off at their switches' uplinks; the rest is one group.
void name_uplinks(const std::vector<NameSet>& groups, std::size_t judged, SwitchPathNaming& out) {
  out.kind = SwitchPathNaming::Kind::kUplink;
  std::vector<std::string> paths;
  NameSet switches;
  NameSet parents;
  for (const auto& below : out.below) {
    paths.push_back(uplink_path(below));
    switches.insert(below.switches.begin(), below.switches.end());
    parents.insert(below.parents.begin(), below.parents.end());
  }
  out.path = fmt::format("{}", fmt::join(paths, "; "));
  const std::vector<std::string> all_switches(switches.begin(), switches.end());
  const std::vector<std::string> all_parents(parents.begin(), parents.end());
  if (out.below.size() == 1) {
    const auto& below = out.below.front();
    const NameSet& group = groups[below.group];
    const char* it = below.switches.size() == 1 ? "it" : "them";
    out.pattern = fmt::format(
        "{} nodes under {} ({}) slow with each of the {} nodes outside {}, fine with each other",
        group.size(), joined(below.switches), joined(naturally({group.begin(), group.end()})),
        judged - group.size(), it, it);
  } else {
    std::vector<std::string> counts;
    for (const auto& below : out.below) {
      counts.push_back(fmt::format("{} ({})", joined(below.switches), groups[below.group].size()));
    }
    out.pattern = fmt::format(
        "the nodes under {} slow with every node outside their switch, fine with each other",
        joined(counts));
  }
  const char* facing = all_switches.size() == 1 ? "it" : "them";
  out.target = all_parents.empty() ? fmt::format("the uplinks of {}", joined(all_switches))
                                   : fmt::format("the uplinks of {} and the ports of {} facing {}",
                                                 joined(all_switches), joined(all_parents), facing);
}

}  // namespace

SwitchPathNaming name_switch_path(const Topology& topology,
                                  const std::vector<std::vector<std::string>>& group_names) {
  SwitchPathNaming out;
  std::vector<NameSet> groups;
  NameSet judged;
  for (const auto& names : group_names) {
    groups.emplace_back(names.begin(), names.end());
    judged.insert(names.begin(), names.end());
  }
  std::vector<std::string> unknown;
  for (const auto& host : judged) {
    if (topology.leaves_of(host).empty()) unknown.push_back(host);
  }
  if (!unknown.empty()) {
    out.mismatch = fmt::format("the topology holds no host named {}", joined(naturally(unknown)));
    return out;
  }

  const auto under = judged_under(topology, judged);
  std::vector<bool> matched(groups.size(), false);
  std::size_t unmatched = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<std::string> switches = lowest_holding(topology, under, groups[g]);
    if (switches.empty()) {
      ++unmatched;
      continue;
    }
    matched[g] = true;
    SwitchPathNaming::Below below;
    below.group = g;
    below.parents = parents_of(topology, switches);
    below.switches = std::move(switches);
    out.below.push_back(std::move(below));
  }

  if (unmatched == 0 && groups.size() >= 2) {
    name_joining_level(topology, groups, out);
  } else if (!out.below.empty() && unmatched <= 1) {
    name_uplinks(groups, judged.size(), out);
  } else {
    out.below.clear();
    out.mismatch = mismatch_of(topology, groups, matched);
  }
  return out;
}

}  // namespace commcert
