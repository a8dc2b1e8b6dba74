#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "comm/abort_signal.hpp"
#include "comm/communicator.hpp"
#include "comm/control_plane.hpp"
#include "comm/cuda_handles.hpp"

namespace commcert {

class WatchedBatch;
struct NcclGraphs;

// Collectives in device memory through NCCL, timed with CUDA events on each rank's stream.
// A process drives one rank per device in `devices` (CUDA ordinals, from assign_devices) in
// NCCL groups; under MPI the control plane carries the NCCL unique id. Fill, poison, check and
// fault kernels are enqueued on the same stream, outside the operations' events, so a batch runs
// without host synchronisation (-z 0) and every timed iteration's output is still checked: each
// operation of a batch writes its own slice of the receive buffer, so the operations run back to
// back as in nccl-tests (batch_layout.hpp), or, where the slices do not fit, the checks run
// between them. Only the thread that constructed it may drive it (run, split, abort); another
// thread asks for an abort with request_abort().
class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ControlPlane& control, const std::vector<int>& devices);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  [[nodiscard]] std::string_view backend_name() const override { return "nccl"; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::span<const int> local_ranks() const override { return ranks_; }
  [[nodiscard]] std::span<const int> global_ranks() const override { return global_ranks_; }
  [[nodiscard]] std::optional<std::string> unsupported(CollectiveKind kind, DataType type,
                                                       ReduceOp op, bool in_place) const override;
  [[nodiscard]] std::uint64_t max_buffer_bytes() const override { return max_buffer_bytes_; }
  [[nodiscard]] std::vector<std::string> device_descriptions() const override;
  [[nodiscard]] std::vector<GpuIdentity> gpu_identities() const override;
  std::vector<RankLoopResult> run(const LoopPlan& plan) override;
  void abort() noexcept override;
  bool request_abort(double wait_seconds) noexcept override;
  [[nodiscard]] std::unique_ptr<Communicator> split(std::span<const int> color_per_slot) override;
  void reserve_buffers(std::uint64_t bytes) override;
  void release_buffers() override;

 private:
  struct Slot {
    int rank = 0;         // in this communicator
    int global_rank = 0;  // in the job
    int watchdog_slot = 0;
    int device = 0;
    GpuIdentity gpu;
    int compute_capability = 0;  // major * 10 + minor
    // Owned: a throw while building or splitting communicators releases what was made.
    NcclCommHandle comm;
    CudaStreamHandle stream;
    DeviceBuffer send;
    DeviceBuffer receive;
    DeviceBuffer expected;
    std::uint64_t capacity = 0;          // bytes of each buffer, as reserved
    std::uint64_t receive_capacity = 0;  // bytes of `receive`: more when grown for batch slices
    DeviceBuffer wrong_counters;         // unsigned long long, one per iteration
    DeviceBuffer barrier_word;           // one float
    DeviceBuffer unwritten;  // injected stale/partial fault: the output's tail before the call
    std::uint64_t unwritten_capacity = 0;
    std::size_t counter_capacity = 0;
    std::vector<CudaEventHandle> events;  // start/stop pairs
  };
  struct PreparedData {
    PatternSpec spec;
    bool in_place = false;
    bool with_expected = false;
  };

  // A communicator made of split NCCL communicators on the given slots.
  NcclCommunicator(ControlPlane& control, std::vector<Slot> slots, std::uint64_t max_buffer_bytes,
                   int nccl_version, std::shared_ptr<AbortSignal> abort_signal);
  void free_buffers(Slot& slot);

