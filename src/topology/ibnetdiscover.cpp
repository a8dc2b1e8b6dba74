#include "topology/ibnetdiscover.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <compare>
#include <deque>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "topology/detail/input_lines.hpp"

namespace commcert {
namespace {

using topology_detail::excerpt;
using topology_detail::line_origin;
using topology_detail::trim_blanks;

enum class NodeType { kSwitch, kCa, kRouter };

std::string_view type_name(NodeType type) {
  switch (type) {
    case NodeType::kSwitch:
      return "a switch";
    case NodeType::kCa:
      return "a CA";
    case NodeType::kRouter:
      return "a router";
  }
  return "a node";
}

// ibnetdiscover's quoted id of a node: "S-0002c90300a1b2c3" (S switch, H CA, R router).
std::string quoted_id(NodeType type, std::uint64_t guid) {
  const char letter = type == NodeType::kSwitch ? 'S' : type == NodeType::kCa ? 'H' : 'R';
  return fmt::format("{}-{:016x}", letter, guid);
}

struct FabricNode {
  NodeType type = NodeType::kSwitch;
  std::string description;  // its header's, else the first peer comment's that names it
  bool has_header = false;
  std::string origin;  // its header line, else the first line that names it
};

struct PortId {
  std::uint64_t guid = 0;
  int port = 0;
  auto operator<=>(const PortId&) const = default;
};

struct Cable {
  PortId a, b;
  std::string origin;
};

// What a header or port line says, field by field.
struct Header {
  NodeType type = NodeType::kSwitch;
  std::uint64_t guid = 0;
  std::string_view description;
};

struct PortLine {
  int port = 0;
  NodeType peer_type = NodeType::kSwitch;
  std::uint64_t peer_guid = 0;
  int peer_port = 0;
  std::optional<std::string_view> peer_description;
};

// Reads the fields of one line left to right; every failure names the line.
class LineCursor {
 public:
  LineCursor(std::string_view line, const std::string& origin) : line_(line), origin_(origin) {}

  [[noreturn]] void fail(std::string_view why) const {
    throw UsageError(fmt::format("{}: {}: '{}'", origin_, why, excerpt(line_)));
  }

  void skip_blanks() {
    while (at_ < line_.size() && (line_[at_] == ' ' || line_[at_] == '\t'))
      ++at_;
  }

  bool next_is(char c) const { return at_ < line_.size() && line_[at_] == c; }
  bool next_is(std::string_view text) const { return line_.substr(at_).starts_with(text); }

  void expect(char c, std::string_view what) {
    if (!next_is(c)) fail(fmt::format("expected {}", what));
    ++at_;
  }

  std::string_view word() {
    const std::size_t start = at_;
    while (at_ < line_.size() && line_[at_] != ' ' && line_[at_] != '\t')
      ++at_;
    return line_.substr(start, at_ - start);
  }

  int number(std::string_view what) {
    const std::size_t start = at_;
    while (at_ < line_.size() && line_[at_] >= '0' && line_[at_] <= '9')
      ++at_;
    int value = 0;
    const char* end = line_.data() + at_;
    const auto [stop, error] = std::from_chars(line_.data() + start, end, value);
    if (at_ == start || error != std::errc() || stop != end) fail(fmt::format("bad {}", what));
    return value;
  }

  // A GUID in hex, 1 to 16 digits, as ibnetdiscover prints them (with no "0x").
  std::uint64_t guid() {
    const std::size_t start = at_;
    while (at_ < line_.size() && std::isxdigit(static_cast<unsigned char>(line_[at_])))
      ++at_;
    std::uint64_t value = 0;
    const char* end = line_.data() + at_;
    const auto [stop, error] = std::from_chars(line_.data() + start, end, value, 16);
    if (at_ == start || at_ - start > 16 || error != std::errc() || stop != end) fail("bad GUID");
    return value;
  }

  // "S-0002c90300a1b2c3" with its quotes.
  std::pair<NodeType, std::uint64_t> node_id() {
    expect('"', "a quoted node id such as \"S-0002c90300a1b2c3\"");
    NodeType type = NodeType::kSwitch;
    if (next_is('S')) {
      type = NodeType::kSwitch;
    } else if (next_is('H')) {
      type = NodeType::kCa;
    } else if (next_is('R')) {
      type = NodeType::kRouter;
    } else {
      fail("a node id begins with S-, H- or R-");
    }
    ++at_;
    expect('-', "'-' in the node id");
    const std::uint64_t value = guid();
    expect('"', "'\"' closing the node id");
    return {type, value};
  }

