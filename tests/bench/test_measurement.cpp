#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "bench/measurement.hpp"
#include "comm/batch_layout.hpp"

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

// --- nccl-tests' figure: operations back to back ------------------------------------------

TEST(DeriveFigures, BackToBackSpansGiveTheTimeWhenEveryRankHasOne) {
  // Windows leave out the gaps between operations; the span over the batch, divided by its
  // operations, is what nccl-tests reports, so it decides time and bandwidth. The windows still
  // name the straggler.
  Measurement m = measurement(CollectiveKind::kAllReduce, 8 << 20, {1e-3, 2e-3, 3e-3});
  m.ranks[0].back_to_back_seconds = 3.0e-3;
  m.ranks[1].back_to_back_seconds = 3.2e-3;
  m.ranks[2].back_to_back_seconds = 3.4e-3;
  const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
  EXPECT_EQ(f.timing, TimingMethod::kBackToBack);
  EXPECT_DOUBLE_EQ(f.time_seconds, 3.2e-3);
  EXPECT_DOUBLE_EQ(f.algbw_bytes_per_second, 8388608 / 3.2e-3);
  EXPECT_DOUBLE_EQ(derive_figures(m, RankAggregation::kMax).time_seconds, 3.4e-3);
  EXPECT_DOUBLE_EQ(derive_figures(m, RankAggregation::kRankZero).time_seconds, 3.0e-3);
  EXPECT_EQ(f.straggler_rank, 0);
  EXPECT_DOUBLE_EQ(f.rank_max_seconds, 3e-3);  // rank times stay the windows
  EXPECT_EQ(name_of(f.timing), "back_to_back");
}

TEST(DeriveFigures, OneRankWithoutASpanFallsBackToWindowsForAll) {
  // Mixing spans with windows would compare different things across ranks.
  Measurement m = measurement(CollectiveKind::kAllReduce, 8 << 20, {1e-3, 2e-3, 3e-3});
  m.ranks[0].back_to_back_seconds = 9e-3;
  m.ranks[2].back_to_back_seconds = 9e-3;
  const MeasurementFigures f = derive_figures(m, RankAggregation::kMean);
  EXPECT_EQ(f.timing, TimingMethod::kWindows);
  EXPECT_DOUBLE_EQ(f.time_seconds, 2e-3);
  EXPECT_EQ(name_of(f.timing), "windows");
}

TEST(BatchLayout, SlicesArePageAlignedAndMustAllFit) {
  EXPECT_EQ(batch_slice_stride(8, 20, 1 << 20), 4096u);  // tiny outputs still get a page each
  EXPECT_EQ(batch_slice_stride(4096, 20, 20 * 4096), 4096u);
  EXPECT_EQ(batch_slice_stride(4097, 20, 20 * 8192), 8192u);
  EXPECT_FALSE(batch_slice_stride(4097, 20, 20 * 8192 - 1).has_value());
  EXPECT_FALSE(batch_slice_stride(32 << 20, 20, 32 << 20).has_value());  // one size, 20 slices
  // No receive buffer (a non-root rank of an out-of-place reduce): every operation shares it.
  EXPECT_EQ(batch_slice_stride(0, 20, 0), 0u);
}

TEST(BatchLayout, TheReceiveBufferGrowsOnceForTheRoundWhenMemoryAllows) {
  constexpr std::uint64_t kMiB = 1 << 20;
  constexpr std::uint64_t kGiB = 1ULL << 30;
  // Default sweep: 32 MiB, 20 iterations, buffers reserved for 32 MiB: 640 MiB of slices.
  EXPECT_EQ(batch_receive_bytes(32 * kMiB, 20, 32 * kMiB, 32 * kMiB, 70 * kGiB), 640 * kMiB);
  // A sweep to 128 MiB: up to 6 MiB the 20 slices fit the 128 MiB reserved; at 8 MiB the buffer
  // grows at once for every size of the round (up to 128 MiB), so it never grows again.
  EXPECT_EQ(batch_receive_bytes(6 * kMiB, 20, 128 * kMiB, 128 * kMiB, 70 * kGiB), 128 * kMiB);
  EXPECT_EQ(batch_receive_bytes(8 * kMiB, 20, 128 * kMiB, 128 * kMiB, 70 * kGiB), 20 * 128 * kMiB);
  // Already room: nothing to allocate.
  EXPECT_EQ(batch_receive_bytes(1 * kMiB, 20, 20 * kMiB, 128 * kMiB, 0), 20 * kMiB);
  // Not enough memory for the whole round, enough for this size: this size only.
  EXPECT_EQ(batch_receive_bytes(4 * kMiB, 20, 32 * kMiB, 1 * kGiB, 100 * kMiB), 80 * kMiB);
  // Not even that: the batch interleaves its checks instead.
  EXPECT_EQ(batch_receive_bytes(16 * kGiB, 20, 16 * kGiB, 16 * kGiB, 40 * kGiB), 16 * kGiB);
  EXPECT_EQ(batch_receive_bytes(0, 20, 4096, 4096, 0), 4096u);
}

TEST(BatchLayout, WhatTheReceiveBufferGrowsToHoldsTheSlices) {
  constexpr std::uint64_t kMiB = 1 << 20;
  for (const std::uint64_t image : {std::uint64_t{1}, 4097 * std::uint64_t{1}, 3 * kMiB + 5}) {
    const std::uint64_t grown = batch_receive_bytes(image, 7, image, 8 * kMiB, 1ULL << 40);
    EXPECT_TRUE(batch_slice_stride(image, 7, grown).has_value()) << image;
  }
}

}  // namespace
}  // namespace commcert