  [[nodiscard]] RankLayout layout_for(const Slot& slot, const PatternSpec& spec) const;
  // Bytes of receive buffer one operation of `plan` needs: its output, or in place its image.
  [[nodiscard]] std::uint64_t image_bytes(const Slot& slot, const LoopPlan& plan) const;
  void reserve(Slot& slot, std::uint64_t bytes, std::size_t iterations);
  void prepare(const LoopPlan& plan);
  // Per local slot, the bytes between the slices of a checked back-to-back batch, or nullopt
  // when some slot has no room for them (the batch then interleaves its checks).
  std::optional<std::vector<std::uint64_t>> batch_strides(const LoopPlan& plan);
  void mark_hung_ranks(const LoopPlan& plan, std::vector<bool>& launched) const;
  // Poisons the output (out of place) or restores the pristine image (in place) at `offset`.
  void stage_output(Slot& slot, const LoopPlan& plan, std::uint64_t offset);
  // Injected stale/partial fault: saves what the next operation must leave unwritten, or
  // (restore) puts it back after the operation; nothing for a rank without the fault.
  void save_unwritten(Slot& slot, const LoopPlan& plan, std::uint64_t offset);
  void restore_unwritten(Slot& slot, const LoopPlan& plan, std::uint64_t offset);
  [[nodiscard]] bool leaves_output_unwritten(const LoopPlan& plan) const;
  // Injected stale/partial output and corruption, then the comparison with the expected output,
  // for one iteration.
  void verify_output(Slot& slot, const LoopPlan& plan, std::size_t iteration, std::uint64_t offset);
  void enqueue_collective(Slot& slot, const PatternSpec& spec, bool in_place, std::uint64_t offset);
  // One timed operation on every launched slot between its start and stop events, receive
  // buffer at offsets[s] (empty: 0 everywhere).
  // `watched` begins each launched slot's operation; wait_for_iterations ends them, and a throw
  // in between ends them as it leaves the run that owns `watched`.
  void enqueue_operation(const LoopPlan& plan, std::size_t iteration,
                         const std::vector<bool>& launched,
                         const std::vector<std::uint64_t>& offsets, WatchedBatch& watched);
  void enqueue_checked_iteration(const LoopPlan& plan, std::size_t iteration,
                                 std::vector<bool>& launched, WatchedBatch& watched);
  void barrier();
  void wait_for_iterations(std::size_t iterations, const std::vector<bool>& launched,
                           WatchedBatch& watched);
  std::vector<RankLoopResult> collect(const LoopPlan& plan, std::size_t iterations,
                                      bool back_to_back);
  // -G (nccl_communicator_graph.cpp): the plan's operations captured into one graph per slot,
  // replayed plan.graph_launches times, each replay's time, and the check of the output.
  std::vector<RankLoopResult> run_graph(const LoopPlan& plan);
  void capture_graphs(const LoopPlan& plan, NcclGraphs& graphs);
  void launch_graphs(const LoopPlan& plan, const NcclGraphs& graphs, std::vector<bool>& launched,
                     WatchedBatch& watched);
  std::vector<RankLoopResult> graph_replay_times(const LoopPlan& plan);
  void check_graph_output(const LoopPlan& plan, std::vector<RankLoopResult>& results);
  // nccl-tests' measurement of a batch: the same operations again, back to back, with events
  // only at the ends; sets each result's back_to_back_seconds. The windows' event pairs cost
  // 2-3 us per operation between two NCCL kernels even where the GPU is the bottleneck
  // (docs/measurement.md), so the figure a user compares with nccl-tests is taken without them.
  void measure_back_to_back(const LoopPlan& plan, std::vector<RankLoopResult>& results);
  // Aborts and throws AbortedOnRequest when another thread asked for it; called where the
  // driving thread polls.
  void honour_abort_request();

  ControlPlane& control_;
  int size_ = 1;
  std::vector<int> ranks_;
  std::vector<int> global_ranks_;
  std::vector<Slot> slots_;
  std::uint64_t max_buffer_bytes_ = 0;
  // The NCCL version whose features may be used (compiled against and loaded; nccl_features.hpp).
  int nccl_version_ = 0;
  std::optional<PreparedData> prepared_;
  std::uint64_t data_operations_ = 0;
  // Shared with the communicators split from this one: one request aborts whichever is driven.
  std::shared_ptr<AbortSignal> abort_signal_;
  bool aborted_ = false;  // only the driving thread reads or writes it
};

}  // namespace commcert
