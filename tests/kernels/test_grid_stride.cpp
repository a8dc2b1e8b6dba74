#include <vector>

#include <gtest/gtest.h>

#include "kernels/grid_stride.hpp"

namespace commcert {
namespace {

using IndexOf = std::uint64_t (*)(std::uint64_t, std::uint64_t, std::uint64_t, unsigned, unsigned);

// What a kernel's loop does, replayed on the host: how often each index is touched.
std::vector<int> touches(std::uint64_t n, std::uint64_t threads, unsigned unroll,
                         IndexOf index_of = strided_index) {
  std::vector<int> count(n, 0);
  const std::uint64_t rounds = strided_rounds(n, threads, unroll);
  for (std::uint64_t t = 0; t < threads; ++t) {
    for (std::uint64_t r = 0; r < rounds; ++r) {
      for (unsigned u = 0; u < unroll; ++u) {
        const std::uint64_t i = index_of(t, threads, r, unroll, u);
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

TEST(GridStride, WarpContiguousTouchesEveryElementExactlyOnce) {
  // 33 and 100 threads: a last warp narrower than 32 must neither skip nor repeat elements.
  for (std::uint64_t n : {0ull, 1ull, 7ull, 64ull, 1000ull, 4099ull, 20000ull}) {
    for (std::uint64_t threads : {1ull, 3ull, 32ull, 33ull, 100ull, 256ull}) {
      for (unsigned unroll : {1u, 2u, 8u, 16u}) {
        const auto count = touches(n, threads, unroll, warp_contiguous_index);
        for (std::uint64_t i = 0; i < n; ++i) {
          ASSERT_EQ(count[i], 1) << "n=" << n << " threads=" << threads << " unroll=" << unroll
                                 << " i=" << i;
        }
      }
    }
  }
}

TEST(GridStride, AWarpsAccessesAreSideBySide) {
  // Lanes of one access are consecutive (coalesced); the warp's next access starts right after.
  EXPECT_EQ(warp_contiguous_index(37, 256, 0, 8, 0) + 1, warp_contiguous_index(38, 256, 0, 8, 0));
  EXPECT_EQ(warp_contiguous_index(63, 256, 0, 8, 0) + 1, warp_contiguous_index(32, 256, 0, 8, 1));
  EXPECT_EQ(warp_contiguous_index(32, 256, 0, 8, 0), 32u * 8);
  EXPECT_EQ(warp_contiguous_index(0, 256, 1, 8, 0), 256u * 8);
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
