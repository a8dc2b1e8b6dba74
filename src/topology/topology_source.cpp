#include "topology/topology_source.hpp"

#include <cctype>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/printable.hpp"
#include "topology/ibnetdiscover.hpp"
#include "topology/slurm_topology.hpp"

namespace commcert {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// Whether `line` begins (after blanks) with `SwitchName` in any case, then blanks and `=`.
bool starts_with_switch_name(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && blank(line[i]))
    ++i;
  constexpr std::string_view kKey = "switchname";
  if (line.size() - i < kKey.size()) return false;
  for (std::size_t k = 0; k < kKey.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(line[i + k])) != kKey[k]) return false;
  }
  i += kKey.size();
  while (i < line.size() && blank(line[i]))
    ++i;
  return i < line.size() && line[i] == '=';
}

// The first line of a command's complaint, shown in one line.
std::string first_line(std::string_view text) {
  const std::size_t end = text.find('\n');
  return printable(text.substr(0, end));
}

}  // namespace

TopologyFormat detect_topology_format(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    std::size_t first = 0;
    while (first < line.size() && blank(line[first]))
      ++first;
    if (first == line.size() || line[first] == '#') continue;
    return starts_with_switch_name(line) ? TopologyFormat::kSlurm : TopologyFormat::kIbnetdiscover;
  }
  return TopologyFormat::kSlurm;
}

Topology parse_topology(std::string_view text, std::string_view origin) {
  return detect_topology_format(text) == TopologyFormat::kSlurm ? parse_slurm_topology(text, origin)
                                                                : parse_ibnetdiscover(text, origin);
}

Topology read_topology_file(const std::filesystem::path& path) {
  return parse_topology(read_bounded_file(path, kMaxTopologyFileBytes, "topology"), path.string());
}

FoundTopology find_topology(const std::optional<std::string>& file, const char* slurm_job_id,
                            const TopologyCommandRunner& run) {
  FoundTopology found;
  if (file) {
    found.topology = read_topology_file(*file);
    found.source = *file;
    return found;
  }
  if (slurm_job_id == nullptr || *slurm_job_id == '\0') return found;
  constexpr std::string_view kCommand = "scontrol show topology";
  const auto none = [&](const std::string& why) {
    found.unavailable = fmt::format(
        "no --topology given and `{}` {}: suspect switch paths are named by their nodes", kCommand,
        why);
    return found;
  };
  const ProcessResult result = run({"scontrol", "show", "topology"}, kScontrolTopologyTimeoutS);
  if (result.timed_out) {
    return none(fmt::format("did not answer within {:g} s", kScontrolTopologyTimeoutS));
  }
  if (result.exit_code != 0) {
    const std::string said = first_line(result.error.empty() ? result.output : result.error);
    return none(result.exit_code < 0 ? fmt::format("could not run ({})", said)
                                     : fmt::format("failed with status {}{}", result.exit_code,
                                                   said.empty() ? "" : " (" + said + ")"));
  }
  if (result.output.find_first_not_of(" \t\r\n") == std::string::npos) {
    return none("printed nothing (the cluster has no tree topology configured)");
  }
  try {
    found.topology = parse_topology(result.output, kCommand);
  } catch (const UsageError& error) {
    return none(fmt::format("printed what is not a topology ({})", printable(error.what())));
  }
  found.source = std::string(kCommand);
  return found;
}

}  // namespace commcert
