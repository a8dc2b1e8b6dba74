#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "topology/topology.hpp"

namespace commcert {

struct IbnetdiscoverOptions {
  // Host names by the CA's node GUID (the number in "H-0002c90300d4e5f6"), for HCAs whose
  // description does not begin with their host's name (a firmware default such as "MT4129
  // ConnectX7 ..."); ibnetdiscover's own --node-name-map is keyed the same way. Overrides the
  // description; each name must be a valid node name.
  std::map<std::uint64_t, std::string> host_by_guid;
};

// Reads the topology ibnetdiscover prints by default, with or without -g and -f
// (docs/topology.md): `Switch` and `Ca` blocks, each a header and one line per connected port.
//
//   Switch  36 "S-0002c90300a1b2c3"   # "leaf-a" enhanced port 0 lid 5 lmc 0
//   [1]   "H-0002c90300d4e5f6"[1](2c90300d4e5f7)   # "gpu001 mlx5_0" lid 12 4xNDR
//   [33]  "S-0002c90300ffeedd"[1]   # "spine-1" lid 3 4xNDR
//   Ca  1 "H-0002c90300d4e5f6"   # "gpu001 mlx5_0"
//   [1](2c90300d4e5f7)  "S-0002c90300a1b2c3"[1]   # lid 12 lmc 0 "leaf-a" lid 5 4xNDR
//
// A switch is named by its description, or by its quoted id ("S-0002c90300a1b2c3") where the
// description is empty or shared with another switch. An HCA belongs to the host its
// description's first word names (Linux sets node descriptions to "HOST HCA": rdma-ndd), unless
// `options` names it by GUID; each HCA port is one NodeAttachment. A switch with hosts is a leaf;
// a switch-to-switch cable runs from the switch nearer the hosts (in switch hops) up to the one
// further away, and a cable between two switches equally near is a lateral link. Routers and
// cables between two HCAs are not part of the model.
//
// Throws UsageError "ORIGIN:LINE: ..." for a line that is none of these (nor a comment, blank,
// vendid=/devid=/sysimgguid=/switchguid=/caguid=/rtguid=, or a -g chassis line), a port line
// before any header, a node listed twice, a GUID listed as two kinds of node, a port linked to
// two different peers, and an HCA whose host name is invalid.
[[nodiscard]] Topology parse_ibnetdiscover(std::string_view text, std::string_view origin,
                                           const IbnetdiscoverOptions& options = {});

// parse_ibnetdiscover of a file of at most kMaxTopologyFileBytes.
[[nodiscard]] Topology read_ibnetdiscover(const std::filesystem::path& path,
                                          const IbnetdiscoverOptions& options = {});

}  // namespace commcert