  // "[33]", and the "[ext 12]" that -g may print after it.
  int port_number() {
    expect('[', "'[' before a port number");
    const int port = number("port number");
    expect(']', "']' after a port number");
    if (next_is("[ext")) {
      at_ += 4;
      skip_blanks();
      (void)number("external port number");
      expect(']', "']' after an external port number");
    }
    return port;
  }

  // A port GUID in parentheses, which only CA and router ports print; skipped.
  void skip_port_guid() {
    skip_blanks();
    if (!next_is('(')) return;
    ++at_;
    (void)guid();
    expect(')', "')' after a port GUID");
  }

  // The text after '#': the quoted description in it runs from its first quote to its last (a
  // description may itself hold quotes; nothing after it is quoted). nullopt without quotes.
  std::optional<std::string_view> comment_description() {
    skip_blanks();
    expect('#', "'#' before the description");
    const std::string_view comment = line_.substr(at_);
    const std::size_t open = comment.find('"');
    const std::size_t close = comment.rfind('"');
    if (open == std::string_view::npos || open == close) return std::nullopt;
    return comment.substr(open + 1, close - open - 1);
  }

 private:
  std::string_view line_;
  const std::string& origin_;
  std::size_t at_ = 0;
};

Header read_header(std::string_view line, const std::string& origin) {
  LineCursor cursor(line, origin);
  const std::string_view kind = cursor.word();
  cursor.skip_blanks();
  (void)cursor.number("port count");
  cursor.skip_blanks();
  const auto [type, guid] = cursor.node_id();
  const NodeType expected = kind == "Switch" ? NodeType::kSwitch
                            : kind == "Ca"   ? NodeType::kCa
                                             : NodeType::kRouter;
  if (type != expected) cursor.fail(fmt::format("a {} line names {}", kind, type_name(type)));
  const auto description = cursor.comment_description();
  if (!description) cursor.fail("no quoted description after '#'");
  return {type, guid, *description};
}

PortLine read_port_line(std::string_view line, const std::string& origin) {
  LineCursor cursor(line, origin);
  PortLine port;
  port.port = cursor.port_number();
  cursor.skip_port_guid();
  cursor.skip_blanks();
  std::tie(port.peer_type, port.peer_guid) = cursor.node_id();
  port.peer_port = cursor.port_number();
  cursor.skip_port_guid();
  port.peer_description = cursor.comment_description();
  return port;
}

// Lines that say nothing about the links: node attributes, and -g's chassis grouping.
bool is_ignored_line(std::string_view line) {
  constexpr std::array<std::string_view, 9> kPrefixes{
      "#",       "vendid=", "devid=",   "sysimgguid=", "switchguid=",
      "caguid=", "rtguid=", "Chassis ", "Hostname:"};
  if (line.empty() || line == "Non-Chassis Nodes") return true;
  for (std::string_view prefix : kPrefixes) {
    if (line.starts_with(prefix)) return true;
  }
  return false;
}

bool is_header(std::string_view line) {
  for (std::string_view kind : {"Switch", "Ca", "Rt"}) {
    if (line.starts_with(kind) && line.size() > kind.size() &&
        (line[kind.size()] == ' ' || line[kind.size()] == '\t')) {
      return true;
    }
  }
  return false;
}

class IbnetdiscoverReader {
 public:
  IbnetdiscoverReader(std::string_view origin, const IbnetdiscoverOptions& options)
      : origin_(origin), options_(options) {}

  void read(std::size_t number, std::string_view text) {
    const std::string_view line = trim_blanks(text);
    if (is_ignored_line(line)) return;
    const std::string where = line_origin(origin_, number);
    if (is_header(line)) {
      add_header(read_header(line, where), where);
    } else if (line.starts_with('[')) {
      add_port_line(read_port_line(line, where), where);
    } else {
      throw UsageError(fmt::format("{}: not a line of ibnetdiscover's topology output: '{}'", where,
                                   excerpt(line)));
    }
  }

