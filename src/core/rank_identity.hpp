#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// Who a global rank is: recorded once per run (meta.json and the "run" record) so every later
// record can name a rank's node without repeating it.
struct RankIdentity {
  int rank = 0;
  int process = 0;   // index of the process driving this rank
  std::string node;  // node identity (see node_identity.hpp)
  std::string hostname;
  int local_rank = 0;  // index among the ranks on the same host
  int pid = 0;
  std::string device;  // "host" or a GPU description
  std::optional<GpuIdentity> gpu;
};

[[nodiscard]] Json to_json(const RankIdentity& identity);
[[nodiscard]] RankIdentity rank_identity_from_json(const Json& json);
[[nodiscard]] Json to_json(const std::vector<RankIdentity>& identities);

// Distinct node names in rank order.
[[nodiscard]] std::vector<std::string> distinct_nodes(const std::vector<RankIdentity>& ranks);

}  // namespace commcert
