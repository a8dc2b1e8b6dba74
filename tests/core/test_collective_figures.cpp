// The figures every output of a collective shows (core/collective_figures), derived in one place.
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "core/collective_figures.hpp"

namespace commcert {
namespace {

TEST(Bandwidth, AlgbwIsBytesOverTimeAndBusbwScalesItByTheBusFactor) {
  // 1 GB in 10 ms on 4 ranks of an allreduce (factor 2 * 3/4): 100 GB/s algbw, 150 GB/s busbw.
  const Bandwidth b = bandwidth_of(1'000'000'000, 0.01, 1.5);
  EXPECT_DOUBLE_EQ(b.algbw_bytes_per_second, 1e11);
  EXPECT_DOUBLE_EQ(b.busbw_bytes_per_second, 1.5e11);
  // One rank moves nothing over a bus.
  EXPECT_DOUBLE_EQ(bandwidth_of(1'000'000'000, 0.01, 0.0).busbw_bytes_per_second, 0.0);
}

TEST(Bandwidth, NoPositiveTimeGivesNoBandwidthRatherThanInfinity) {
  for (const double seconds : {0.0, -1e-9}) {
    const Bandwidth b = bandwidth_of(1 << 20, seconds, 1.0);
    EXPECT_EQ(b.algbw_bytes_per_second, 0.0) << seconds;
    EXPECT_EQ(b.busbw_bytes_per_second, 0.0) << seconds;
  }
  EXPECT_GT(bandwidth_of(1 << 20, 1e-12, 1.0).algbw_bytes_per_second, 0.0);
}

TEST(RankSpread, NamesTheRankWithLeastTimeAsTheOneTheOthersWaitedFor) {
  const std::vector<double> times{3e-3, 1e-3, 4e-3, 2e-3};
  const RankSpread s = rank_spread(times);
  EXPECT_DOUBLE_EQ(s.min_seconds, 1e-3);
  EXPECT_DOUBLE_EQ(s.max_seconds, 4e-3);
  EXPECT_DOUBLE_EQ(s.median_seconds, 2.5e-3);  // even count: mean of the middle two
  EXPECT_EQ(s.straggler_index, 1u);
  EXPECT_DOUBLE_EQ(s.straggler_lead_seconds, 1.5e-3);
}

TEST(RankSpread, TiesNameTheFirstRankAndOneRankHasNoLead) {
  const std::vector<double> tied{2e-3, 1e-3, 1e-3};
  EXPECT_EQ(rank_spread(tied).straggler_index, 1u);
  const std::vector<double> one{5e-3};
  const RankSpread s = rank_spread(one);
  EXPECT_DOUBLE_EQ(s.median_seconds, 5e-3);
  EXPECT_DOUBLE_EQ(s.straggler_lead_seconds, 0.0);
  EXPECT_THROW((void)rank_spread(std::vector<double>{}), std::invalid_argument);
}

}  // namespace
}  // namespace commcert
