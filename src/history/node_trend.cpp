#include "history/node_trend.hpp"

#include <map>

namespace commcert {

NodeTrend node_trend(const std::string& node, const std::vector<NodeRun>& runs,
                     std::size_t last_runs) {
  NodeTrend trend;
  trend.node = node;
  trend.runs_stored = runs.size();
  const std::size_t first = runs.size() > last_runs ? runs.size() - last_runs : 0;
  trend.runs.assign(runs.begin() + static_cast<std::ptrdiff_t>(first), runs.end());
  std::map<std::string, std::size_t> row_of_key;
  for (std::size_t i = 0; i < trend.runs.size(); ++i) {
    for (const auto& figure : trend.runs[i].metrics) {
      auto [it, inserted] = row_of_key.try_emplace(figure.key(), trend.rows.size());
      if (inserted)
        trend.rows.push_back({figure, std::vector<std::optional<double>>(trend.runs.size()), {}});
      trend.rows[it->second].values[i] = figure.value;
    }
  }
  for (auto& row : trend.rows) {
    std::optional<double> oldest;
    std::optional<double> newest;
    std::size_t seen = 0;
    for (const auto& value : row.values) {
      if (!value) continue;
      if (!oldest) oldest = value;
      newest = value;
      ++seen;
    }
    if (seen >= 2 && *oldest > 0) row.change_pct = (*newest - *oldest) * 100.0 / *oldest;
  }
  return trend;
}

}  // namespace commcert
