#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

namespace commcert {

// Where the operations of a checked back-to-back batch write (NCCL backend, -z 0).
//
// nccl-tests times its -n operations back to back: nothing runs between them on the stream. To
// keep that while still checking every timed operation, iteration i works on its own slice of
// the receive buffer, slice i = receive + i * stride: every slice is poisoned (out of place) or
// given the pristine in-place image before the batch, the batch runs the operations with nothing
// in between, and every slice is compared with the expected output after it. Pure arithmetic,
// unit-tested on the CPU.

// Slices start on a page boundary, so each operation sees a buffer aligned as cudaMalloc's.
inline constexpr std::uint64_t kBatchSliceAlignment = 4096;

[[nodiscard]] constexpr std::uint64_t round_up_to_slice(std::uint64_t bytes) {
  return (bytes + kBatchSliceAlignment - 1) / kBatchSliceAlignment * kBatchSliceAlignment;
}

// Bytes between consecutive slices for an operation that needs `image_bytes` of receive buffer
// (its output, or in place its whole in/out image), or nullopt when `iterations` slices do not
// fit in `capacity` bytes. 0 when the operation uses no receive buffer (a non-root rank of an
// out-of-place reduce): every iteration then shares the one.
[[nodiscard]] constexpr std::optional<std::uint64_t> batch_slice_stride(std::uint64_t image_bytes,
                                                                        std::uint64_t iterations,
                                                                        std::uint64_t capacity) {
  if (image_bytes == 0) return 0;
  const std::uint64_t stride = round_up_to_slice(image_bytes);
  if (iterations > 0 && stride > capacity / iterations) return std::nullopt;
  return stride;
}

// The receive-buffer size to allocate so a batch of `iterations` operations needing
// `image_bytes` each can run back to back, given the current `capacity`, the size every buffer
// was reserved for this round (`reserved_bytes`, the round's largest) and `spare_bytes` the
// device can still give (free memory less nccl-tests' headroom). Grows once for every size of the
// round when that fits, else for this size only, else not at all (the batch then interleaves
// its checks between the operations). Returns `capacity` when nothing is to grow.
[[nodiscard]] constexpr std::uint64_t batch_receive_bytes(std::uint64_t image_bytes,
                                                          std::uint64_t iterations,
                                                          std::uint64_t capacity,
                                                          std::uint64_t reserved_bytes,
                                                          std::uint64_t spare_bytes) {
  if (image_bytes == 0 || iterations == 0) return capacity;
  const auto slices_of = [iterations](std::uint64_t bytes) -> std::optional<std::uint64_t> {
    const std::uint64_t stride = round_up_to_slice(bytes);
    if (stride > UINT64_MAX / iterations) return std::nullopt;
    return stride * iterations;
  };
  const auto needed = slices_of(image_bytes);
  if (needed && *needed <= capacity) return capacity;
  for (const auto candidate : {slices_of(std::max(reserved_bytes, image_bytes)), needed}) {
    if (candidate && *candidate > capacity && *candidate - capacity <= spare_bytes) {
      return *candidate;
    }
  }
  return capacity;
}

}  // namespace commcert
