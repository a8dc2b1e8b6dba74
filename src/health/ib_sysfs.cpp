#include "health/ib_sysfs.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <system_error>

namespace commcert {
namespace {

namespace fs = std::filesystem;

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return std::string(trim(text));
}

std::optional<std::uint64_t> read_counter(const fs::path& path) {
  const auto text = read_text(path);
  if (!text || text->empty()) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

// mlx5_2 sorts before mlx5_10: compare the name without its trailing number, then the number.
std::pair<std::string, long> natural_key(const std::string& name) {
  std::size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1])))
    --digits;
  long number = -1;
  if (digits < name.size()) {
    std::from_chars(name.data() + digits, name.data() + name.size(), number);
  }
  return {name.substr(0, digits), number};
}

std::vector<fs::path> subdirectories(const fs::path& directory) {
  std::vector<fs::path> out;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    std::error_code type_error;
    if (it->is_directory(type_error)) out.push_back(it->path());
  }
  return out;
}

IbPort read_port(const std::string& device, int number, const fs::path& directory) {
  IbPort port;
  port.device = device;
  port.port = number;
  if (auto text = read_text(directory / "state")) port.state = ib_state_name(*text);
  if (auto text = read_text(directory / "phys_state")) port.phys_state = ib_state_name(*text);
  if (auto text = read_text(directory / "rate")) port.rate_gbps = ib_rate_gbps(*text);
  if (auto text = read_text(directory / "link_layer"); text && !text->empty())
    port.link_layer = *text;
  std::error_code error;
  for (fs::directory_iterator it(directory / "counters", error), end; !error && it != end;
       it.increment(error)) {
    std::error_code type_error;
    if (!it->is_regular_file(type_error)) continue;
    if (auto value = read_counter(it->path()))
      port.counters[it->path().filename().string()] = *value;
  }
  return port;
}

}  // namespace

std::string ib_state_name(std::string_view text) {
  text = trim(text);
  const auto colon = text.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view number = trim(text.substr(0, colon));
    const bool numeric = !number.empty() && std::all_of(number.begin(), number.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    if (numeric) text = trim(text.substr(colon + 1));
  }
  return std::string(text);
}

std::optional<double> ib_rate_gbps(std::string_view text) {
  text = trim(text);
  const auto space = text.find(' ');
  const std::string_view number = text.substr(0, space);
  if (space == std::string_view::npos || text.substr(space + 1).rfind("Gb/sec", 0) != 0) {
    return std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || end != number.data() + number.size() || value < 0)
    return std::nullopt;
  return value;
}

IbScan read_ib_ports(const fs::path& sysfs_root) {
  IbScan scan;
  const fs::path root = sysfs_root / "class" / "infiniband";
  std::error_code error;
  scan.class_present = fs::is_directory(root, error);
  if (!scan.class_present) return scan;
  auto devices = subdirectories(root);
  std::sort(devices.begin(), devices.end(), [](const fs::path& a, const fs::path& b) {
    return natural_key(a.filename().string()) < natural_key(b.filename().string());
  });
  for (const auto& device_dir : devices) {
    std::vector<std::pair<int, fs::path>> ports;
    for (const auto& port_dir : subdirectories(device_dir / "ports")) {
      const std::string name = port_dir.filename().string();
      int number = 0;
      const auto [end, parse_error] =
          std::from_chars(name.data(), name.data() + name.size(), number);
      if (parse_error == std::errc() && end == name.data() + name.size())
        ports.emplace_back(number, port_dir);
    }
    std::sort(ports.begin(), ports.end());
    for (const auto& [number, port_dir] : ports) {
      scan.ports.push_back(read_port(device_dir.filename().string(), number, port_dir));
    }
  }
  return scan;
}

}  // namespace commcert
