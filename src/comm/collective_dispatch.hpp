#pragma once

#include <array>
#include <cstddef>

#include "kernels/collective_types.hpp"

namespace commcert {

// One backend call per collective kind, listed with its kind so a reader sees which is which.
template <typename Call>
struct CollectiveEntry {
  CollectiveKind kind;
  Call call;
};

// A backend's per-kind call table, indexed by kind. Built at compile time: a backend that lists
// fewer or more calls than there are kinds, or lists them out of enum order, does not compile,
// so a row added to kCollectiveTraits cannot reach a backend that has no call for it.
template <typename Call, std::size_t N>
consteval std::array<Call, kCollectiveKindCount> make_collective_dispatch(
    const CollectiveEntry<Call> (&entries)[N]) {
  static_assert(N == kCollectiveKindCount, "every collective kind needs exactly one backend call");
  std::array<Call, kCollectiveKindCount> calls{};
  for (std::size_t i = 0; i < N; ++i) {
    // Not a constant expression, so a misordered table fails to compile right here.
    if (static_cast<std::size_t>(entries[i].kind) != i) throw "backend calls out of enum order";
    calls[i] = entries[i].call;
  }
  return calls;
}

}  // namespace commcert
