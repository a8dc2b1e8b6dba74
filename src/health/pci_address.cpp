#include "health/pci_address.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace commcert {
namespace {

std::optional<unsigned> parse_hex(std::string_view text, std::size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::string> read_first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
    line.pop_back();
  return line;
}

std::optional<std::string> normalize_pci_bus_id(std::string_view text) {
  // [domain:]bus:device.function
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto function = parse_hex(text.substr(dot + 1), 1);
  const std::string_view head = text.substr(0, dot);
  const auto last_colon = head.rfind(':');
  if (last_colon == std::string_view::npos) return std::nullopt;
  const auto device = parse_hex(head.substr(last_colon + 1), 2);
  const std::string_view rest = head.substr(0, last_colon);
  const auto bus_colon = rest.rfind(':');
  const auto bus =
      parse_hex(bus_colon == std::string_view::npos ? rest : rest.substr(bus_colon + 1), 2);
  std::optional<unsigned> domain = 0u;
  if (bus_colon != std::string_view::npos) domain = parse_hex(rest.substr(0, bus_colon), 8);
  if (!function || !device || !bus || !domain || *function > 7 || *device > 31 ||
      *domain > 0xffff) {
    return std::nullopt;
  }
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", *domain, *bus, *device, *function);
}

std::optional<int> pci_numa_node(const std::filesystem::path& sysfs_root, std::string_view bus_id) {
  const auto normalized = normalize_pci_bus_id(bus_id);
  if (!normalized) return std::nullopt;
  const auto line =
      read_first_line(sysfs_root / "bus" / "pci" / "devices" / *normalized / "numa_node");
  if (!line) return std::nullopt;
  int node = -1;
  const auto [end, error] = std::from_chars(line->data(), line->data() + line->size(), node);
  if (error != std::errc() || end != line->data() + line->size() || node < 0) return std::nullopt;
  return node;
}

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty()) return cpus;
  const auto number = [](std::string_view part) {
    int value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size() || value < 0) {
      throw std::invalid_argument(fmt::format("bad CPU number '{}' in a CPU list", part));
    }
    return value;
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t dash = item.find('-');
    const int first = number(item.substr(0, dash));
    const int last = dash == std::string_view::npos ? first : number(item.substr(dash + 1));
    if (last < first) throw std::invalid_argument(fmt::format("bad CPU range '{}'", item));
    for (int cpu = first; cpu <= last; ++cpu)
      cpus.push_back(cpu);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cpus;
}

std::vector<int> numa_node_cpus(const std::filesystem::path& sysfs_root, int node) {
  const auto line = read_first_line(sysfs_root / "devices" / "system" / "node" /
                                    fmt::format("node{}", node) / "cpulist");
  if (!line) return {};
  try {
    return parse_cpu_list(*line);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

}  // namespace commcert
