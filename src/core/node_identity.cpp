#include "core/node_identity.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/printable.hpp"

namespace commcert {
namespace {

constexpr std::size_t kMaxNodeNameLength = 64;

// The largest K of "{rank/K}": more ranks per node than any machine has is a typo.
constexpr int kMaxRanksPerNode = 1000000;

std::string expand_rank_placeholder(std::string name, int rank, std::string_view origin) {
  // "{rank}" is the rank; "{rank/K}" is the rank divided by K, so K consecutive ranks share a
  // node name (e.g. 8 ranks as 4 nodes of 2 with --node-name 'node{rank/2}').
  for (auto open = name.find("{rank"); open != std::string::npos; open = name.find("{rank", open)) {
    const auto close = name.find('}', open);
    if (close == std::string::npos) break;
    const std::string inside = name.substr(open + 5, close - open - 5);
    int divisor = 1;
    if (!inside.empty()) {
      if (inside.front() != '/' || inside.size() < 2 ||
          inside.find_first_not_of("0123456789", 1) != std::string::npos) {
        break;  // not a placeholder we know: validation rejects the braces
      }
      // K = 0 used to be taken as 1 silently (every rank its own node), and a K beyond int
      // escaped as a library exception: both are a mistake in the pattern, said as such.
      const std::string digits = inside.substr(1);
      if (digits.size() > 7 || std::stoi(digits) < 1 || std::stoi(digits) > kMaxRanksPerNode) {
        throw UsageError(fmt::format(
            "invalid node name pattern '{}' from {}: in {{rank/K}}, K must be from 1 to {}", name,
            origin, kMaxRanksPerNode));
      }
      divisor = std::stoi(digits);
    }
    const std::string value = std::to_string(rank / divisor);
    name.replace(open, close - open + 1, value);
    open += value.size();
  }
  return name;
}

}  // namespace

std::string local_hostname() {
  std::array<char, 256> buffer{};
  if (::gethostname(buffer.data(), buffer.size() - 1) != 0) return "localhost";
  return buffer.data();
}

std::optional<std::string> node_name_problem(std::string_view name) {
  if (name.empty()) return "empty";
  if (name.size() > kMaxNodeNameLength)
    return fmt::format("longer than {} characters", kMaxNodeNameLength);
  if (name.front() == '-' || name.front() == '.') return "must not start with '-' or '.'";
  for (char c : name) {
    const bool allowed =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (!allowed) return "only letters, digits, '.', '_' and '-' are allowed";
  }
  return std::nullopt;
}

void validate_node_name(std::string_view name, std::string_view origin) {
  if (const auto why = node_name_problem(name))
    throw UsageError(
        fmt::format("invalid node name '{}' from {}: {}", printable(name), origin, *why));
}

NodeIdentity resolve_node_identity(const std::optional<std::string>& flag_value, int rank) {
  NodeIdentity identity;
  identity.hostname = local_hostname();
  if (flag_value && !flag_value->empty()) {
    identity.node = expand_rank_placeholder(*flag_value, rank, "--node-name");
    identity.source = "flag";
  } else if (const char* env = std::getenv("COMMCERT_NODE_NAME"); env && *env) {
    identity.node = expand_rank_placeholder(env, rank, "COMMCERT_NODE_NAME");
    identity.source = "COMMCERT_NODE_NAME";
  } else if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm && *slurm) {
    identity.node = slurm;
    identity.source = "SLURMD_NODENAME";
  } else {
    // Short hostname: clusters name nodes without the domain.
    identity.node = identity.hostname.substr(0, identity.hostname.find('.'));
    identity.source = "hostname";
  }
  validate_node_name(identity.node, identity.source == "flag" ? "--node-name" : identity.source);
  return identity;
}

}  // namespace commcert
