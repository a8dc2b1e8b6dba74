#include "topology/slurm_topology.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "topology/detail/input_lines.hpp"
#include "topology/hostlist.hpp"

namespace commcert {
namespace {

using topology_detail::excerpt;
using topology_detail::line_origin;

enum class Key { kSwitchName, kSwitches, kNodes, kLinkSpeed, kLevel };

struct KnownKey {
  std::string_view name;
  Key key;
};

// Every key of the tree plugin's topology.conf, and Level, which scontrol prints.
constexpr std::array<KnownKey, 5> kKnownKeys{{{"SwitchName", Key::kSwitchName},
                                              {"Switches", Key::kSwitches},
                                              {"Nodes", Key::kNodes},
                                              {"LinkSpeed", Key::kLinkSpeed},
                                              {"Level", Key::kLevel}}};

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

bool is_key_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

struct KeyValue {
  Key key;
  std::string_view name;  // as written
  std::string_view value;
};

// One line of topology.conf or of scontrol's output, as its keys say.
struct SwitchLine {
  std::string name;
  std::optional<std::vector<std::string>> switches;
  std::optional<std::vector<std::string>> nodes;
  std::optional<std::uint32_t> link_speed;
  std::string origin;
};

// Splits a line into Key=Value pairs with Slurm's syntax (src/common/parse_config.c): a key of
// letters, digits, '_' and '.', blanks allowed around '=', a value in double quotes or up to the
// next blank.
class PairReader {
 public:
  PairReader(std::string_view line, const std::string& origin) : line_(line), origin_(origin) {}

  std::vector<KeyValue> pairs() {
    std::vector<KeyValue> pairs;
    while (skip_blanks()) {
      const std::string_view name = key_name();
      const std::string_view text = value(name);
      const Key key = known_key(name);
      for (const KeyValue& earlier : pairs) {
        if (earlier.key == key) fail(fmt::format("{}= is given twice", excerpt(name)));
      }
      pairs.push_back({key, name, text});
    }
    return pairs;
  }

 private:
  [[noreturn]] void fail(std::string_view why) const {
    throw UsageError(fmt::format("{}: {}", origin_, why));
  }

  // Skips blanks; false at the end of the line.
  bool skip_blanks() {
    while (at_ < line_.size() && is_blank(line_[at_]))
      ++at_;
    return at_ < line_.size();
  }

  std::string_view key_name() {
    const std::size_t start = at_;
    while (at_ < line_.size() && is_key_character(line_[at_]))
      ++at_;
    if (at_ == start) fail(fmt::format("expected Key=Value, got '{}'", excerpt(line_.substr(at_))));
    return line_.substr(start, at_ - start);
  }

  Key known_key(std::string_view name) const {
    for (const KnownKey& known : kKnownKeys) {
      if (same_ignoring_case(name, known.name)) return known.key;
    }
    fail(fmt::format("unknown key '{}' (known: SwitchName, Switches, Nodes, LinkSpeed, Level)",
                     excerpt(name)));
  }

  std::string_view value(std::string_view name) {
    skip_blanks();
    if (at_ == line_.size() || line_[at_] != '=') {
      fail(fmt::format("expected '=' after {}", excerpt(name)));
    }
    ++at_;
    skip_blanks();
    if (at_ < line_.size() && line_[at_] == '"') return quoted_value(name);
    const std::size_t start = at_;
    while (at_ < line_.size() && !is_blank(line_[at_]))
      ++at_;
    if (at_ == start) fail(fmt::format("{}= has no value", excerpt(name)));
    return line_.substr(start, at_ - start);
  }

  std::string_view quoted_value(std::string_view name) {
    const std::size_t close = line_.find('"', at_ + 1);
    if (close == std::string_view::npos)
      fail(fmt::format("{}= has no closing '\"'", excerpt(name)));
    const std::string_view inside = line_.substr(at_ + 1, close - at_ - 1);
    at_ = close + 1;
    return inside;
  }

