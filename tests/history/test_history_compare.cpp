// The history's statistics and its comparison rule (docs/history.md): Welch's t at its
// critical value and one step either side, the percentage threshold at its limit and one step
// either side, pooling, and the order regressions are listed in.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/stats.hpp"
#include "history/compare.hpp"
#include "history/history_text.hpp"
#include "history/run_summary.hpp"
#include "history/significance.hpp"

namespace commcert {
namespace {

RunFigure figure(double value, std::optional<SampleMoments> moments, std::string node = "node0",
                 std::uint64_t bytes = 1 << 20) {
  RunFigure sample;
  sample.node = std::move(node);
  sample.subject = "allreduce";
  sample.variant = "mpi float sum out-of-place node 1 ranks";
  sample.bytes = bytes;
  sample.metric = "busbw_bytes_per_s";
  sample.value = value;
  sample.moments = moments;
  return sample;
}

TEST(WelchTest, MatchesTheTextbookStatisticAndDegreesOfFreedom) {
  // Equal variances and sizes: t = 0.1 / sqrt(0.01/10 * 2), df = 2 (n - 1) = 18.
  const auto result = welch_t_test({10, 1.0, 0.1}, {10, 1.1, 0.1});
  ASSERT_TRUE(result);
  EXPECT_NEAR(result->t, 0.1 / std::sqrt(0.002), 1e-9);
  EXPECT_NEAR(result->degrees_of_freedom, 18.0, 1e-9);
  EXPECT_DOUBLE_EQ(result->critical_t, student_t95(18));
  EXPECT_TRUE(result->significant());
}

TEST(WelchTest, UnequalVariancesUseWelchSatterthwaite) {
  const SampleMoments a{5, 10.0, 1.0};
  const SampleMoments b{20, 11.0, 3.0};
  const double va = 1.0 / 5, vb = 9.0 / 20;
  const auto result = welch_t_test(a, b);
  ASSERT_TRUE(result);
  EXPECT_NEAR(result->degrees_of_freedom, (va + vb) * (va + vb) / (va * va / 4 + vb * vb / 19),
              1e-9);
  EXPECT_DOUBLE_EQ(result->critical_t,
                   student_t95(static_cast<std::size_t>(std::floor(result->degrees_of_freedom))));
}

TEST(WelchTest, SignificantOnlyBeyondTheCriticalValue) {
  // n = 8 and stddev 2 on both sides: the standard error is exactly 1, so t = mean_b - mean_a.
  const SampleMoments a{8, 0.0, 2.0};
  const double critical = welch_t_test(a, {8, 0.0, 2.0})->critical_t;
  EXPECT_FALSE(welch_t_test(a, {8, critical - 0.001, 2.0})->significant());
  EXPECT_FALSE(welch_t_test(a, {8, critical, 2.0})->significant());
  EXPECT_TRUE(welch_t_test(a, {8, critical + 0.001, 2.0})->significant());
  EXPECT_TRUE(welch_t_test(a, {8, -critical - 0.001, 2.0})->significant());
}

TEST(WelchTest, NeedsTwoIterationsOnEachSide) {
  EXPECT_FALSE(welch_t_test({1, 1.0, 0.0}, {10, 2.0, 0.1}));
  EXPECT_FALSE(welch_t_test({10, 1.0, 0.1}, {1, 2.0, 0.0}));
  EXPECT_TRUE(welch_t_test({2, 1.0, 0.1}, {2, 2.0, 0.1}));
}

TEST(WelchTest, SamplesWithoutSpreadDifferOnlyWhenTheirMeansDo) {
  EXPECT_FALSE(welch_t_test({5, 1.0, 0.0}, {5, 1.0, 0.0})->significant());
  EXPECT_TRUE(welch_t_test({5, 1.0, 0.0}, {5, 1.0001, 0.0})->significant());
}

TEST(PoolTest, EqualsTheMomentsOfAllIterationsTogether) {
  const std::vector<double> first = {1.0, 2.0, 4.0};
  const std::vector<double> second = {3.0, 7.0};
  std::vector<double> all = first;
  all.insert(all.end(), second.begin(), second.end());
  const SampleSummary s1 = summarize(first), s2 = summarize(second), s = summarize(all);
  const SampleMoments pooled =
      pool({{s1.count, s1.mean, s1.stddev}, {s2.count, s2.mean, s2.stddev}});
  EXPECT_EQ(pooled.count, 5u);
  EXPECT_NEAR(pooled.mean, s.mean, 1e-12);
  EXPECT_NEAR(pooled.stddev, s.stddev, 1e-12);
}

// Clearly significant moments: both sides without spread, different means.
const SampleMoments kBefore{5, 1.0, 0.0};
const SampleMoments kAfter{5, 2.0, 0.0};

TEST(JudgeChangeTest, ADropCountsFromTheThresholdInclusive) {
  const CompareOptions options{5.0};
  EXPECT_EQ(judge_change(figure(100, kBefore), figure(95.1, kAfter), options).kind,
            ChangeKind::kUnchanged);
  const MetricChange at_limit = judge_change(figure(100, kBefore), figure(95, kAfter), options);
  EXPECT_EQ(at_limit.kind, ChangeKind::kRegression);
  EXPECT_DOUBLE_EQ(at_limit.change_pct, -5.0);
  EXPECT_EQ(judge_change(figure(100, kBefore), figure(94.9, kAfter), options).kind,
            ChangeKind::kRegression);
}

TEST(JudgeChangeTest, ARiseCountsFromTheThresholdInclusive) {
  const CompareOptions options{5.0};
  EXPECT_EQ(judge_change(figure(100, kBefore), figure(104.9, kAfter), options).kind,
            ChangeKind::kUnchanged);
  EXPECT_EQ(judge_change(figure(100, kBefore), figure(105, kAfter), options).kind,
            ChangeKind::kImprovement);
}

TEST(JudgeChangeTest, ALargeDropWithinTheNoiseIsNotARegression) {
  // Half the bandwidth, but iterations spread so widely the difference is not significant.
  const MetricChange change =
      judge_change(figure(100, SampleMoments{3, 1.0, 1.0}), figure(50, SampleMoments{3, 2.0, 1.0}),
                   CompareOptions{5.0});
  EXPECT_EQ(change.kind, ChangeKind::kNoise);
  EXPECT_FALSE(fails_gate(change.kind));
}

TEST(JudgeChangeTest, ADropWithoutIterationDataFailsTheGateUntested) {
  // Fail closed: no per-iteration statistics on one side cannot clear a drop.
  const MetricChange change =
      judge_change(figure(100, kBefore), figure(80, std::nullopt), CompareOptions{5.0});
  EXPECT_EQ(change.kind, ChangeKind::kUntestedDrop);
  EXPECT_TRUE(fails_gate(change.kind));
  EXPECT_FALSE(change.test);
}

TEST(JudgeChangeTest, AZeroBaselineIsNeverADrop) {
  EXPECT_EQ(judge_change(figure(0, kBefore), figure(0, kAfter), CompareOptions{5.0}).kind,
            ChangeKind::kUnchanged);
}

TEST(CompareMetricsTest, ListsRegressionsFirstLargestDropFirstAndPairsByKey) {
  const std::vector<RunFigure> a = {figure(100, kBefore, "node0"), figure(100, kBefore, "node1"),
                                    figure(100, kBefore, "node2"), figure(100, kBefore, "node3")};
  const std::vector<RunFigure> b = {figure(100, kBefore, "node0"), figure(90, kAfter, "node1"),
                                    figure(50, kAfter, "node2"), figure(100, kBefore, "node4")};
  const auto changes = compare_metrics(a, b, CompareOptions{5.0});
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_EQ(changes[0].either().node, "node2");
  EXPECT_EQ(changes[0].kind, ChangeKind::kRegression);
  EXPECT_EQ(changes[1].either().node, "node1");
  EXPECT_EQ(changes[1].kind, ChangeKind::kRegression);
  EXPECT_EQ(changes[2].kind, ChangeKind::kLost);
  EXPECT_EQ(changes[2].either().node, "node3");
  EXPECT_EQ(changes[3].kind, ChangeKind::kUnchanged);
  EXPECT_EQ(changes[4].kind, ChangeKind::kNew);
  EXPECT_EQ(changes[4].either().node, "node4");
}

TEST(CompareMetricsTest, DifferentSizesAndPlacementsAreDifferentFigures) {
  RunFigure in_place = figure(50, kAfter);
  in_place.variant = "mpi float sum in-place node 1 ranks";
  const auto changes =
      compare_metrics({figure(100, kBefore), figure(100, kBefore, "node0", 4096)},
                      {in_place, figure(100, kBefore, "node0", 4096)}, CompareOptions{5.0});
  for (const auto& change : changes)
    EXPECT_NE(change.kind, ChangeKind::kRegression);
}

TEST(RenderChangesTest, NamesTheNodesTheFailingFiguresPointAtMostFirst) {
  RunFigure group = figure(50, kAfter, "node0+node1+node2");
  group.straggler = "node2";
  const auto changes =
      compare_metrics({figure(100, kBefore, "node1"), figure(100, kBefore, "node2"),
                       figure(100, kBefore, "node0+node1+node2"), figure(100, kBefore, "node3")},
                      {figure(50, kAfter, "node1"), figure(50, kAfter, "node2"), group,
                       figure(100, kBefore, "node3")},
                      CompareOptions{5.0});
  const std::string text = render_changes(changes, false);
  EXPECT_NE(text.find("regressed: node2 (1 own figure(s), waited for in 1 group figure(s)); node1 "
                      "(1 own figure(s), waited for in 0 group figure(s))\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("node3"), std::string::npos) << text;  // unchanged: not listed
  EXPECT_EQ(render_changes(compare_metrics({figure(100, kBefore)}, {figure(100, kBefore)},
                                           CompareOptions{5.0}),
                           false)
                .find("regressed:"),
            std::string::npos);
}

TEST(MergeByKeyTest, PoolsRepeatedMeasurementsOfOneFigure) {
  const auto merged =
      merge_by_key({figure(100, SampleMoments{4, 1.0, 0.1}), figure(80, SampleMoments{4, 1.2, 0.1}),
                    figure(60, std::nullopt, "node1")});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_DOUBLE_EQ(merged[0].value, 90.0);
  ASSERT_TRUE(merged[0].moments);
  EXPECT_EQ(merged[0].moments->count, 8u);
  EXPECT_NEAR(merged[0].moments->mean, 1.1, 1e-12);
  // One part without iteration data leaves the pooled figure without any.
  const auto partial = merge_by_key({figure(100, kBefore), figure(100, std::nullopt)});
  EXPECT_FALSE(partial[0].moments);
}

}  // namespace
}  // namespace commcert
