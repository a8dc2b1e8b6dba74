#pragma once

// Host implementations of the pattern operations (pattern_device.cuh has the same set as
// kernels). Buffers are raw bytes of `spec.type` elements.

#include <cstdint>

#include "kernels/pattern.hpp"

namespace commcert {

// input[i] = input_bits(spec, rank, first + i) for i in [0, elements).
void fill_input_host(const PatternSpec& spec, int rank, void* input, std::uint64_t elements,
                     std::uint64_t first = 0);

// expected[i] = expected_bits(spec, rank, i).
void fill_expected_host(const PatternSpec& spec, int rank, void* expected, std::uint64_t elements);

// output[i] = ~expected[i]: a value that can never pass the check, so an operation that does not
// write its output is caught.
void poison_host(const PatternSpec& spec, const void* expected, void* output,
                 std::uint64_t elements);

// Number of elements of `output` that do not match `expected` (bit-exact; 2 ulp for a
// floating-point average).
[[nodiscard]] std::uint64_t count_mismatches_host(const PatternSpec& spec, const void* output,
                                                  const void* expected, std::uint64_t elements);

// Flips one bit in every corruption-target element (fault injection).
void corrupt_host(const PatternSpec& spec, void* output, std::uint64_t elements);

}  // namespace commcert
