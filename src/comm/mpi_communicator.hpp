#pragma once

#include <optional>

#include <mpi.h>

#include "comm/communicator.hpp"
#include "comm/host_buffers.hpp"
#include "comm/host_iteration.hpp"
#include "comm/mpi_datatypes.hpp"

namespace commcert {

// Collectives in host memory through blocking MPI calls: the same calls a plain MPI benchmark
// times, so the harness adds nothing to what is measured. One rank per process.
class MpiCommunicator final : public Communicator {
 public:
  // `processes_on_host` shares the host's memory between the ranks on it.
  explicit MpiCommunicator(int processes_on_host);
  ~MpiCommunicator() override;

  [[nodiscard]] std::string_view backend_name() const override { return "mpi"; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::span<const int> local_ranks() const override { return {&rank_, 1}; }
  [[nodiscard]] std::span<const int> global_ranks() const override { return {&global_rank_, 1}; }
  [[nodiscard]] std::optional<std::string> unsupported(CollectiveKind kind, DataType type,
                                                       ReduceOp op, bool in_place) const override;
  [[nodiscard]] std::uint64_t max_buffer_bytes() const override { return memory_share_ / 3; }
  [[nodiscard]] std::vector<std::string> device_descriptions() const override { return {"host"}; }
  std::vector<RankLoopResult> run(const LoopPlan& plan) override;
  void abort() noexcept override {}
  [[nodiscard]] std::unique_ptr<Communicator> split(std::span<const int> color_per_slot) override;
  void reserve_buffers(std::uint64_t bytes) override;
  void release_buffers() override;

 private:
  struct PreparedData {
    PatternSpec spec;
    bool in_place = false;
    std::uint64_t expected_elements = 0;  // how much of expected_ holds this spec's output
  };

  // Takes ownership of `comm`, a communicator split from the job's.
  MpiCommunicator(MPI_Comm comm, int global_rank, std::uint64_t memory_share);

  [[nodiscard]] RankLayout layout_for(const PatternSpec& spec, bool in_place) const;
  void prepare(const LoopPlan& plan, const RankLayout& layout);
  void call_collective(const PatternSpec& spec, bool in_place, const RankLayout& layout);
  [[nodiscard]] unsigned char* output_region(const PatternSpec& spec, bool in_place,
                                             const RankLayout& layout);
  // One run's iterations: what they share, each step of one (host_iteration.hpp) with its time
  // or mismatches into `result`, and the timed operation itself.
  struct RunState;
  void run_step(IterationStep step, const RunState& state, RankLoopResult& result);
  void timed_operation(const RunState& state, RankLoopResult& result);
  // The checked batch's operations again, back to back after a barrier: their span into
  // `result.back_to_back_seconds` (times_back_to_back_pass).
  void measure_back_to_back(const RunState& state, RankLoopResult& result);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int global_rank_ = 0;
  std::uint64_t memory_share_ = 0;
  MpiReductionCatalog reductions_;
  HostBuffer send_;       // input; the pristine in-place image when in place
  HostBuffer receive_;    // output; input and output when in place
  HostBuffer expected_;   // what the output must be
  HostBuffer unwritten_;  // injected stale/partial fault: the output's tail before the operation
  std::optional<PreparedData> prepared_;
  std::uint64_t data_operations_ = 0;
  std::uint64_t warm_sink_ = 0;  // keeps the reads that warm the input
};

}  // namespace commcert
