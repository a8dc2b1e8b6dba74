#include "links/gid_table.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

namespace commcert {
namespace {

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  return line;
}

bool is_zero(std::string_view gid) {
  return gid.empty() ||
         std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

// 0: IPv4-mapped, 1: IPv6 global, 2: link-local.
int address_rank(std::string_view gid) {
  if (gid.starts_with("0000:0000:0000:0000:0000:ffff:")) return 0;
  if (gid.starts_with("fe80:")) return 2;
  return 1;
}

}  // namespace

std::vector<GidEntry> read_gid_table(const std::filesystem::path& sysfs_root,
                                     std::string_view device, int port) {
  const auto base =
      sysfs_root / "class" / "infiniband" / std::string(device) / "ports" / std::to_string(port);
  std::vector<GidEntry> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(base / "gids", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    GidEntry gid;
    gid.index = std::stoi(name);
    gid.gid = read_line(entry.path());
    gid.type = read_line(base / "gid_attrs" / "types" / name);
    gid.netdev = read_line(base / "gid_attrs" / "ndevs" / name);
    out.push_back(std::move(gid));
  }
  std::sort(out.begin(), out.end(),
            [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return out;
}

GidChoice choose_gid(const std::vector<GidEntry>& table, std::string_view link_layer,
                     std::optional<int> override_index) {
  if (override_index) {
    const auto it = std::find_if(table.begin(), table.end(),
                                 [&](const GidEntry& e) { return e.index == *override_index; });
    if (it == table.end() || is_zero(it->gid)) {
      return {std::nullopt,
              fmt::format("--gid-index {}: no such GID on this port", *override_index)};
    }
    return {*override_index, fmt::format("--gid-index {} ({})", *override_index, it->gid)};
  }
  if (link_layer == "InfiniBand") {
    if (!table.empty() && table.front().index == 0 && !is_zero(table.front().gid)) {
      return {0, "InfiniBand: the port GID, index 0"};
    }
    return {std::nullopt, "InfiniBand port without a GID at index 0"};
  }
  const GidEntry* best = nullptr;
  for (const auto& e : table) {
    if (e.type != "RoCE v2" || is_zero(e.gid)) continue;
    if (!best || address_rank(e.gid) < address_rank(best->gid)) best = &e;
  }
  if (best) {
    return {best->index, fmt::format("RoCE v2, {}{}", best->gid,
                                     best->netdev.empty() ? "" : " on " + best->netdev)};
  }
  for (const auto& e : table) {
    if (!is_zero(e.gid) && e.type.find("v1") != std::string::npos) {
      return {e.index,
              fmt::format("no RoCE v2 GID: RoCE v1 {} (not routable across subnets)", e.gid)};
    }
  }
  return {std::nullopt, "no usable GID (every entry is empty)"};
}

std::optional<std::string> port_not_ready(const IbPort& port) {
  const std::string where = fmt::format("{} port {}", port.device, port.port);
  if (port.state.value_or("") != "ACTIVE") {
    return fmt::format("{}: state {}", where, port.state.value_or("unknown"));
  }
  if (port.phys_state.value_or("") != "LinkUp") {
    return fmt::format("{}: physical state {}", where, port.phys_state.value_or("unknown"));
  }
  if (!port.rate_gbps) return fmt::format("{}: rate unknown", where);
  return std::nullopt;
}

}  // namespace commcert
