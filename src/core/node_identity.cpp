#include "core/node_identity.hpp"

#include <array>
#include <cctype>
#include <cstdlib>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {
namespace {

constexpr std::size_t kMaxNodeNameLength = 64;

std::string expand_rank_placeholder(std::string name, int rank) {
  static constexpr std::string_view kPlaceholder = "{rank}";
  for (auto at = name.find(kPlaceholder); at != std::string::npos; at = name.find(kPlaceholder)) {
    name.replace(at, kPlaceholder.size(), std::to_string(rank));
  }
  return name;
}

}  // namespace

std::string local_hostname() {
  std::array<char, 256> buffer{};
  if (::gethostname(buffer.data(), buffer.size() - 1) != 0) return "localhost";
  return buffer.data();
}

void validate_node_name(std::string_view name, std::string_view origin) {
  const auto invalid = [&](std::string_view why) {
    return UsageError(fmt::format("invalid node name '{}' from {}: {}", name, origin, why));
  };
  if (name.empty()) throw invalid("empty");
  if (name.size() > kMaxNodeNameLength) {
    throw invalid(fmt::format("longer than {} characters", kMaxNodeNameLength));
  }
  if (name.front() == '-' || name.front() == '.') throw invalid("must not start with '-' or '.'");
  for (char c : name) {
    const bool allowed =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (!allowed) throw invalid("only letters, digits, '.', '_' and '-' are allowed");
  }
}

NodeIdentity resolve_node_identity(const std::optional<std::string>& flag_value, int rank) {
  NodeIdentity identity;
  identity.hostname = local_hostname();
  if (flag_value && !flag_value->empty()) {
    identity.node = expand_rank_placeholder(*flag_value, rank);
    identity.source = "flag";
  } else if (const char* env = std::getenv("COMMCERT_NODE_NAME"); env && *env) {
    identity.node = expand_rank_placeholder(env, rank);
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
