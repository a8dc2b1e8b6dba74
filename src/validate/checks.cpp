#include "validate/checks.hpp"

#include <array>
#include <iterator>

#include "kernels/collective_types.hpp"

namespace commcert {
namespace {

// The collective checks come from the collective table (kernels/collective_types.hpp), in its
// verdict_order, after the checks of the other stages.
constexpr CheckInfo kStageChecks[] = {
    {"health.node", CheckKind::kHealthNode, ""},
    {"health.gpu", CheckKind::kHealthGpu, ""},
    {"health.ib", CheckKind::kHealthIb, ""},
    {"burn", CheckKind::kBurn, ""},
    {"membw", CheckKind::kMembw, ""},
    {"links", CheckKind::kLinks, ""},
    {"p2p", CheckKind::kP2p, ""},
};
constexpr std::size_t kStageCheckCount = std::size(kStageChecks);

constexpr auto kChecks = [] {
  std::array<CheckInfo, kStageCheckCount + kCollectiveKindCount> checks{};
  for (std::size_t i = 0; i < kStageCheckCount; ++i)
    checks[i] = kStageChecks[i];
  for (const CollectiveTraits& row : kCollectiveTraits) {
    checks[kStageCheckCount + row.verdict_order] = {row.check_id, CheckKind::kCollective, row.name};
  }
  return checks;
}();

}  // namespace

std::span<const CheckInfo> all_checks() {
  return kChecks;
}

const CheckInfo* find_check(std::string_view id) {
  for (const auto& check : kChecks) {
    if (check.id == id) return &check;
  }
  return nullptr;
}

std::size_t check_order(std::string_view id) {
  for (std::size_t i = 0; i < std::size(kChecks); ++i) {
    if (kChecks[i].id == id) return i;
  }
  return std::size(kChecks);
}

bool is_rooted_collective(std::string_view collective) {
  const CollectiveTraits* row = find_collective_traits(collective);
  return row != nullptr && row->rooted;
}

}  // namespace commcert
