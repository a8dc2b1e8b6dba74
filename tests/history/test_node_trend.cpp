#include <gtest/gtest.h>

#include "history/node_trend.hpp"

namespace commcert {
namespace {

RunFigure figure(const std::string& subject, double value) {
  RunFigure f;
  f.node = "node2";
  f.subject = subject;
  f.variant = "mpi float sum";
  f.bytes = 1 << 20;
  f.metric = "busbw_bytes_per_s";
  f.value = value;
  return f;
}

NodeRun run(const std::string& id, std::vector<RunFigure> figures) {
  NodeRun r;
  r.run.run_id = id;
  r.state = "certified";
  r.metrics = std::move(figures);
  return r;
}

TEST(NodeTrend, KeepsTheLatestRunsAndLinesEachFigureUpAcrossThem) {
  const std::vector<NodeRun> runs = {
      run("a", {figure("allreduce", 100)}),
      run("b", {figure("allreduce", 80), figure("allgather", 50)}),
      run("c", {figure("allreduce", 60)}),
  };
  const NodeTrend trend = node_trend("node2", runs, 2);
  EXPECT_EQ(trend.runs_stored, 3U);
  ASSERT_EQ(trend.runs.size(), 2U);
  EXPECT_EQ(trend.runs[0].run.run_id, "b");
  ASSERT_EQ(trend.rows.size(), 2U);
  EXPECT_EQ(trend.rows[0].figure.subject, "allreduce");
  EXPECT_EQ(trend.rows[0].values, (std::vector<std::optional<double>>{80.0, 60.0}));
  ASSERT_TRUE(trend.rows[0].change_pct);
  EXPECT_DOUBLE_EQ(*trend.rows[0].change_pct, -25.0);
  // allgather is in one shown run only: no change to speak of.
  EXPECT_EQ(trend.rows[1].values, (std::vector<std::optional<double>>{50.0, std::nullopt}));
  EXPECT_FALSE(trend.rows[1].change_pct);
}

TEST(NodeTrend, AFirstValueOfZeroHasNoChangeAndNoRunsNoRows) {
  const NodeTrend trend = node_trend(
      "node2", {run("a", {figure("allreduce", 0)}), run("b", {figure("allreduce", 5)})}, 8);
  ASSERT_EQ(trend.rows.size(), 1U);
  EXPECT_FALSE(trend.rows[0].change_pct);
  const NodeTrend empty = node_trend("node9", {}, 8);
  EXPECT_EQ(empty.runs_stored, 0U);
  EXPECT_TRUE(empty.rows.empty());
}

}  // namespace
}  // namespace commcert
