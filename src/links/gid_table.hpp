#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "health/ib_sysfs.hpp"

namespace commcert {

// One row of a port's GID table as sysfs shows it (<sysfs>/class/infiniband/<dev>/ports/<port>/
// gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>).
struct GidEntry {
  int index = 0;
  std::string gid;     // "fe80:0000:0000:0000:0202:c9ff:fe00:0001"
  std::string type;    // "IB/RoCE v1", "RoCE v2"; empty when unreadable (an unused entry)
  std::string netdev;  // the Ethernet interface of a RoCE GID
};

// Every readable entry, by index; never throws (what cannot be read is absent).
[[nodiscard]] std::vector<GidEntry> read_gid_table(const std::filesystem::path& sysfs_root,
                                                   std::string_view device, int port);

struct GidChoice {
  std::optional<int> index;  // nullopt: no usable GID
  std::string why;           // how it was chosen, or why none could be
};

// The GID index a link test uses (docs/links.md, "GID index"). An override must name a non-zero
// entry. InfiniBand: index 0, the port GID. RoCE: a RoCE v2 entry (routable: the UDP/IP
// encapsulation crosses L3 switches), an IPv4-mapped address (::ffff:a.b.c.d) before an IPv6
// global one before a link-local one (fe80::), the lowest index among equals; without any RoCE
// v2 entry, the first non-zero RoCE v1 entry, said so.
[[nodiscard]] GidChoice choose_gid(const std::vector<GidEntry>& table, std::string_view link_layer,
                                   std::optional<int> override_index);

// Why a port cannot carry a link test (not ACTIVE, physically not LinkUp, rate unknown), or
// nullopt when it can.
[[nodiscard]] std::optional<std::string> port_not_ready(const IbPort& port);

}  // namespace commcert
