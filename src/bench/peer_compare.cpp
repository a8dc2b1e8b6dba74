#include "bench/peer_compare.hpp"

#include <map>

namespace commcert {

std::vector<PeerVerdict> compare_with_peers(const std::vector<PeerResult>& results) {
  std::vector<PeerVerdict> verdicts(results.size());
  // Group members with a result, by (node, model).
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].fingerprint) groups[{results[i].node, results[i].model}].push_back(i);
  }
  for (const auto& [key, members] : groups) {
    std::map<std::uint64_t, std::size_t> votes;
    for (const std::size_t i : members)
      ++votes[*results[i].fingerprint];
    std::optional<std::uint64_t> majority;
    for (const auto& [fingerprint, count] : votes) {
      if (2 * count > members.size()) majority = fingerprint;
    }
    for (const std::size_t i : members) {
      PeerVerdict& verdict = verdicts[i];
      verdict.peers = static_cast<int>(members.size()) - 1;
      if (verdict.peers == 0) continue;
      verdict.mismatch = majority ? *results[i].fingerprint != *majority : votes.size() > 1;
    }
  }
  return verdicts;
}

}  // namespace commcert