  Topology finish() const {
    if (nodes_.empty()) {
      throw UsageError(
          fmt::format("{}: no Switch or Ca line: not ibnetdiscover's output", origin_));
    }
    const std::map<std::uint64_t, std::string> switch_names = name_switches();
    TopologyParts parts;
    for (std::uint64_t guid : order_seen_) {
      const FabricNode& node = nodes_.at(guid);
      if (node.type == NodeType::kSwitch) {
        parts.switches.push_back({switch_names.at(guid), std::nullopt, node.origin});
      }
    }
    std::vector<const Cable*> switch_cables;
    for (const Cable& cable : cables_) {
      const NodeType a = nodes_.at(cable.a.guid).type;
      const NodeType b = nodes_.at(cable.b.guid).type;
      if (a == NodeType::kSwitch && b == NodeType::kSwitch) {
        switch_cables.push_back(&cable);
      } else if (a == NodeType::kSwitch && b == NodeType::kCa) {
        parts.attachments.push_back(attachment(cable.b, cable.a, cable.origin, switch_names));
      } else if (a == NodeType::kCa && b == NodeType::kSwitch) {
        parts.attachments.push_back(attachment(cable.a, cable.b, cable.origin, switch_names));
      }  // routers, and two HCAs cabled to each other, are not part of the tree
    }
    orient_switch_cables(switch_cables, switch_names, parts);
    return build_topology(std::move(parts));
  }

 private:
  FabricNode& node_named(NodeType type, std::uint64_t guid, const std::string& where) {
    const auto [found, added] = nodes_.try_emplace(guid);
    FabricNode& node = found->second;
    if (added) {
      node.type = type;
      node.origin = where;
      order_seen_.push_back(guid);
    } else if (node.type != type) {
      throw UsageError(fmt::format("{}: GUID {:016x} is {} here but {} at {}", where, guid,
                                   type_name(type), type_name(node.type), node.origin));
    }
    return node;
  }

  void add_header(const Header& header, const std::string& where) {
    FabricNode& node = node_named(header.type, header.guid, where);
    if (node.has_header) {
      throw UsageError(fmt::format("{}: {} is listed twice (first at {})", where,
                                   quoted_id(header.type, header.guid), node.origin));
    }
    node.has_header = true;
    node.description = std::string(header.description);
    node.origin = where;
    current_ = header.guid;
  }

  void add_port_line(const PortLine& line, const std::string& where) {
    if (!current_) {
      throw UsageError(fmt::format("{}: a port line before any Switch, Ca or Rt line", where));
    }
    FabricNode& peer = node_named(line.peer_type, line.peer_guid, where);
    if (!peer.has_header && peer.description.empty() && line.peer_description) {
      peer.description = std::string(*line.peer_description);
    }
    connect({*current_, line.port}, {line.peer_guid, line.peer_port}, where);
  }

  // Each cable is printed from both of its ends; both must agree.
  void connect(PortId here, PortId there, const std::string& where) {
    const bool here_known = check_peer(here, there, where);
    const bool there_known = check_peer(there, here, where);
    if (here_known && there_known) return;
    peer_of_[here] = {there, where};
    peer_of_[there] = {here, where};
    cables_.push_back({here, there, where});
  }

  // Whether `port` is already known linked to `peer`; throws if it is linked to another.
  bool check_peer(PortId port, PortId peer, const std::string& where) const {
    const auto found = peer_of_.find(port);
    if (found == peer_of_.end()) return false;
    const auto& [known, known_at] = found->second;
    if (known == peer) return true;
    throw UsageError(
        fmt::format("{}: port {} of {} is linked to port {} of {} here, but to port "
                    "{} of {} at {}",
                    where, port.port, id_of(port.guid), peer.port, id_of(peer.guid), known.port,
                    id_of(known.guid), known_at));
  }

  std::string id_of(std::uint64_t guid) const { return quoted_id(nodes_.at(guid).type, guid); }

  // Descriptions where each switch has its own; quoted ids where they are empty or shared
  // (switches left with their factory description all share one).
  std::map<std::uint64_t, std::string> name_switches() const {
    std::map<std::string_view, int> uses;
    for (const auto& [guid, node] : nodes_) {
      if (node.type == NodeType::kSwitch) ++uses[node.description];
    }
    std::map<std::uint64_t, std::string> names;
    for (const auto& [guid, node] : nodes_) {
      if (node.type != NodeType::kSwitch) continue;
      const bool own = !node.description.empty() && uses[node.description] == 1;
      names[guid] = own ? node.description : quoted_id(NodeType::kSwitch, guid);
    }
    return names;
  }

  std::string host_name(std::uint64_t guid) const {
    const FabricNode& ca = nodes_.at(guid);
    if (const auto mapped = options_.host_by_guid.find(guid);
        mapped != options_.host_by_guid.end()) {
      topology_detail::validate_name_on_one_line(
          mapped->second, fmt::format("the host name given for GUID {:016x}", guid));
      return mapped->second;
    }
    const std::string_view description = trim_blanks(ca.description);
    std::string host(description.substr(0, description.find_first_of(" \t")));
    try {
      topology_detail::validate_name_on_one_line(host, "the first word of its description");
    } catch (const UsageError& error) {
      throw UsageError(fmt::format("{}: CA {} (\"{}\"): {}; name its host by GUID instead",
                                   ca.origin, quoted_id(NodeType::kCa, guid),
                                   excerpt(ca.description), error.what()));
    }
    return host;
  }

