#pragma once

// What the tests of `sweep --groups` and of the rounds it plans share.

#include <functional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/rank_identity.hpp"

namespace commcert::test_support {

// `per_node` ranks on each of `nodes` nodes named n0, n1, ...
inline std::vector<RankIdentity> job(int nodes, int per_node) {
  std::vector<RankIdentity> ranks;
  for (int n = 0; n < nodes; ++n) {
    for (int local = 0; local < per_node; ++local) {
      RankIdentity r;
      r.rank = static_cast<int>(ranks.size());
      r.node = "n" + std::to_string(n);
      r.local_rank = local;
      ranks.push_back(r);
    }
  }
  return ranks;
}

// The message of the UsageError `f` throws, or "no error".
inline std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace commcert::test_support