  std::string_view line_;
  const std::string& origin_;
  std::size_t at_ = 0;
};

std::uint32_t whole_number(std::string_view name, std::string_view text,
                           const std::string& origin) {
  std::uint32_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) {
    throw UsageError(fmt::format("{}: {}= must be a whole number below 2^32, got '{}'", origin,
                                 excerpt(name), excerpt(text)));
  }
  return value;
}

// The most work checking Nodes= beside Switches= may take (hosts_under), about a second.
constexpr std::size_t kMaxCheckSteps = std::size_t{64} << 20;

class SlurmTopologyReader {
 public:
  SlurmTopologyReader(std::string_view origin, std::size_t name_limit)
      : origin_(origin), name_limit_(name_limit) {}

  void read(std::size_t number, std::string_view text) {
    const std::string_view without_comment = text.substr(0, text.find('#'));
    if (topology_detail::trim_blanks(without_comment).empty()) return;
    SwitchLine line;
    line.origin = line_origin(origin_, number);
    const std::vector<KeyValue> pairs = PairReader(without_comment, line.origin).pairs();
    if (pairs.front().key != Key::kSwitchName) {
      throw UsageError(
          fmt::format("{}: the line begins with {}=, not SwitchName= (each line "
                      "defines one switch)",
                      line.origin, excerpt(pairs.front().name)));
    }
    for (const KeyValue& pair : pairs)
      take(pair, line);
    lines_.push_back(std::move(line));
  }

  Topology finish() {
    if (lines_.empty()) {
      throw UsageError(
          fmt::format("{}: no SwitchName= line: not a topology.conf or the output "
                      "of scontrol show topology",
                      origin_));
    }
    check_children_defined();
    Topology topology = build_topology(parts());
    check_listed_hosts();
    return topology;
  }

 private:
  void take(const KeyValue& pair, SwitchLine& line) {
    switch (pair.key) {
      case Key::kSwitchName:
        topology_detail::validate_name_on_one_line(pair.value,
                                                   fmt::format("{} (SwitchName=)", line.origin));
        line.name = std::string(pair.value);
        return;
      case Key::kSwitches:
        line.switches = expand(pair.value, line.origin);
        return;
      case Key::kNodes:
        line.nodes = expand(pair.value, line.origin);
        return;
      case Key::kLinkSpeed:
        line.link_speed = whole_number(pair.name, pair.value, line.origin);
        return;
      case Key::kLevel:  // informational: the levels follow from the links
        (void)whole_number(pair.name, pair.value, line.origin);
        return;
    }
  }

  // A hostlist, counted against the file's budget: a file of many lines each near the limit of
  // one hostlist must not add up to billions of names.
  std::vector<std::string> expand(std::string_view hostlist, const std::string& origin) {
    std::vector<std::string> names = expand_hostlist(hostlist, origin, name_limit_);
    names_expanded_ += names.size();
    if (names_expanded_ > name_limit_) {
      throw UsageError(fmt::format("{}: the hostlists up to here expand to more than {} names",
                                   origin, name_limit_));
    }
    return names;
  }

  void check_children_defined() const {
    std::set<std::string_view> defined;
    for (const SwitchLine& line : lines_)
      defined.insert(line.name);
    for (const SwitchLine& line : lines_) {
      if (!line.switches) continue;
      for (const std::string& child : *line.switches) {
        if (!defined.contains(child)) {
          throw UsageError(fmt::format(
              "{}: Switches= names '{}', which no SwitchName= line defines", line.origin, child));
        }
      }
    }
  }

