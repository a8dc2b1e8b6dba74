#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.hpp"

namespace commcert {

// One figure of a node across its latest runs: what it measures, its value in each shown run
// (nullopt where that run lacks it) and the change from the first value to the last.
struct TrendRow {
  RunFigure figure;  // one of the runs' figures of this key: what it measures, its metric
  std::vector<std::optional<double>> values;
  std::optional<double> change_pct;  // nullopt: fewer than two values, or the first is 0
};

// A node's trend as `history show` prints it and the HTML report shows it (`report --history`).
struct NodeTrend {
  std::string node;
  std::size_t runs_stored = 0;  // every run naming the node; `runs` holds the latest of them
  std::vector<NodeRun> runs;    // oldest first
  std::vector<TrendRow> rows;   // in order of first appearance
};

// The node's last `last_runs` runs of `runs` (all of them, oldest first, as
// HistoryDb::node_history returns them) and a row per figure.
[[nodiscard]] NodeTrend node_trend(const std::string& node, const std::vector<NodeRun>& runs,
                                   std::size_t last_runs);

}  // namespace commcert
