#include <cmath>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "bench/burn.hpp"
#include "kernels/burn_math.hpp"

namespace commcert {
namespace {

std::uint64_t fingerprint(const std::vector<std::uint64_t>& bits) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < bits.size(); ++i)
    sum += fingerprint_share(i, bits[i]);
  return sum;
}

TEST(BurnInputs, LieInMinusOneToOneAndAreDeterministic) {
  std::set<float> distinct;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const float v = burn_input_value(42, 0, i);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    ASSERT_EQ(v, burn_input_value(42, 0, i));
    distinct.insert(v);
    const double d = burn_input_value_f64(42, 1, i);
    ASSERT_GE(d, -1.0);
    ASSERT_LT(d, 1.0);
  }
  // 24 random bits: nearly every value differs, so mantissa bits toggle (power draw).
  EXPECT_GT(distinct.size(), 99000u);
}

TEST(BurnInputs, DifferBetweenMatricesAndSeeds) {
  int same_matrix = 0;
  int same_seed = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    same_matrix += burn_input_value(1, 0, i) == burn_input_value(1, 1, i);
    same_seed += burn_input_value(1, 0, i) == burn_input_value(2, 0, i);
  }
  EXPECT_LT(same_matrix, 5);
  EXPECT_LT(same_seed, 5);
}

TEST(Fingerprint, DoesNotDependOnSummationOrder) {
  std::vector<std::uint64_t> bits;
  for (std::uint64_t i = 0; i < 1000; ++i)
    bits.push_back(i * 2654435761u);
  std::uint64_t forward = 0;
  std::uint64_t backward = 0;
  for (std::size_t i = 0; i < bits.size(); ++i)
    forward += fingerprint_share(i, bits[i]);
  for (std::size_t i = bits.size(); i-- > 0;)
    backward += fingerprint_share(i, bits[i]);
  EXPECT_EQ(forward, backward);
}

TEST(Fingerprint, ChangesWithOneFlippedBitOrTwoSwappedElements) {
  std::vector<std::uint64_t> bits(4096);
  for (std::size_t i = 0; i < bits.size(); ++i)
    bits[i] = burn_input_bits(7, 0, i) & 0xffff;
  const std::uint64_t reference = fingerprint(bits);
  auto flipped = bits;
  flipped[1234] ^= 1;
  EXPECT_NE(fingerprint(flipped), reference);
  auto swapped = bits;
  std::swap(swapped[10], swapped[20]);
  ASSERT_NE(bits[10], bits[20]);
  EXPECT_NE(fingerprint(swapped), reference);
}

TEST(GemmFlops, CountsAMultiplyAndAnAddPerTerm) {
  EXPECT_DOUBLE_EQ(gemm_flops(8192, 8192, 8192), 2.0 * 8192.0 * 8192.0 * 8192.0);
  EXPECT_DOUBLE_EQ(gemm_flops(2, 3, 4), 48.0);
}

TEST(PowerFma, StaysBoundedAndKeepsChangingOverALongRun) {
  const auto shears = power_fma_shears();
  for (int p = 0; p < kPowerFmaPairs; ++p) {
    float x = 0;
    float y = 0;
    power_fma_start(99, 12345, p, x, y);
    const double radius0 = std::hypot(x, y);
    std::set<float> seen;
    for (int step = 0; step < (1 << 16); ++step) {
      power_fma_step(x, y, shears.pair[p]);
      if (step % 64 == 0) seen.insert(x);
    }
    ASSERT_TRUE(std::isfinite(x) && std::isfinite(y));
    // A shear rotation preserves area: the point stays near its starting orbit, never
    // collapsing to a fixed point (which would stop the bits toggling) nor escaping.
    EXPECT_LT(std::hypot(x, y), 4 * radius0 + 1);
    EXPECT_GT(seen.size(), 900u);
  }
}

TEST(PowerFma, FlopCountMatchesTheStepDefinition) {
  // 3 FMAs per pair per step, 2 FLOPs per FMA.
  EXPECT_DOUBLE_EQ(power_fma_flops(10, 100), 2.0 * 3 * kPowerFmaPairs * 10 * 100);
}

TEST(BurnWindowSpans, ChecksSplitTheWindowAndEveryLaunchIsTimedOnce) {
  using Spans = std::vector<std::uint64_t>;
  EXPECT_EQ(burn_window_spans(10, 0), Spans{10});  // one check, after the window
  EXPECT_EQ(burn_window_spans(10, 1), Spans(10, 1));
  EXPECT_EQ(burn_window_spans(10, 3), (Spans{3, 3, 3, 1}));
  EXPECT_EQ(burn_window_spans(9, 3), (Spans{3, 3, 3}));  // no empty span at the end
  // At the window's size and one step either side.
  EXPECT_EQ(burn_window_spans(10, 9), (Spans{9, 1}));
  EXPECT_EQ(burn_window_spans(10, 10), Spans{10});
  EXPECT_EQ(burn_window_spans(10, 11), Spans{10});
  EXPECT_EQ(burn_window_spans(0, 4), Spans{1});  // a window always runs at least one launch
}

}  // namespace
}  // namespace commcert
