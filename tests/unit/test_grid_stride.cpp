#include <vector>

#include <gtest/gtest.h>

#include "kernels/grid_stride.hpp"

namespace commcert {
namespace {

// What a kernel's loop does, replayed on the host: how often each index is touched.
std::vector<int> touches(std::uint64_t n, std::uint64_t threads, unsigned unroll) {
  std::vector<int> count(n, 0);
  const std::uint64_t rounds = strided_rounds(n, threads, unroll);
  for (std::uint64_t t = 0; t < threads; ++t) {
    for (std::uint64_t r = 0; r < rounds; ++r) {
      for (unsigned u = 0; u < unroll; ++u) {
        const std::uint64_t i = strided_index(t, threads, r, unroll, u);
        if (i < n) ++count[i];
      }
    }
  }
  return count;
}

TEST(GridStride, EveryElementIsTouchedExactlyOnce) {
  for (std::uint64_t n : {0ull, 1ull, 7ull, 64ull, 1000ull, 4099ull}) {
    for (std::uint64_t threads : {1ull, 3ull, 32ull, 256ull}) {
      for (unsigned unroll : {1u, 2u, 4u}) {
        const auto count = touches(n, threads, unroll);
        for (std::uint64_t i = 0; i < n; ++i) {
          ASSERT_EQ(count[i], 1) << "n=" << n << " threads=" << threads << " unroll=" << unroll
                                 << " i=" << i;
        }
      }
    }
  }
}

TEST(GridStride, NeighbouringThreadsTouchNeighbouringElements) {
  // Coalescing: in every access of a round, thread t+1 reads the element after thread t's.
  for (unsigned u = 0; u < 4; ++u) {
    EXPECT_EQ(strided_index(5, 256, 3, 4, u) + 1, strided_index(6, 256, 3, 4, u));
  }
}

TEST(GridStride, LaunchShapeFillsTheGpuButNeverExceedsTheWork) {
  const LaunchShape big = saturating_launch_shape(132, 1ull << 30, 4);
  EXPECT_EQ(big.blocks, 132u * 8);
  EXPECT_EQ(big.threads_per_block, 256u);
  const LaunchShape small = saturating_launch_shape(132, 1000, 4);
  EXPECT_EQ(small.blocks, 1u);  // 1000 elements fit one block of 256 threads x 4
  EXPECT_EQ(saturating_launch_shape(132, 0, 4).blocks, 1u);
  EXPECT_EQ(saturating_launch_shape(0, 1ull << 30, 4).blocks, 8u);
}

}  // namespace
}  // namespace commcert
