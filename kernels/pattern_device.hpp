#pragma once

// Device implementations of the pattern operations (pattern_host.hpp has the same set on the
// host). Each enqueues one kernel on `stream` and returns without waiting.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/pattern.hpp"

namespace commcert {

void enqueue_fill_input(const PatternSpec& spec, int rank, void* input, std::uint64_t elements,
                        cudaStream_t stream);
void enqueue_fill_expected(const PatternSpec& spec, int rank, void* expected,
                           std::uint64_t elements, cudaStream_t stream);
void enqueue_poison(const PatternSpec& spec, const void* expected, void* output,
                    std::uint64_t elements, cudaStream_t stream);
// Adds the number of mismatching elements to *counter (device memory).
void enqueue_count_mismatches(const PatternSpec& spec, const void* output, const void* expected,
                              std::uint64_t elements, unsigned long long* counter,
                              cudaStream_t stream);
void enqueue_corrupt(const PatternSpec& spec, void* output, std::uint64_t elements,
                     cudaStream_t stream);
// Occupies the stream for `seconds` without touching memory: an injected late arrival.
void enqueue_spin(double seconds, cudaStream_t stream);

}  // namespace commcert
