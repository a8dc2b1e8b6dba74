#pragma once

// Index math of the bandwidth and memory-test kernels, shared with the host so tests can prove
// that a launch touches every element exactly once.
//
// A thread keeps `unroll` independent accesses in flight (memory-level parallelism is what
// saturates HBM): thread t of T handles the indices t + (r * unroll + u) * T for rounds
// r = 0, 1, ... and u in [0, unroll), skipping those at or past n. Consecutive threads touch
// consecutive elements in every access, so each warp's loads coalesce.

#include <cstdint>

#include "kernels/host_device.hpp"

namespace commcert {

COMMCERT_HD inline std::uint64_t strided_index(std::uint64_t thread, std::uint64_t threads,
                                               std::uint64_t round, unsigned unroll, unsigned u) {
  return thread + (round * unroll + u) * threads;
}

// The same rounds with each warp's `unroll` accesses side by side: warp w of a round covers
// 32 * unroll consecutive elements, one 32-element run per access (a narrower last warp, when
// `threads` is not a multiple of 32, covers runs of its own width). Every element is still
// touched exactly once; a warp's accesses in flight then fall in fewer DRAM pages.
COMMCERT_HD inline std::uint64_t warp_contiguous_index(std::uint64_t thread, std::uint64_t threads,
                                                       std::uint64_t round, unsigned unroll,
                                                       unsigned u) {
  const std::uint64_t lane = thread % 32;
  const std::uint64_t warp_first = thread - lane;
  const std::uint64_t width = threads - warp_first < 32 ? threads - warp_first : 32;
  return round * threads * unroll + warp_first * unroll + u * width + lane;
}

// Rounds thread 0 needs to cover n elements (the others need the same or one fewer).
COMMCERT_HD inline std::uint64_t strided_rounds(std::uint64_t n, std::uint64_t threads,
                                                unsigned unroll) {
  const std::uint64_t per_round = threads * unroll;
  return per_round == 0 ? 0 : (n + per_round - 1) / per_round;
}

struct LaunchShape {
  unsigned blocks = 1;
  unsigned threads_per_block = 256;
};

// Enough resident blocks to fill every SM (`blocks_per_sm` x 256 threads is full occupancy on
// sm_80/90/100), but never more blocks than there is work, and always at least one.
inline LaunchShape saturating_launch_shape(int sm_count, std::uint64_t elements, unsigned unroll,
                                           unsigned threads_per_block = 256,
                                           unsigned blocks_per_sm = 8) {
  LaunchShape shape;
  shape.threads_per_block = threads_per_block;
  const std::uint64_t per_block = static_cast<std::uint64_t>(threads_per_block) * unroll;
  const std::uint64_t needed = per_block == 0 ? 1 : (elements + per_block - 1) / per_block;
  const std::uint64_t resident =
      static_cast<std::uint64_t>(sm_count > 0 ? sm_count : 1) * blocks_per_sm;
  const std::uint64_t blocks = needed < resident ? needed : resident;
  shape.blocks = static_cast<unsigned>(blocks > 0 ? blocks : 1);
  return shape;
}

}  // namespace commcert
