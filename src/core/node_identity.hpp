#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace commcert {

// The name a rank's evidence is filed under. Resolution order (docs/records.md):
//   1. --node-name (or COMMCERT_NODE_NAME), where "{rank}" expands to the global rank and
//      "{rank/K}" to the rank divided by K, so ranks on one host can stand for several nodes;
//   2. SLURMD_NODENAME, the scheduler's name for the node (what drain/resume acts on);
//   3. the hostname.
struct NodeIdentity {
  std::string node;      // the name used in records
  std::string hostname;  // the machine's hostname, for humans
  std::string source;    // "flag", "COMMCERT_NODE_NAME", "SLURMD_NODENAME" or "hostname"
};

[[nodiscard]] NodeIdentity resolve_node_identity(const std::optional<std::string>& flag_value,
                                                 int rank);

// Node names end up in Slurm commands and file names: letters, digits, '.', '_' and '-' only,
// 1 to 64 characters, not starting with '-' or '.'. Throws UsageError naming `origin`.
void validate_node_name(std::string_view name, std::string_view origin);

// Why `name` is no valid node name (the rule above), or nullopt when it is one.
[[nodiscard]] std::optional<std::string> node_name_problem(std::string_view name);

[[nodiscard]] std::string local_hostname();

}  // namespace commcert
