#include "pool/slurm_client.hpp"

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/printable.hpp"
#include "core/process.hpp"

namespace commcert {
namespace {

// The line of scontrol's stderr that names the problem: its last "fatal:" line (the ones before
// are the attempts that led there), else its first line.
std::string telling_line(std::string_view error) {
  std::string_view chosen;
  std::size_t start = 0;
  while (start < error.size()) {
    auto end = error.find('\n', start);
    if (end == std::string_view::npos) end = error.size();
    const auto line = error.substr(start, end - start);
    if (chosen.empty() || line.find("fatal:") != std::string_view::npos) {
      if (!line.empty()) chosen = line;
    }
    start = end + 1;
  }
  return std::string(chosen.empty() ? std::string_view("no message") : chosen);
}

}  // namespace

std::map<std::string, SlurmNodeStatus> query_slurm_nodes(double timeout_seconds) {
  // scontrol retries a missing SLURM_CONF for a minute before giving up: say so at once.
  if (const char* conf = std::getenv("SLURM_CONF"); conf && *conf) {
    std::error_code error;
    if (!std::filesystem::exists(conf, error)) {
      throw RuntimeFailure(
          fmt::format("SLURM_CONF={}: no such file; Slurm cannot be reached from here", conf));
    }
  }
  const auto result = run_process({"scontrol", "-o", "show", "node"}, timeout_seconds);
  if (result.timed_out) {
    throw RuntimeFailure(fmt::format(
        "scontrol show node timed out after {:g} s (is slurmctld running?)", timeout_seconds));
  }
  if (result.exit_code != 0) {
    throw RuntimeFailure(fmt::format("scontrol show node failed (exit {}): {}", result.exit_code,
                                     telling_line(result.error)));
  }
  std::map<std::string, SlurmNodeStatus> nodes;
  std::size_t start = 0;
  while (start < result.output.size()) {
    auto end = result.output.find('\n', start);
    if (end == std::string::npos) end = result.output.size();
    if (auto parsed =
            parse_scontrol_node(std::string_view(result.output).substr(start, end - start))) {
      nodes.emplace(std::move(parsed->first), std::move(parsed->second));
    }
    start = end + 1;
  }
  return nodes;
}

std::vector<AppliedAction> apply_slurm_actions(const std::vector<PoolAction>& actions, bool dry_run,
                                               std::FILE* out, double timeout_seconds) {
  std::vector<AppliedAction> applied;
  for (const auto& action : actions) {
    AppliedAction done{action, true, {}};
    switch (action.kind) {
      case PoolActionKind::kLeave:
        // A node the verdict names can come from an edited record: escaped, one line each.
        fmt::print(out, "leave  {}: {}\n", printable(action.node), printable(action.why));
        break;
      case PoolActionKind::kDrain:
      case PoolActionKind::kResume: {
        const char* verb = action.kind == PoolActionKind::kDrain ? "drain " : "resume";
        const std::string detail =
            action.kind == PoolActionKind::kDrain ? fmt::format(": {}", action.reason) : "";
        if (dry_run) {
          fmt::print(out, "{} {}{} (dry run)\n", verb, action.node, printable(detail));
          break;
        }
        const auto result = run_process(action.command, timeout_seconds);
        done.ok = result.exit_code == 0;
        if (!done.ok) {
          done.error =
              result.timed_out ? "timed out" : result.error.substr(0, result.error.find('\n'));
          fmt::print(out, "FAILED {} {}: {}\n", verb, action.node, printable(done.error));
        } else {
          fmt::print(out, "{} {}{}\n", verb, action.node, printable(detail));
        }
        break;
      }
    }
    applied.push_back(std::move(done));
  }
  std::fflush(out);
  return applied;
}

}  // namespace commcert
