#include "validate/checks.hpp"

#include <iterator>

namespace commcert {
namespace {

// The collective names are the record contract's (docs/records.md, kind `collective`); a test
// keeps them in step with the sweep's own table (src/bench/collectives.cpp).
constexpr CheckInfo kChecks[] = {
    {"health.node", CheckKind::kHealthNode, "", "a `health` record with component `node`"},
    {"health.gpu", CheckKind::kHealthGpu, "", "a `health` record with component `gpu` per GPU"},
    {"health.ib", CheckKind::kHealthIb, "", "a `health` record with component `ib_port` per port"},
    {"burn", CheckKind::kBurn, "", "a measured `burn` record per GPU"},
    {"membw", CheckKind::kMembw, "", "a measured `membw` record per GPU"},
    {"collective.allreduce", CheckKind::kCollective, "allreduce",
     "a checked allreduce measurement"},
    {"collective.allgather", CheckKind::kCollective, "allgather",
     "a checked allgather measurement"},
    {"collective.reducescatter", CheckKind::kCollective, "reducescatter",
     "a checked reducescatter measurement"},
    {"collective.alltoall", CheckKind::kCollective, "alltoall", "a checked alltoall measurement"},
    {"collective.broadcast", CheckKind::kCollective, "broadcast",
     "a checked broadcast measurement"},
    {"collective.reduce", CheckKind::kCollective, "reduce", "a checked reduce measurement"},
    {"collective.sendrecv", CheckKind::kCollective, "sendrecv", "a checked sendrecv measurement"},
    {"collective.gather", CheckKind::kCollective, "gather", "a checked gather measurement"},
    {"collective.scatter", CheckKind::kCollective, "scatter", "a checked scatter measurement"},
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
