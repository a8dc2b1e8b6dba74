#pragma once

// Kernels of `commcert p2p` (docs/p2p.md). Each function enqueues one kernel on `stream` and
// returns without waiting.

#include <cstdint>

#include <cuda_runtime_api.h>

namespace commcert {

// What the host and the spin kernels share, in pinned host memory every GPU can read.
struct SpinGate {
  int release;  // the host sets it once every copy of a sample is queued
  int gave_up;  // a spin kernel sets it when it stopped waiting at its timeout
};

// One thread that holds `stream` until gate->release is set, or until `timeout_ns` of the GPU's
// global timer passed (then it sets gate->gave_up), so a host that dies never leaves a GPU
// spinning for ever.
void enqueue_spin(SpinGate* gate, std::uint64_t timeout_ns, cudaStream_t stream);

// One thread that follows `loads` pointers from the address in *cursor (each slot holds the
// address of the next) and stores where it ended back in *cursor: the next launch goes on along
// the cycle instead of walking lines still in cache, and no load can be skipped.
void enqueue_pointer_chase(std::uint64_t* cursor, std::uint64_t loads, cudaStream_t stream);

}  // namespace commcert
