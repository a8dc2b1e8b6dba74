#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"

namespace commcert {

// What a host-memory backend (MpiCommunicator) does in one iteration, in order. Kept apart from
// MPI so the order, which decides what the timed window contains, is unit-tested.
enum class IterationStep {
  kWarmInput,      // read the input once, so it is as warm as a back-to-back loop leaves it
  kPrepareOutput,  // poison the output (out of place) or restore the in-place image
  kRealign,        // untimed barrier: every rank enters the operation together
  kDelay,          // injected fault: this rank arrives late
  kOperation,      // the timed window: the collective alone
  kCorrupt,        // injected fault: damage the output
  kBarrierAfter,   // -z 1: untimed barrier after every operation
  kCheck,          // compare the output with the expected buffer
};

struct IterationPolicy {
  bool check = false;     // this rank checks its output in this iteration (timed and has output)
  bool realign = false;   // checks run on some rank of the communicator, so all realign
  bool in_place = false;  // the restore reads the in-place image, which is the input
  bool blocking = false;  // -z 1
};

// Everything a rank does between operations (poison or restore, warming the input, checking)
// happens before the realigning barrier, so no rank's preparation lands in a peer's window: the
// window between the barrier and the operation holds nothing but an injected delay. Without
// checks, iterations run back to back, as a plain MPI loop does.
[[nodiscard]] inline std::vector<IterationStep> iteration_steps(const IterationPolicy& policy) {
  std::vector<IterationStep> steps;
  if (policy.check) {
    // Out of place the output is poisoned from the expected buffer: read the input first, so the
    // buffers are in the order a back-to-back loop leaves them (input, then output, most recent).
    if (!policy.in_place) steps.push_back(IterationStep::kWarmInput);
    steps.push_back(IterationStep::kPrepareOutput);
  }
  if (policy.realign) steps.push_back(IterationStep::kRealign);
  steps.insert(steps.end(),
               {IterationStep::kDelay, IterationStep::kOperation, IterationStep::kCorrupt});
  if (policy.blocking) steps.push_back(IterationStep::kBarrierAfter);
  if (policy.check) steps.push_back(IterationStep::kCheck);
  return steps;
}

// Whether a timed batch is run a second time, unchecked, with its operations back to back, so
// that `time` comes from that pass (RankLoopResult::back_to_back_seconds): when checks ran
// between the operations of the first. What the checks read and write between operations
// changes what the cache holds when each starts, which made a window anything from 34 % longer
// to 36 % shorter than IMB's for the same calls (docs/performance.md); the second pass is a
// plain loop of them.
// Not with -z 1 (a barrier after every operation is part of what it asks for), nor with an
// injected fault (faults act between the operations of the first pass). The same on every rank
// of a group, which all enter the pass together.
[[nodiscard]] inline bool times_back_to_back_pass(const LoopPlan& plan) {
  return plan.timed && plan.check && plan.blocking == 0 && plan.iterations > 0 &&
         (plan.faults == nullptr || plan.faults->empty());
}

// Reads one word of every cache line of [data, data + bytes) and returns their XOR (so the reads
// cannot be optimized away): brings a buffer into the cache without writing it.
[[nodiscard]] std::uint64_t touch_for_read(const void* data, std::uint64_t bytes);

}  // namespace commcert
