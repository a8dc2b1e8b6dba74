#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "bench/sweep_sizes.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

SweepOptions range(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t step_bytes,
                   double step_factor) {
  SweepOptions o;
  o.min_bytes = min_bytes;
  o.max_bytes = max_bytes;
  o.step_bytes = step_bytes;
  o.step_factor = step_factor;
  return o;
}

// The nccl-tests loop: for (size = min; size <= max; size = f > 1 ? size * f : size + step).
std::vector<std::uint64_t> nccl_tests_walk(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                           std::uint64_t step_bytes, std::uint64_t factor) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min_bytes; size <= max_bytes;
       size = factor > 1 ? size * factor : size + step_bytes) {
    sizes.push_back(size);
  }
  return sizes;
}

TEST(SweepSizes, DoublingFrom8BytesTo128MiBIs25Sizes) {
  const auto sizes = sweep_sizes(range(8, 128 * kMiB, kMiB, 2));
  ASSERT_EQ(sizes.size(), 25u);
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes.back(), 128 * kMiB);
  for (std::size_t i = 1; i < sizes.size(); ++i)
    EXPECT_EQ(sizes[i], 2 * sizes[i - 1]);
}

TEST(SweepSizes, MultiplicativeWalksMatchNcclTests) {
  const struct {
    std::uint64_t min, max, factor;
  } cases[] = {{8, 128 * kMiB, 2}, {1, 1000, 3},     {1024, 1024, 2},   {100, 99999, 10},
               {8, 8ull << 30, 2}, {7, 7 * 4096, 4}, {1, 1ull << 40, 2}};
  for (const auto& c : cases) {
    EXPECT_EQ(sweep_sizes(range(c.min, c.max, kMiB, static_cast<double>(c.factor))),
              nccl_tests_walk(c.min, c.max, kMiB, c.factor))
        << c.min << ".." << c.max << " x" << c.factor;
  }
}

TEST(SweepSizes, AdditiveWalksMatchNcclTests) {
  const struct {
    std::uint64_t min, max, step;
  } cases[] = {{kMiB, 4 * kMiB, kMiB}, {0, 100, 10},         {0, 99, 10}, {5, 5, 1},
               {1, 4096, 1},           {8, 128 * kMiB, kMiB}};
  for (const auto& c : cases) {
    EXPECT_EQ(sweep_sizes(range(c.min, c.max, c.step, 1.0)),
              nccl_tests_walk(c.min, c.max, c.step, 1))
        << c.min << ".." << c.max << " +" << c.step;
  }
  // Forgetting -f gives nccl-tests' 1 MiB linear sweep: 128 rows from 8 B to 128 MiB.
  EXPECT_EQ(sweep_sizes(range(8, 128 * kMiB, kMiB, 1.0)).size(), 128u);
}

TEST(SweepSizes, FactorOfOneOrLessMeansAdditive) {
  EXPECT_EQ(sweep_sizes(range(10, 40, 10, 1.0)), (std::vector<std::uint64_t>{10, 20, 30, 40}));
  EXPECT_EQ(sweep_sizes(range(10, 40, 10, 0.5)), (std::vector<std::uint64_t>{10, 20, 30, 40}));
}

TEST(SweepSizes, SingleSize) {
  EXPECT_EQ(sweep_sizes(range(32 * kMiB, 32 * kMiB, kMiB, 1.0)),
            std::vector<std::uint64_t>{32 * kMiB});
  EXPECT_EQ(sweep_sizes(range(32 * kMiB, 32 * kMiB, 0, 1.0)),
            std::vector<std::uint64_t>{32 * kMiB});  // no step needed for one size
  EXPECT_EQ(sweep_sizes(range(64, 64, 0, 2.0)), std::vector<std::uint64_t>{64});
  EXPECT_EQ(sweep_sizes(range(0, 0, 0, 1.0)), std::vector<std::uint64_t>{0});
}

TEST(SweepSizes, MinAboveMaxIsAUsageError) {
  EXPECT_THROW((void)sweep_sizes(range(2 * kMiB, kMiB, kMiB, 1.0)), UsageError);
  EXPECT_THROW((void)sweep_sizes(range(2 * kMiB, kMiB, kMiB, 2.0)), UsageError);
}

TEST(SweepSizes, ZeroStepIsAUsageError) {
  EXPECT_THROW((void)sweep_sizes(range(8, 1024, 0, 1.0)), UsageError);
}

TEST(SweepSizes, FactorFromZeroIsAUsageError) {
  // 0 * f never grows.
  EXPECT_THROW((void)sweep_sizes(range(0, 1024, kMiB, 2.0)), UsageError);
}

TEST(SweepSizes, FactorTooSmallToGrowIsAUsageErrorNotATruncatedSweep) {
  // 8 * 1.1 = 8.8 truncates back to 8: the sweep cannot advance. It must not silently stop
  // after the first size when the user asked for sizes up to 128 MiB.
  EXPECT_THROW((void)sweep_sizes(range(8, 128 * kMiB, kMiB, 1.1)), UsageError);
  EXPECT_THROW((void)sweep_sizes(range(1, 1024, kMiB, 1.5)), UsageError);
  // A fractional factor that does grow every step is fine.
  EXPECT_EQ(sweep_sizes(range(8, 40, kMiB, 1.5)), (std::vector<std::uint64_t>{8, 12, 18, 27, 40}));
}

TEST(SweepSizes, AtMost4096Sizes) {
  EXPECT_EQ(sweep_sizes(range(1, kMaxSweepSizes, 1, 1.0)).size(), kMaxSweepSizes);
  EXPECT_THROW((void)sweep_sizes(range(1, kMaxSweepSizes + 1, 1, 1.0)), UsageError);
  EXPECT_THROW((void)sweep_sizes(range(0, 1ull << 40, 1, 1.0)), UsageError);
}

TEST(SweepSizes, AdditiveStepsNeverWrapAround) {
  const std::uint64_t top = ~std::uint64_t{0};
  const auto sizes = sweep_sizes(range(top - 10, top, 8, 1.0));
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{top - 10, top - 2}));
}

}  // namespace
}  // namespace commcert
