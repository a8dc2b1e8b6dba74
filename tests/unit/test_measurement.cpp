#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "bench/measurement.hpp"

namespace commcert {
namespace {

std::vector<RankMeasurement> ranks_with_times(const std::vector<double>& seconds) {
  std::vector<RankMeasurement> ranks;
  for (std::size_t r = 0; r < seconds.size(); ++r) {
    RankMeasurement m;
    m.rank = static_cast<int>(r);
    m.mean_seconds = seconds[r];
    ranks.push_back(m);
  }
  return ranks;
}

Measurement measurement(CollectiveKind kind, std::uint64_t bytes,
                        const std::vector<double>& rank_seconds) {
  Measurement m;
  m.collective = kind;
  m.type = DataType::kFloat;
  m.bytes = bytes;
  m.count = bytes / 4;
  m.nranks = static_cast<int>(rank_seconds.size());
  m.ranks = ranks_with_times(rank_seconds);
  m.iteration_seconds = {0.004, 0.005, 0.006};
  return m;
}

TEST(CombineRankTimes, EachAggregationLikeNcclTestsDashA) {
  // Rank 0 is neither the fastest nor the slowest, so every mode gives a different answer.
  const auto ranks = ranks_with_times({3e-3, 1e-3, 2e-3, 6e-3});
  EXPECT_DOUBLE_EQ(combine_rank_times(ranks, RankAggregation::kRankZero), 3e-3);  // -a 0
  EXPECT_DOUBLE_EQ(combine_rank_times(ranks, RankAggregation::kMean), 3e-3);      // -a 1
  EXPECT_DOUBLE_EQ(combine_rank_times(ranks, RankAggregation::kMin), 1e-3);       // -a 2
  EXPECT_DOUBLE_EQ(combine_rank_times(ranks, RankAggregation::kMax), 6e-3);       // -a 3
  const auto skewed = ranks_with_times({2e-3, 1e-3, 1e-3, 8e-3});
  EXPECT_DOUBLE_EQ(combine_rank_times(skewed, RankAggregation::kMean), 3e-3);
  EXPECT_DOUBLE_EQ(combine_rank_times(skewed, RankAggregation::kRankZero), 2e-3);
}

TEST(CombineRankTimes, AggregationValuesMatchNcclTestsNumbers) {
  // -a takes 0..3 on the command line; the enum values are that number.
  EXPECT_EQ(static_cast<int>(RankAggregation::kRankZero), 0);
  EXPECT_EQ(static_cast<int>(RankAggregation::kMean), 1);
  EXPECT_EQ(static_cast<int>(RankAggregation::kMin), 2);
  EXPECT_EQ(static_cast<int>(RankAggregation::kMax), 3);
}

TEST(CombineRankTimes, NoRanksThrows) {
  EXPECT_THROW((void)combine_rank_times({}, RankAggregation::kMean), std::invalid_argument);
}

TEST(DeriveFigures, BandwidthsFromTheCombinedTime) {
  // 8 MiB allreduce on 4 ranks, mean time 2 ms.
  const Measurement m = measurement(CollectiveKind::kAllReduce, 8 << 20, {1e-3, 2e-3, 2e-3, 3e-3});
  const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
  EXPECT_DOUBLE_EQ(f.time_seconds, 2e-3);
  EXPECT_DOUBLE_EQ(f.algbw_bytes_per_second, 8388608 / 2e-3);
  EXPECT_DOUBLE_EQ(f.busbw_bytes_per_second, 8388608 / 2e-3 * 1.5);  // 2 * 3 / 4
  // With -a 3 the slowest rank's time decides.
  const MeasurementFigures slowest = derive_figures(m, RankAggregation::kMax);
  EXPECT_DOUBLE_EQ(slowest.time_seconds, 3e-3);
  EXPECT_DOUBLE_EQ(slowest.algbw_bytes_per_second, 8388608 / 3e-3);
}

TEST(DeriveFigures, BusFactorOfEachCollective) {
  const struct {
    CollectiveKind kind;
    double factor;  // for 8 ranks
  } cases[] = {{CollectiveKind::kAllReduce, 1.75},      {CollectiveKind::kAllGather, 0.875},
               {CollectiveKind::kReduceScatter, 0.875}, {CollectiveKind::kAllToAll, 0.875},
               {CollectiveKind::kBroadcast, 1.0},       {CollectiveKind::kSendRecv, 1.0}};
  for (const auto& c : cases) {
    const Measurement m = measurement(c.kind, 1000000, std::vector<double>(8, 1e-3));
    const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
    EXPECT_DOUBLE_EQ(f.algbw_bytes_per_second, 1e9);
    EXPECT_DOUBLE_EQ(f.busbw_bytes_per_second, 1e9 * c.factor);
  }
  // One rank: no bus traffic for ring-factor collectives.
  const Measurement single = measurement(CollectiveKind::kAllReduce, 1000, {1e-6});
  EXPECT_DOUBLE_EQ(derive_figures(single, RankAggregation::kMean).busbw_bytes_per_second, 0.0);
}

TEST(DeriveFigures, StragglerIsTheRankWithLeastTimeInside) {
  // Rank 2 arrived last, so it spent least time waiting inside the operation.
  const Measurement m =
      measurement(CollectiveKind::kAllReduce, 1 << 20, {5.0e-3, 5.2e-3, 1.0e-3, 4.8e-3, 5.1e-3});
  const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
  EXPECT_EQ(f.straggler_rank, 2);
  EXPECT_DOUBLE_EQ(f.rank_min_seconds, 1.0e-3);
  EXPECT_DOUBLE_EQ(f.rank_max_seconds, 5.2e-3);
  EXPECT_DOUBLE_EQ(f.rank_median_seconds, 5.0e-3);
  EXPECT_DOUBLE_EQ(f.straggler_lead_seconds, 4.0e-3);  // median - its time
}

TEST(DeriveFigures, StragglerLeadWithAnEvenNumberOfRanks) {
  const Measurement m = measurement(CollectiveKind::kAllGather, 1 << 20, {4e-3, 2e-3, 6e-3, 8e-3});
  const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
  EXPECT_EQ(f.straggler_rank, 1);
  EXPECT_DOUBLE_EQ(f.rank_median_seconds, 5e-3);
  EXPECT_DOUBLE_EQ(f.straggler_lead_seconds, 3e-3);
}

TEST(DeriveFigures, IterationSummary) {
  Measurement m = measurement(CollectiveKind::kAllReduce, 1 << 20, {1e-3, 1e-3});
  m.iteration_seconds = {3e-3, 1e-3, 2e-3, 10e-3};
  const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
  EXPECT_EQ(f.iterations.count, 4u);
  EXPECT_DOUBLE_EQ(f.iterations.min, 1e-3);
  EXPECT_DOUBLE_EQ(f.iterations.max, 10e-3);
  EXPECT_DOUBLE_EQ(f.iterations.median, 2.5e-3);
  EXPECT_DOUBLE_EQ(f.iterations.p99, 10e-3);
  EXPECT_DOUBLE_EQ(f.iterations.mean, 4e-3);
}

TEST(DeriveFigures, WrongElementsAreNullWhenNothingWasChecked) {
  Measurement m = measurement(CollectiveKind::kAllReduce, 1 << 20, {1e-3, 1e-3, 1e-3});
  const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
  EXPECT_FALSE(f.wrong_elements.has_value());  // missing evidence is not zero
  EXPECT_TRUE(f.wrong_ranks.empty());
}

TEST(DeriveFigures, WrongElementsAreSummedAndTheRanksNamed) {
  Measurement m = measurement(CollectiveKind::kAllReduce, 1 << 20, {1e-3, 1e-3, 1e-3, 1e-3});
  for (auto& r : m.ranks)
    r.checked = true;
  const MeasurementFigures clean = derive_figures(m, RankAggregation::kMean);
  ASSERT_TRUE(clean.wrong_elements.has_value());
  EXPECT_EQ(*clean.wrong_elements, 0u);
  EXPECT_TRUE(clean.wrong_ranks.empty());

  m.ranks[1].wrong_elements = 7;
  m.ranks[3].wrong_elements = 5;
  const MeasurementFigures dirty = derive_figures(m, RankAggregation::kMean);
  ASSERT_TRUE(dirty.wrong_elements.has_value());
  EXPECT_EQ(*dirty.wrong_elements, 12u);
  EXPECT_EQ(dirty.wrong_ranks, (std::vector<int>{1, 3}));
}

TEST(DeriveFigures, ACheckOnSomeRanksIsStillACheck) {
  Measurement m = measurement(CollectiveKind::kReduce, 1 << 20, {1e-3, 1e-3});
  m.ranks[0].checked = true;  // e.g. only the root of a reduce has an output to check
  m.ranks[0].wrong_elements = 3;
  const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
  ASSERT_TRUE(f.wrong_elements.has_value());
  EXPECT_EQ(*f.wrong_elements, 3u);
  EXPECT_EQ(f.wrong_ranks, std::vector<int>{0});
}

TEST(DeriveFigures, MeasurementWithoutSamplesThrows) {
  Measurement no_iterations = measurement(CollectiveKind::kAllReduce, 8, {1e-6});
  no_iterations.iteration_seconds.clear();
  EXPECT_THROW((void)derive_figures(no_iterations, RankAggregation::kMean), std::invalid_argument);
  Measurement no_ranks = measurement(CollectiveKind::kAllReduce, 8, {1e-6});
  no_ranks.ranks.clear();
  EXPECT_THROW((void)derive_figures(no_ranks, RankAggregation::kMean), std::invalid_argument);
}

}  // namespace
}  // namespace commcert
