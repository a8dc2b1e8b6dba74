#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "validate/verdict.hpp"

namespace commcert {

// Which nodes' history `report --history` shows, when a fleet has more nodes than a page can
// hold: quarantined nodes first, then inconclusive, then certified, each group in verdict order.
struct TrendSelection {
  std::vector<std::string> nodes;
  std::size_t left_out = 0;
};

[[nodiscard]] TrendSelection select_trend_nodes(const FleetVerdict& verdict, std::size_t limit);

}  // namespace commcert
