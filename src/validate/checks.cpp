#include "validate/checks.hpp"

#include <iterator>

namespace commcert {
namespace {

// The collective names are the record contract's (docs/records.md, kind `collective`); a test
// keeps them in step with the sweep's own table (src/bench/collectives.cpp).
constexpr CheckInfo kChecks[] = {
    {"health.node", CheckKind::kHealthNode, ""},
    {"health.gpu", CheckKind::kHealthGpu, ""},
    {"health.ib", CheckKind::kHealthIb, ""},
    {"burn", CheckKind::kBurn, ""},
    {"membw", CheckKind::kMembw, ""},
    {"collective.allreduce", CheckKind::kCollective, "allreduce"},
    {"collective.allgather", CheckKind::kCollective, "allgather"},
    {"collective.reducescatter", CheckKind::kCollective, "reducescatter"},
    {"collective.alltoall", CheckKind::kCollective, "alltoall"},
    {"collective.broadcast", CheckKind::kCollective, "broadcast"},
    {"collective.reduce", CheckKind::kCollective, "reduce"},
    {"collective.sendrecv", CheckKind::kCollective, "sendrecv"},
    {"collective.gather", CheckKind::kCollective, "gather"},
    {"collective.scatter", CheckKind::kCollective, "scatter"},
};

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
  return collective == "broadcast" || collective == "reduce" || collective == "gather" ||
         collective == "scatter";
}

}  // namespace commcert