  std::pair<std::string, NodeAttachment> attachment(
      PortId ca, PortId leaf, const std::string& where,
      const std::map<std::uint64_t, std::string>& switch_names) const {
    const std::string_view description = trim_blanks(nodes_.at(ca.guid).description);
    const std::size_t blank = description.find_first_of(" \t");
    const std::string_view adapter = blank == std::string_view::npos
                                         ? std::string_view{}
                                         : trim_blanks(description.substr(blank));
    NodeAttachment attached{switch_names.at(leaf.guid), "", leaf.port, where};
    attached.adapter = adapter.empty() ? fmt::format("port {}", ca.port)
                                       : fmt::format("{} port {}", adapter, ca.port);
    return {host_name(ca.guid), std::move(attached)};
  }

  // Switch hops from the nearest switch with hosts (0 for those), by GUID; unreached switches
  // (no hosts anywhere below them) are absent.
  static std::map<std::uint64_t, int> hops_from_hosts(
      const std::vector<const Cable*>& switch_cables, const TopologyParts& parts,
      const std::map<std::uint64_t, std::string>& switch_names) {
    std::map<std::string_view, std::uint64_t> guid_of;
    for (const auto& [guid, name] : switch_names)
      guid_of[name] = guid;
    std::map<std::uint64_t, std::vector<std::uint64_t>> neighbours;
    for (const Cable* cable : switch_cables) {
      neighbours[cable->a.guid].push_back(cable->b.guid);
      neighbours[cable->b.guid].push_back(cable->a.guid);
    }
    std::map<std::uint64_t, int> hops;
    std::deque<std::uint64_t> frontier;
    for (const auto& [node, attached] : parts.attachments) {
      const std::uint64_t leaf = guid_of.at(attached.leaf);
      if (hops.emplace(leaf, 0).second) frontier.push_back(leaf);
    }
    while (!frontier.empty()) {
      const std::uint64_t current = frontier.front();
      frontier.pop_front();
      const auto cabled = neighbours.find(current);
      if (cabled == neighbours.end()) continue;
      const int next_hops = hops.at(current) + 1;
      for (std::uint64_t next : cabled->second) {
        if (hops.emplace(next, next_hops).second) frontier.push_back(next);
      }
    }
    return hops;
  }

  // A cable runs up from the switch nearer the hosts; equally near (or both unreached), it is
  // lateral.
  static void orient_switch_cables(const std::vector<const Cable*>& switch_cables,
                                   const std::map<std::uint64_t, std::string>& switch_names,
                                   TopologyParts& parts) {
    const std::map<std::uint64_t, int> hops = hops_from_hosts(switch_cables, parts, switch_names);
    const auto hops_of = [&](std::uint64_t guid) {
      const auto found = hops.find(guid);
      return found == hops.end() ? -1 : found->second;
    };
    for (const Cable* cable : switch_cables) {
      const int a = hops_of(cable->a.guid);
      const int b = hops_of(cable->b.guid);
      const PortId& lower = a < b ? cable->a : cable->b;
      const PortId& upper = a < b ? cable->b : cable->a;
      SwitchLink link{switch_names.at(lower.guid), switch_names.at(upper.guid), lower.port,
                      upper.port, cable->origin};
      (a == b ? parts.lateral_links : parts.links).push_back(std::move(link));
    }
  }

  std::string origin_;
  const IbnetdiscoverOptions& options_;
  std::map<std::uint64_t, FabricNode> nodes_;
  std::vector<std::uint64_t> order_seen_;
  std::map<PortId, std::pair<PortId, std::string>> peer_of_;
  std::vector<Cable> cables_;
  std::optional<std::uint64_t> current_;
};

}  // namespace

Topology parse_ibnetdiscover(std::string_view text, std::string_view origin,
                             const IbnetdiscoverOptions& options) {
  IbnetdiscoverReader reader(origin, options);
  topology_detail::for_each_line(
      text, [&](std::size_t number, std::string_view line) { reader.read(number, line); });
  return reader.finish();
}

Topology read_ibnetdiscover(const std::filesystem::path& path,
                            const IbnetdiscoverOptions& options) {
  return parse_ibnetdiscover(read_bounded_file(path, kMaxTopologyFileBytes, "ibnetdiscover"),
                             path.string(), options);
}

}  // namespace commcert
