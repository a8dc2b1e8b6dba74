#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/fault_injection.hpp"
#include "core/errors.hpp"
#include "core/record.hpp"
#include "kernels/collective_types.hpp"
#include "kernels/pattern.hpp"

namespace commcert {

class Watchdog;

// One batch of iterations of one collective at one size and placement. The sweep engine decides
// what to run; the backend decides how (host loop with MPI, stream-ordered kernels with NCCL).
struct LoopPlan {
  PatternSpec pattern;  // collective, type, op, nranks, root, per-rank count, seed
  bool in_place = false;
  int iterations = 1;
  bool timed = true;       // false for warm-up: no samples kept, nothing checked
  bool check = true;       // verify every timed iteration's output against the pattern
  int blocking = 0;        // nccl-tests -z: 0 async, 1 wait + barrier after every operation
  int graph_launches = 0;  // nccl-tests -G: replay a captured CUDA graph this often (NCCL only)
  const FaultPlan* faults = nullptr;
};

// What one rank measured and found in one batch.
struct RankLoopResult {
  int rank = 0;
  std::vector<double> operation_seconds;  // one per timed iteration, operation only
  // From the start of the first timed operation to the end of the last, when they ran back to
  // back on this rank's stream (nothing of the harness between them): nccl-tests' measurement.
  // Unset when checks, barriers or graph boundaries ran between operations.
  std::optional<double> back_to_back_seconds;
  std::uint64_t wrong_elements = 0;  // summed over checked iterations
  int wrong_iterations = 0;
  bool checked = false;  // false when this rank has no output to verify
};

// Thrown by the thread that drives a communicator after it aborted it because another thread
// asked (the watchdog, on a timeout): the job is being ended, this rank did not fail on its own.
class AbortedOnRequest : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

// The data plane: runs collectives on this process's ranks. Implementations: MpiCommunicator
// (host memory, any machine) and NcclCommunicator (device memory). Every operation is announced
// to the watchdog, which ends the job if one does not complete in time.
class Communicator {
 public:
  virtual ~Communicator() = default;

  [[nodiscard]] virtual std::string_view backend_name() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // This communicator's ranks that this process drives (one for MPI, -g for NCCL), in slot
  // order. For a split communicator these are ranks within the group.
  [[nodiscard]] virtual std::span<const int> local_ranks() const = 0;
  // The same ranks as ranks of the whole job (what faults, identities and records use).
  [[nodiscard]] virtual std::span<const int> global_ranks() const = 0;
  // Why a combination cannot run on this backend, or nullopt if it can.
  [[nodiscard]] virtual std::optional<std::string> unsupported(CollectiveKind kind, DataType type,
                                                               ReduceOp op,
                                                               bool in_place) const = 0;
  // Largest per-buffer size this process can allocate for every local rank (three buffers each).
  [[nodiscard]] virtual std::uint64_t max_buffer_bytes() const = 0;
  // Where each local rank's data lives, for meta.json: GPU identity or "host".
  [[nodiscard]] virtual std::vector<std::string> device_descriptions() const = 0;
  // Each local rank's GPU, in slot order; empty for host-memory backends.
  [[nodiscard]] virtual std::vector<GpuIdentity> gpu_identities() const { return {}; }

  virtual std::vector<RankLoopResult> run(const LoopPlan& plan) = 0;
  // Tears the communicator down without waiting for peers. Only the thread that drives the
  // communicator calls it: it may be polling the communicator at any moment.
  virtual void abort() noexcept = 0;
  // Any thread (the watchdog's): asks the driving thread to abort this communicator and its
  // splits at its next poll, waiting at most `wait_seconds` for it. True when it was aborted in
  // time, or when the backend has nothing a thread could abort (MPI: ending the job ends its
  // calls); false when the driving thread did not get to it (blocked where it does not poll).
  virtual bool request_abort(double wait_seconds) noexcept {
    (void)wait_seconds;
    return true;
  }

  // Collective over every process of this communicator: a new communicator per color, for the
  // slots whose color is >= 0 (`color_per_slot` is in slot order). Returns nullptr when none
  // of this process's slots takes part. Group ranks follow global rank order.
  [[nodiscard]] virtual std::unique_ptr<Communicator> split(
      std::span<const int> color_per_slot) = 0;
  // Allocates every buffer for `bytes` now, so a sweep allocates once, for its largest size, as
  // nccl-tests does: buffers allocated later in a process measured differently here.
  virtual void reserve_buffers(std::uint64_t bytes) = 0;
  // Frees large buffers between stages; the next run() allocates again.
  virtual void release_buffers() = 0;

  // Every data-plane operation is announced to the watchdog once one is attached. A split
  // communicator inherits it.
  void attach_watchdog(Watchdog* watchdog) { watchdog_ = watchdog; }
  [[nodiscard]] Watchdog* watchdog() const { return watchdog_; }

 protected:
  Watchdog* watchdog_ = nullptr;
};

}  // namespace commcert
