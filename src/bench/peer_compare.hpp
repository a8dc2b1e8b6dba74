#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commcert {

// One GPU's answer to the burn's deterministic computation.
struct PeerResult {
  std::string node;   // node identity: GPUs are compared within a node
  std::string model;  // name plus SM count: only identical parts must agree bit for bit
  std::optional<std::uint64_t> fingerprint;  // nullopt when this GPU produced no result
};

struct PeerVerdict {
  std::optional<bool> mismatch;  // nullopt: no peer to compare with
  int peers = 0;                 // other GPUs of the same node and model that had a result
};

// For each GPU: does its result differ from the majority of same-model GPUs on its node? When
// no fingerprint is shared by more than half of a group (e.g. two GPUs that disagree), no GPU of
// that group can be trusted, so every member whose fingerprint is not unanimous is a mismatch.
[[nodiscard]] std::vector<PeerVerdict> compare_with_peers(const std::vector<PeerResult>& results);

}  // namespace commcert
