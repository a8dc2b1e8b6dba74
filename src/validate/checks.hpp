#pragma once

#include <span>
#include <string_view>

namespace commcert {

// What a check judges. A check is the unit a suite requires and a baseline configures; its id is
// stable (`collective.allreduce`, `burn`, `health.gpu`) and names it on the command line, in
// baselines, suites and verdicts.
enum class CheckKind {
  kCollective,
  kBurn,
  kMembw,
  kHealthGpu,
  kHealthIb,
  kHealthNode,
  kLinks,
  kP2p
};

struct CheckInfo {
  std::string_view id;
  CheckKind kind;
  std::string_view collective;  // the record's `collective` value for kCollective, else empty
};

// Every check, in the order verdicts list them (checks.cpp).
[[nodiscard]] std::span<const CheckInfo> all_checks();
[[nodiscard]] const CheckInfo* find_check(std::string_view id);
// Position in all_checks(), for stable ordering; all_checks().size() for an unknown id.
[[nodiscard]] std::size_t check_order(std::string_view id);

// Collectives are symmetric unless rooted: in a rooted one the root's role skews which rank
// waits, so straggler evidence is not read from them.
[[nodiscard]] bool is_rooted_collective(std::string_view collective);

}  // namespace commcert
