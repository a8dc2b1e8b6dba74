#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "history/compare.hpp"
#include "history/history_db.hpp"

namespace commcert {

// "12.35 GB/s" for bandwidths (bytes/s in the records), "741.9 TFLOP/s" for burn.
[[nodiscard]] std::string format_metric_value(const std::string& metric, double value);

// What a figure measures, without its node: "allreduce 1 MiB busbw (mpi float sum ...)".
[[nodiscard]] std::string describe_figure(const RunFigure& sample);

// The table `commcert compare` prints: one line per figure that moved (all of them with
// `all_rows`), regressions first, then a count per kind and, when some figure fails the gate,
// one `regressed:` line naming the nodes they point at, most first.
[[nodiscard]] std::string render_changes(const std::vector<MetricChange>& changes, bool all_rows);

// `commcert history show NODE`: the node's runs (state per run), then each figure's value in
// the last `last_runs` runs and its change from the first of them to the last.
[[nodiscard]] std::string render_trend(const std::string& node, const std::vector<NodeRun>& runs,
                                       std::size_t last_runs);

}  // namespace commcert