  TopologyParts parts() const {
    TopologyParts parts;
    std::map<std::string_view, const SwitchLine*> leaf_of_node;
    for (const SwitchLine& line : lines_) {
      parts.switches.push_back({line.name, line.link_speed, line.origin});
      if (line.switches) {
        for (const std::string& child : *line.switches)
          parts.links.push_back({child, line.name, std::nullopt, std::nullopt, line.origin});
        continue;  // Nodes= beside Switches= lists the hosts under them: checked afterwards
      }
      if (!line.nodes) continue;  // a leaf without hosts, as Slurm allows
      for (const std::string& node : *line.nodes) {
        const auto [first, added] = leaf_of_node.emplace(node, &line);
        if (!added && first->second != &line) {
          throw UsageError(fmt::format(
              "{}: node '{}' is under switch '{}' and already under "
              "switch '{}' (at {}): a node has one leaf switch",
              line.origin, node, line.name, first->second->name, first->second->origin));
        }
        if (added) parts.attachments.push_back({node, {line.name, "", std::nullopt, line.origin}});
      }
    }
    return parts;
  }

  // A switch with both Switches= and Nodes= (scontrol prints every switch above the leaves so)
  // must list exactly the hosts under its switches. Each is checked by a walk down from it over
  // the lines' own indexes; the walks together may take kMaxCheckSteps switches: a real fabric's
  // output takes a few million at most, a file of thousands of such switches stacked on one
  // another billions, and that is refused rather than checked for hours.
  void check_listed_hosts() const {
    std::map<std::string_view, std::size_t> index;
    for (std::size_t i = 0; i < lines_.size(); ++i)
      index.emplace(lines_[i].name, i);
    std::vector<std::vector<std::size_t>> children(lines_.size());
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      if (!lines_[i].switches) continue;
      for (const std::string& child : *lines_[i].switches)
        children[i].push_back(index.at(child));
    }
    std::vector<std::size_t> walked_from(lines_.size(), SIZE_MAX);
    std::size_t steps_left = kMaxCheckSteps;
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      if (lines_[i].switches && lines_[i].nodes) {
        check_listed_hosts(i, children, walked_from, steps_left);
      }
    }
  }

  void check_listed_hosts(std::size_t top, const std::vector<std::vector<std::size_t>>& children,
                          std::vector<std::size_t>& walked_from, std::size_t& steps_left) const {
    const SwitchLine& line = lines_[top];
    const auto fail = [&](std::string_view problem) {
      return UsageError(
          fmt::format("{}: switch '{}' has Switches= and Nodes=, which must list "
                      "the hosts under those switches (as scontrol show topology "
                      "prints them), but {}",
                      line.origin, line.name, problem));
    };
    const std::set<std::string_view> listed(line.nodes->begin(), line.nodes->end());
    std::set<std::string_view> found;
    std::vector<std::size_t> pending{top};
    walked_from[top] = top;
    while (!pending.empty()) {
      if (steps_left-- == 0) {
        throw UsageError(
            fmt::format("{}: too many switches under switches with both Switches= "
                        "and Nodes= to check them (more than {})",
                        line.origin, kMaxCheckSteps));
      }
      const SwitchLine& current = lines_[pending.back()];
      const std::vector<std::size_t>& below = children[pending.back()];
      pending.pop_back();
      if (!current.switches && current.nodes) {  // a leaf: its hosts
        for (const std::string& node : *current.nodes) {
          if (!listed.contains(node)) throw fail(fmt::format("'{}', under them, is missing", node));
          found.insert(node);
        }
      }
      for (std::size_t child : below) {
        if (walked_from[child] == top) continue;
        walked_from[child] = top;
        pending.push_back(child);
      }
    }
    for (std::string_view node : listed) {
      if (!found.contains(node)) throw fail(fmt::format("'{}' is under none of them", node));
    }
  }

  std::string origin_;
  std::vector<SwitchLine> lines_;
  std::size_t name_limit_;
  std::size_t names_expanded_ = 0;
};

}  // namespace

Topology parse_slurm_topology(std::string_view text, std::string_view origin,
                              std::size_t name_limit) {
  SlurmTopologyReader reader(origin, name_limit);
  topology_detail::for_each_line(
      text, [&](std::size_t number, std::string_view line) { reader.read(number, line); });
  return reader.finish();
}

Topology read_slurm_topology(const std::filesystem::path& path) {
  return parse_slurm_topology(read_bounded_file(path, kMaxTopologyFileBytes, "topology"),
                              path.string());
}

}  // namespace commcert
