#include "report/trend_selection.hpp"

#include <algorithm>

namespace commcert {

TrendSelection select_trend_nodes(const FleetVerdict& verdict, std::size_t limit) {
  std::vector<const NodeVerdict*> nodes;
  nodes.reserve(verdict.nodes.size());
  for (const auto& node : verdict.nodes)
    nodes.push_back(&node);
  const auto trouble_first = [](NodeState state) {
    return state == NodeState::kQuarantined ? 0 : state == NodeState::kInconclusive ? 1 : 2;
  };
  std::stable_sort(nodes.begin(), nodes.end(), [&](const NodeVerdict* a, const NodeVerdict* b) {
    return trouble_first(a->state) < trouble_first(b->state);
  });
  TrendSelection selection;
  for (const NodeVerdict* node : nodes) {
    if (selection.nodes.size() == limit) {
      ++selection.left_out;
    } else {
      selection.nodes.push_back(node->node);
    }
  }
  return selection;
}

}  // namespace commcert
