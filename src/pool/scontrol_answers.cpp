#include "pool/scontrol_answers.hpp"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/node_identity.hpp"
#include "core/printable.hpp"

namespace commcert {

namespace {

// Throws RuntimeFailure, one line naming `line` of scontrol's answer, when `name` is no valid
// node name (the message quotes the name, which may hold any byte: printable keeps it one line).
void check_slurm_node_name(std::string_view name, std::size_t line) {
  try {
    validate_node_name(name, fmt::format("scontrol show node, line {}", line));
  } catch (const UsageError& error) {
    throw RuntimeFailure(printable(error.what()));
  }
}

}  // namespace

std::vector<std::string> show_nodes_command() {
  return {"scontrol", "-o", "show", "node"};
}

std::optional<std::string> missing_slurm_conf(const char* slurm_conf) {
  if (slurm_conf == nullptr || *slurm_conf == '\0') return std::nullopt;
  std::error_code error;
  if (std::filesystem::exists(slurm_conf, error)) return std::nullopt;
  return fmt::format("SLURM_CONF={}: no such file; Slurm cannot be reached from here",
                     printable(slurm_conf));
}

std::string scontrol_failure_line(std::string_view error) {
  std::string_view chosen;
  std::size_t start = 0;
  while (start < error.size()) {
    auto end = error.find('\n', start);
    if (end == std::string_view::npos) end = error.size();
    const auto line = error.substr(start, end - start);
    if (!line.empty() && (chosen.empty() || line.find("fatal:") != std::string_view::npos)) {
      chosen = line;
    }
    start = end + 1;
  }
  return std::string(chosen.empty() ? std::string_view("no message") : chosen);
}

std::optional<std::string> show_nodes_failure(const ProcessResult& result, double timeout_seconds) {
  if (result.timed_out) {
    return fmt::format("scontrol show node timed out after {:g} s (is slurmctld running?)",
                       timeout_seconds);
  }
  if (result.exit_code != 0) {
    return fmt::format("scontrol show node failed (exit {}): {}", result.exit_code,
                       printable(scontrol_failure_line(result.error)));
  }
  return std::nullopt;
}

std::map<std::string, SlurmNodeStatus> parse_scontrol_nodes(std::string_view output) {
  std::map<std::string, SlurmNodeStatus> nodes;
  std::size_t start = 0;
  std::size_t number = 0;
  while (start < output.size()) {
    auto end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    ++number;
    if (auto parsed = parse_scontrol_node(output.substr(start, end - start))) {
      check_slurm_node_name(parsed->first, number);
      nodes.emplace(std::move(parsed->first), std::move(parsed->second));
    }
    start = end + 1;
  }
  return nodes;
}

std::string action_failure(const ProcessResult& result) {
  if (result.timed_out) return "timed out";
  return result.error.substr(0, result.error.find('\n'));
}

std::string action_line(const PoolAction& action, ActionOutcome outcome, std::string_view error) {
  if (action.kind == PoolActionKind::kLeave) {
    return fmt::format("leave  {}: {}\n", printable(action.node), printable(action.why));
  }
  const bool drain = action.kind == PoolActionKind::kDrain;
  const char* verb = drain ? "drain " : "resume";
  const std::string detail = drain ? fmt::format(": {}", action.reason) : "";
  switch (outcome) {
    case ActionOutcome::kDryRun:
      return fmt::format("{} {}{} (dry run)\n", verb, printable(action.node), printable(detail));
    case ActionOutcome::kFailed:
      return fmt::format("FAILED {} {}: {}\n", verb, printable(action.node), printable(error));
    case ActionOutcome::kDone:
      break;
  }
  return fmt::format("{} {}{}\n", verb, printable(action.node), printable(detail));
}

}  // namespace commcert
