#include "comm/mpi_communicator.hpp"

#include <chrono>
#include <cstring>
#include <thread>

#include <climits>
#include <fmt/format.h>

#include "comm/collective_dispatch.hpp"
#include "comm/host_iteration.hpp"
#include "comm/mpi_runtime.hpp"
#include "comm/watchdog.hpp"
#include "core/clock.hpp"
#include "core/errors.hpp"
#include "kernels/pattern_host.hpp"

namespace commcert {
namespace {

constexpr int kSendRecvTag = 5150;

bool same_data(const PatternSpec& a, const PatternSpec& b) {
  return a.collective == b.collective && a.type == b.type && a.op == b.op && a.nranks == b.nranks &&
         a.root == b.root && a.count == b.count && a.seed == b.seed;
}

// What every MPI collective call needs, gathered once so each kind's call is one small function.
struct MpiCall {
  const PatternSpec& spec;
  bool in_place;
  void* send;
  unsigned char* receive;
  unsigned char* own_chunk;  // this rank's block of the receive buffer
  int count;
  MPI_Datatype type;
  MPI_Op op;
  bool root;
  int rank;
  int size;
  MPI_Comm comm;
};

void mpi_allreduce(const MpiCall& c) {
  COMMCERT_CHECK_MPI(
      MPI_Allreduce(c.in_place ? MPI_IN_PLACE : c.send, c.receive, c.count, c.type, c.op, c.comm));
}

void mpi_allgather(const MpiCall& c) {
  COMMCERT_CHECK_MPI(MPI_Allgather(c.in_place ? MPI_IN_PLACE : c.send, c.count, c.type, c.receive,
                                   c.count, c.type, c.comm));
}

void mpi_reduce_scatter(const MpiCall& c) {
  COMMCERT_CHECK_MPI(MPI_Reduce_scatter_block(c.in_place ? MPI_IN_PLACE : c.send, c.receive,
                                              c.count, c.type, c.op, c.comm));
}

void mpi_broadcast(const MpiCall& c) {
  COMMCERT_CHECK_MPI(MPI_Bcast(c.in_place || !c.root ? static_cast<void*>(c.receive) : c.send,
                               c.count, c.type, c.spec.root, c.comm));
}

void mpi_reduce(const MpiCall& c) {
  const void* input = c.in_place ? (c.root ? MPI_IN_PLACE : c.receive) : c.send;
  COMMCERT_CHECK_MPI(MPI_Reduce(input, c.receive, c.count, c.type, c.op, c.spec.root, c.comm));
}

void mpi_alltoall(const MpiCall& c) {
  COMMCERT_CHECK_MPI(MPI_Alltoall(c.in_place ? MPI_IN_PLACE : c.send, c.count, c.type, c.receive,
                                  c.count, c.type, c.comm));
}

void mpi_sendrecv(const MpiCall& c) {
  COMMCERT_CHECK_MPI(MPI_Sendrecv(c.send, c.count, c.type, (c.rank + 1) % c.size, kSendRecvTag,
                                  c.receive, c.count, c.type, (c.rank + c.size - 1) % c.size,
                                  kSendRecvTag, c.comm, MPI_STATUS_IGNORE));
}

void mpi_gather(const MpiCall& c) {
  const void* input = c.in_place ? (c.root ? MPI_IN_PLACE : c.own_chunk) : c.send;
  COMMCERT_CHECK_MPI(
      MPI_Gather(input, c.count, c.type, c.receive, c.count, c.type, c.spec.root, c.comm));
}

void mpi_scatter(const MpiCall& c) {
  void* output = c.in_place ? (c.root ? MPI_IN_PLACE : static_cast<void*>(c.own_chunk)) : c.receive;
  COMMCERT_CHECK_MPI(MPI_Scatter(c.in_place ? static_cast<void*>(c.receive) : c.send, c.count,
                                 c.type, output, c.count, c.type, c.spec.root, c.comm));
}

using MpiCallFn = void (*)(const MpiCall&);
constexpr CollectiveEntry<MpiCallFn> kMpiCallList[] = {
    {CollectiveKind::kAllReduce, mpi_allreduce},
    {CollectiveKind::kAllGather, mpi_allgather},
    {CollectiveKind::kReduceScatter, mpi_reduce_scatter},
    {CollectiveKind::kBroadcast, mpi_broadcast},
    {CollectiveKind::kReduce, mpi_reduce},
    {CollectiveKind::kAllToAll, mpi_alltoall},
    {CollectiveKind::kSendRecv, mpi_sendrecv},
    {CollectiveKind::kGather, mpi_gather},
    {CollectiveKind::kScatter, mpi_scatter},
};
constexpr auto kMpiCalls = make_collective_dispatch(kMpiCallList);

[[noreturn]] void hang_forever() {
  // Injected fault: behave like a rank stuck outside MPI. The watchdog protocol ends the job.
  for (;;)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

}  // namespace

MpiCommunicator::MpiCommunicator(int processes_on_host)
    : memory_share_(host_memory_share(processes_on_host)) {
  COMMCERT_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  global_rank_ = rank_;
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, int global_rank, std::uint64_t memory_share)
    : comm_(comm), memory_share_(memory_share) {
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  global_rank_ = global_rank;
}

std::unique_ptr<Communicator> MpiCommunicator::split(std::span<const int> color_per_slot) {
  const int color =
      color_per_slot.empty() || color_per_slot[0] < 0 ? MPI_UNDEFINED : color_per_slot[0];
  MPI_Comm group = MPI_COMM_NULL;
  COMMCERT_CHECK_MPI(MPI_Comm_split(comm_, color, global_rank_, &group));
  if (group == MPI_COMM_NULL) return nullptr;
  std::unique_ptr<Communicator> out(new MpiCommunicator(group, global_rank_, memory_share_));
  out->attach_watchdog(watchdog_);
  return out;
}

void MpiCommunicator::reserve_buffers(std::uint64_t bytes) {
  send_.reserve(bytes);
  receive_.reserve(bytes);
  expected_.reserve(bytes);
}

void MpiCommunicator::release_buffers() {
  send_ = HostBuffer{};
  receive_ = HostBuffer{};
  expected_ = HostBuffer{};
  prepared_.reset();
}

MpiCommunicator::~MpiCommunicator() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::optional<std::string> MpiCommunicator::unsupported(CollectiveKind kind, DataType /*type*/,
                                                        ReduceOp /*op*/, bool in_place) const {
  if (kind == CollectiveKind::kSendRecv && in_place) {
    return "sendrecv has no in-place form (send and receive buffers would overlap)";
  }
  return std::nullopt;
}

RankLayout MpiCommunicator::layout_for(const PatternSpec& spec, bool in_place) const {
  RankLayout layout = rank_layout(spec.collective, spec.count, size_, rank_, spec.root);
  // MPI_IN_PLACE reduce-scatter leaves the result at the start of the buffer (MPI 3.1 §5.10.1).
  if (in_place && spec.collective == CollectiveKind::kReduceScatter)
    layout.in_place_output_offset = 0;
  // Out of place, MPI_Bcast has one buffer: the root sends from its input, its output is unused.
  if (!in_place && spec.collective == CollectiveKind::kBroadcast && rank_ == spec.root) {
    layout.has_output = false;
  }
  return layout;
}

unsigned char* MpiCommunicator::output_region(const PatternSpec& spec, bool in_place,
                                              const RankLayout& layout) {
  const auto element = static_cast<std::uint64_t>(element_size(spec.type));
  return receive_.bytes() + (in_place ? layout.in_place_output_offset * element : 0);
}

void MpiCommunicator::prepare(const LoopPlan& plan, const RankLayout& layout) {
  const PatternSpec& spec = plan.pattern;
  const bool want_expected = plan.check && plan.timed && layout.has_output;
  const bool same = prepared_ && same_data(prepared_->spec, spec);
  // The expected output depends on the data, not the placement: keep it across placements.
  const bool expected_ready =
      !want_expected || (same && prepared_->expected_elements == layout.output_elements);
  if (same && expected_ready && prepared_->in_place == plan.in_place) return;

  const auto element = static_cast<std::uint64_t>(element_size(spec.type));
  const std::uint64_t image = layout.in_place_buffer_elements();
  send_.reserve(std::max(layout.input_elements, image) * element);
  receive_.reserve(std::max(layout.output_elements, image) * element);
  expected_.reserve(layout.output_elements * element);
  std::uint64_t expected_elements = same ? prepared_->expected_elements : 0;
  if (!expected_ready) {
    fill_expected_host(spec, rank_, expected_.data(), layout.output_elements);
    expected_elements = layout.output_elements;
  }
  if (plan.in_place) {
    // The in-place image: poison where only output goes, then the input on top. Restored into
    // the receive buffer before every checked iteration.
    if (want_expected) {
      poison_host(spec, expected_.data(), send_.bytes() + layout.in_place_output_offset * element,
                  layout.output_elements);
    }
    fill_input_host(spec, rank_, send_.bytes() + layout.in_place_input_offset * element,
                    layout.input_elements);
    std::memcpy(receive_.data(), send_.data(), image * element);
  } else {
    fill_input_host(spec, rank_, send_.data(), layout.input_elements);
  }
  prepared_ = PreparedData{spec, plan.in_place, expected_elements};
}

void MpiCommunicator::call_collective(const PatternSpec& spec, bool in_place,
                                      const RankLayout& layout) {
  const auto element = static_cast<std::uint64_t>(element_size(spec.type));
  unsigned char* receive = receive_.bytes();
  const MpiCall call{
      spec,
      in_place,
      send_.data(),
      receive,
      receive + static_cast<std::uint64_t>(rank_) * spec.count * element,
      static_cast<int>(spec.count),
      MpiReductionCatalog::datatype(spec.type),
      is_reduction(spec.collective) ? reductions_.operation(spec.type, spec.op) : MPI_OP_NULL,
      rank_ == spec.root,
      rank_,
      size_,
      comm_};
  kMpiCalls[static_cast<std::size_t>(spec.collective)](call);
  if (spec.op == ReduceOp::kAvg && is_reduction(spec.collective) && layout.has_output) {
    divide_by_rank_count(spec.type, output_region(spec, in_place, layout), layout.output_elements,
                         size_);
  }
}

// What every iteration of one run shares: where the output is, and this rank's injected faults.
struct MpiCommunicator::RunState {
  const LoopPlan& plan;
  RankLayout layout;
  std::uint64_t element = 0;
  bool check = false;
  std::optional<double> delay;
  bool corrupt = false;
  std::optional<std::uint64_t> fail_at;
  unsigned char* output = nullptr;
  std::uint64_t output_bytes = 0;
  std::uint64_t unwritten_bytes = 0;
};

std::vector<RankLoopResult> MpiCommunicator::run(const LoopPlan& plan) {
  const PatternSpec& spec = plan.pattern;
  if (spec.count > static_cast<std::uint64_t>(INT_MAX)) {
    throw RuntimeFailure(fmt::format("{} elements exceed MPI's int count", spec.count));
  }
  const RankLayout layout = layout_for(spec, plan.in_place);
  prepare(plan, layout);

  const auto element = static_cast<std::uint64_t>(element_size(spec.type));
  const bool check = plan.check && plan.timed && layout.has_output;
  const FaultPlan no_faults;
  const FaultPlan& faults = plan.faults ? *plan.faults : no_faults;
  const auto hang_at = faults.hang_before_operation(global_rank_);
  // Only checked operations are left unwritten (as on the NCCL backend): the unchecked ones
  // (warm-up) write the right result, which only the poison keeps the check from seeing again.
  const RunState state{
      plan,
      layout,
      element,
      check,
      faults.delay_seconds(global_rank_),
      faults.corrupts(global_rank_),
      faults.failing_operation(global_rank_),
      output_region(spec, plan.in_place, layout),
      layout.has_output ? layout.output_elements * element : 0,
      check ? faults.unwritten_elements(global_rank_, layout.output_elements) * element : 0};
  if (state.unwritten_bytes > 0) unwritten_.reserve(state.unwritten_bytes);

  RankLoopResult result;
  result.rank = global_rank_;
  result.checked = check;
  if (plan.timed) result.operation_seconds.reserve(static_cast<std::size_t>(plan.iterations));
  // The same realignment on every rank (has_output, and so `check`, may differ between ranks).
  const auto steps = iteration_steps({.check = check,
                                      .realign = plan.check && plan.timed,
                                      .in_place = plan.in_place,
                                      .blocking = plan.blocking > 0});
  for (int iteration = 0; iteration < plan.iterations; ++iteration) {
    if (hang_at && data_operations_ >= *hang_at) hang_forever();
    for (const IterationStep step : steps)
      run_step(step, state, result);
  }
  if (times_back_to_back_pass(plan)) measure_back_to_back(state, result);
  return {result};
}

void MpiCommunicator::measure_back_to_back(const RunState& state, RankLoopResult& result) {
  // The same operations again, unchecked, on the same buffers (in place they compound, as
  // nccl-tests' do), each still bracketed for the watchdog; their windows are not kept.
  {
    const WatchedSlot watched(watchdog_, 0);
    COMMCERT_CHECK_MPI(MPI_Barrier(comm_));  // the ranks start together, as a plain loop's do
  }
  RankLoopResult unused_windows;
  unused_windows.operation_seconds.reserve(static_cast<std::size_t>(state.plan.iterations));
  const SteadyClock::time_point start = SteadyClock::now();
  for (int iteration = 0; iteration < state.plan.iterations; ++iteration)
    timed_operation(state, unused_windows);
  result.back_to_back_seconds = seconds_between(start, SteadyClock::now());
}

void MpiCommunicator::run_step(IterationStep step, const RunState& state, RankLoopResult& result) {
  const PatternSpec& spec = state.plan.pattern;
  const RankLayout& layout = state.layout;
  switch (step) {
    case IterationStep::kWarmInput:
      warm_sink_ ^= touch_for_read(send_.data(), layout.input_elements * state.element);
      break;
    case IterationStep::kPrepareOutput:
      if (state.plan.in_place) {
        std::memcpy(receive_.data(), send_.data(),
                    layout.in_place_buffer_elements() * state.element);
      } else {
        poison_host(spec, expected_.data(), state.output, layout.output_elements);
      }
      break;
    case IterationStep::kRealign:
    case IterationStep::kBarrierAfter: {
      const WatchedSlot watched(watchdog_, 0);
      COMMCERT_CHECK_MPI(MPI_Barrier(comm_));
      break;
    }
    case IterationStep::kDelay:
      if (state.delay) std::this_thread::sleep_for(std::chrono::duration<double>(*state.delay));
      // Injected stale/partial fault: what the operation must not overwrite is saved here,
      // after the output was prepared, so the fault leaves exactly what a transport that
      // writes nothing would leave.
      if (state.unwritten_bytes > 0 && layout.has_output) {
        std::memcpy(unwritten_.data(), state.output + (state.output_bytes - state.unwritten_bytes),
                    state.unwritten_bytes);
      }
      break;
    case IterationStep::kOperation:
      timed_operation(state, result);
      break;
    case IterationStep::kCorrupt:
      if (state.unwritten_bytes > 0 && layout.has_output) {
        restore_unwritten_tail(unwritten_.data(), state.output, state.output_bytes,
                               state.unwritten_bytes);
      }
      if (state.corrupt && layout.has_output) {
        corrupt_host(spec, state.output, layout.output_elements);
      }
      break;
    case IterationStep::kCheck: {
      const auto wrong =
          count_mismatches_host(spec, state.output, expected_.data(), layout.output_elements);
      result.wrong_elements += wrong;
      result.wrong_iterations += wrong > 0 ? 1 : 0;
      break;
    }
  }
}

void MpiCommunicator::timed_operation(const RunState& state, RankLoopResult& result) {
  if (state.fail_at && data_operations_ >= *state.fail_at) {
    // COMMCERT_FAULT fail: this rank's call reports an error, as one does whose
    // transport failed under it; its peers are left waiting inside the operation.
    throw RuntimeFailure(
        fmt::format("injected fault (COMMCERT_FAULT fail:{}:{}): operation {} failed", global_rank_,
                    *state.fail_at, data_operations_));
  }
  SteadyClock::time_point start;
  SteadyClock::time_point stop;
  {
    const WatchedSlot watched(watchdog_, 0);
    start = SteadyClock::now();
    call_collective(state.plan.pattern, state.plan.in_place, state.layout);
    stop = SteadyClock::now();
  }
  ++data_operations_;
  if (state.plan.timed) result.operation_seconds.push_back(seconds_between(start, stop));
}

}  // namespace commcert
