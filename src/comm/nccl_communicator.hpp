#pragma once

#include <optional>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "comm/communicator.hpp"
#include "comm/control_plane.hpp"

namespace commcert {

// Collectives in device memory through NCCL, timed with CUDA events on each rank's stream.
// A process drives `gpus_per_process` ranks (one per GPU) in NCCL groups; under MPI the
// control plane carries the NCCL unique id. Fill, poison, check and fault kernels are enqueued
// on the same stream around each operation, outside its events, so the whole batch runs without
// host synchronisation (-z 0) and every timed iteration's output is still checked.
class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ControlPlane& control, int local_process_index, int gpus_per_process);
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
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    void* send = nullptr;
    void* receive = nullptr;
    void* expected = nullptr;
    std::uint64_t capacity = 0;                    // bytes of each buffer
    unsigned long long* wrong_counters = nullptr;  // one per iteration, device memory
    float* barrier_word = nullptr;
    std::size_t counter_capacity = 0;
    std::vector<cudaEvent_t> events;  // start/stop pairs
  };
  struct PreparedData {
    PatternSpec spec;
    bool in_place = false;
    bool with_expected = false;
  };

  // A communicator made of split NCCL communicators on the given slots.
  NcclCommunicator(ControlPlane& control, std::vector<Slot> slots, std::uint64_t max_buffer_bytes);
  void free_buffers(Slot& slot);

  [[nodiscard]] RankLayout layout_for(const Slot& slot, const PatternSpec& spec) const;
  void reserve(Slot& slot, std::uint64_t bytes, std::size_t iterations);
  void prepare(const LoopPlan& plan);
  void enqueue_collective(Slot& slot, const PatternSpec& spec, bool in_place);
  void enqueue_iteration(const LoopPlan& plan, std::size_t iteration, std::vector<bool>& launched);
  void barrier();
  void wait_for_iterations(const LoopPlan& plan, std::size_t iterations,
                           const std::vector<bool>& launched);
  std::vector<RankLoopResult> collect(const LoopPlan& plan, std::size_t iterations);
  std::vector<RankLoopResult> run_graph(const LoopPlan& plan);

  ControlPlane& control_;
  int size_ = 1;
  std::vector<int> ranks_;
  std::vector<int> global_ranks_;
  std::vector<Slot> slots_;
  std::uint64_t max_buffer_bytes_ = 0;
  std::optional<PreparedData> prepared_;
  std::uint64_t data_operations_ = 0;
  bool aborted_ = false;
};

}  // namespace commcert
