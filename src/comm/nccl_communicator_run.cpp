#include <algorithm>
#include <chrono>
#include <thread>

#include "comm/cuda_errors.hpp"
#include "comm/nccl_collective_calls.hpp"
#include "comm/nccl_communicator.hpp"
#include "comm/watchdog.hpp"
#include "core/clock.hpp"
#include "core/errors.hpp"
#include "kernels/pattern_device.hpp"

// Running a plan's operations with an event pair around each (-z 0: back to back, checked in
// slices of the receive buffer or between operations; -z 1: one operation at a time), checking
// their output, and nccl-tests' back-to-back measurement of the same batch.

namespace commcert {

void NcclCommunicator::mark_hung_ranks(const LoopPlan& plan, std::vector<bool>& launched) const {
  if (!plan.faults) return;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const auto hang_at = plan.faults->hang_before_operation(slots_[s].global_rank);
    // An injected hang: from that operation on, this rank never arrives.
    launched[s] = launched[s] && !(hang_at && data_operations_ >= *hang_at);
  }
}

void NcclCommunicator::stage_output(Slot& slot, const LoopPlan& plan, std::uint64_t offset) {
  const RankLayout layout = layout_for(slot, plan.pattern);
  auto* base = static_cast<unsigned char*>(slot.receive.get()) + offset;
  if (plan.in_place) {
    const std::uint64_t image = image_bytes(slot, plan);
    if (image > 0) {
      COMMCERT_CHECK_CUDA(cudaMemcpyAsync(base, slot.send.get(), image, cudaMemcpyDeviceToDevice,
                                          slot.stream.get()));
    }
  } else if (layout.has_output) {
    enqueue_poison(plan.pattern, slot.expected.get(), base, layout.output_elements,
                   slot.stream.get());
  }
}

namespace {

// The stale/partial tail of a slot's output: where it starts and how many bytes it has.
struct UnwrittenTail {
  unsigned char* at = nullptr;
  std::uint64_t bytes = 0;
};

// Only checked outputs are saved and restored: nothing reads the others.
UnwrittenTail unwritten_tail(const RankLayout& layout, const LoopPlan& plan, int rank,
                             unsigned char* receive) {
  if (!plan.faults || !layout.has_output || !(plan.check && plan.timed)) return {};
  const auto element = static_cast<std::uint64_t>(element_size(plan.pattern.type));
  const std::uint64_t bytes =
      plan.faults->unwritten_elements(rank, layout.output_elements) * element;
  unsigned char* output = receive + (plan.in_place ? layout.in_place_output_offset * element : 0);
  return {output + layout.output_elements * element - bytes, bytes};
}

// NCCL's asynchronous errors (a peer gone, a network failure) surface as errors rather than as a
// silent wait.
void throw_async_error(ncclComm_t comm) {
  ncclResult_t async_error = ncclSuccess;
  COMMCERT_CHECK_NCCL(ncclCommGetAsyncError(comm, &async_error), comm);
  COMMCERT_CHECK_NCCL(async_error, comm);
}

// Polls until `query` (of a stream or an event) no longer says "not ready": `each_poll` runs first
// in every round (an abort request is carried out there), `still_waiting` after a round that
// found the work unfinished.
template <typename Query, typename EachPoll, typename StillWaiting>
void poll_until_done(ncclComm_t comm, Query query, EachPoll each_poll, StillWaiting still_waiting) {
  while (true) {
    each_poll();
    const cudaError_t state = query();
    if (state != cudaErrorNotReady) {
      COMMCERT_CHECK_CUDA(state);
      return;
    }
    throw_async_error(comm);
    still_waiting();
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

bool NcclCommunicator::leaves_output_unwritten(const LoopPlan& plan) const {
  if (!plan.faults) return false;
  for (const Slot& slot : slots_) {
    if (plan.faults->unwritten_elements(slot.global_rank, 1) > 0) return true;
  }
  return false;
}

void NcclCommunicator::save_unwritten(Slot& slot, const LoopPlan& plan, std::uint64_t offset) {
  const UnwrittenTail tail =
      unwritten_tail(layout_for(slot, plan.pattern), plan, slot.global_rank,
                     static_cast<unsigned char*>(slot.receive.get()) + offset);
  if (tail.bytes == 0) return;
  if (tail.bytes > slot.unwritten_capacity) {
    COMMCERT_CHECK_CUDA(cudaStreamSynchronize(slot.stream.get()));
    slot.unwritten.reset();
    slot.unwritten_capacity = 0;
    COMMCERT_CHECK_CUDA(cudaMalloc(slot.unwritten.out(), tail.bytes));
    slot.unwritten_capacity = tail.bytes;
  }
  COMMCERT_CHECK_CUDA(cudaMemcpyAsync(slot.unwritten.get(), tail.at, tail.bytes,
                                      cudaMemcpyDeviceToDevice, slot.stream.get()));
}

void NcclCommunicator::restore_unwritten(Slot& slot, const LoopPlan& plan, std::uint64_t offset) {
  const UnwrittenTail tail =
      unwritten_tail(layout_for(slot, plan.pattern), plan, slot.global_rank,
                     static_cast<unsigned char*>(slot.receive.get()) + offset);
  if (tail.bytes == 0) return;
  COMMCERT_CHECK_CUDA(cudaMemcpyAsync(tail.at, slot.unwritten.get(), tail.bytes,
                                      cudaMemcpyDeviceToDevice, slot.stream.get()));
}

void NcclCommunicator::verify_output(Slot& slot, const LoopPlan& plan, std::size_t iteration,
                                     std::uint64_t offset) {
  const RankLayout layout = layout_for(slot, plan.pattern);
  if (!layout.has_output) return;
  const auto element = static_cast<std::uint64_t>(element_size(plan.pattern.type));
  auto* output = static_cast<unsigned char*>(slot.receive.get()) + offset +
                 (plan.in_place ? layout.in_place_output_offset * element : 0);
  restore_unwritten(slot, plan, offset);
  if (plan.faults && plan.faults->corrupts(slot.global_rank)) {
    enqueue_corrupt(plan.pattern, output, layout.output_elements, slot.stream.get());
  }
  if (plan.check && plan.timed) {
    enqueue_count_mismatches(
        plan.pattern, output, slot.expected.get(), layout.output_elements,
        static_cast<unsigned long long*>(slot.wrong_counters.get()) + iteration, slot.stream.get());
  }
}

void NcclCommunicator::enqueue_collective(Slot& slot, const PatternSpec& spec, bool in_place,
                                          std::uint64_t offset) {
  const RankLayout layout = layout_for(slot, spec);
  const auto element = static_cast<std::uint64_t>(element_size(spec.type));
  auto* receive = static_cast<unsigned char*>(slot.receive.get()) + offset;
  const void* input = in_place ? receive + layout.in_place_input_offset * element : slot.send.get();
  void* output = in_place ? receive + layout.in_place_output_offset * element : receive;
  const NcclCall call{input,     output,    spec.count, nccl_type(spec.type), nccl_op(spec.op),
                      spec.root, slot.rank, size_,      slot.comm.get(),      slot.stream.get()};
  enqueue_nccl_call(spec.collective, call);
}

void NcclCommunicator::enqueue_operation(const LoopPlan& plan, std::size_t iteration,
                                         const std::vector<bool>& launched,
                                         const std::vector<std::uint64_t>& offsets,
                                         WatchedBatch& watched) {
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s]) continue;
    Slot& slot = slots_[s];
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    // A late arrival runs before the start event: the rank's own window stays short while its
    // peers' windows absorb the wait, which is how the straggler is named.
    if (plan.faults) {
      if (const auto delay = plan.faults->delay_seconds(slot.global_rank)) {
        enqueue_spin(*delay, slot.stream.get());
      }
    }
    COMMCERT_CHECK_CUDA(cudaEventRecord(slot.events[2 * iteration].get(), slot.stream.get()));
    watched.begin(slot.watchdog_slot);
  }
  COMMCERT_CHECK_NCCL(ncclGroupStart());
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s]) continue;
    COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
    enqueue_collective(slots_[s], plan.pattern, plan.in_place, offsets.empty() ? 0 : offsets[s]);
  }
  COMMCERT_CHECK_NCCL(ncclGroupEnd());
  ++data_operations_;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s]) continue;
    COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
    COMMCERT_CHECK_CUDA(
        cudaEventRecord(slots_[s].events[2 * iteration + 1].get(), slots_[s].stream.get()));
  }
}

void NcclCommunicator::enqueue_checked_iteration(const LoopPlan& plan, std::size_t iteration,
                                                 std::vector<bool>& launched,
                                                 WatchedBatch& watched) {
  const bool check = plan.check && plan.timed;
  mark_hung_ranks(plan, launched);
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s] || !check) continue;
    COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
    stage_output(slots_[s], plan, 0);
    save_unwritten(slots_[s], plan, 0);
  }
  enqueue_operation(plan, iteration, launched, {}, watched);
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s]) continue;
    COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
    verify_output(slots_[s], plan, iteration, 0);
  }
  COMMCERT_CHECK_CUDA(cudaGetLastError());
}

void NcclCommunicator::wait_for_iterations(std::size_t iterations,
                                           const std::vector<bool>& launched,
                                           WatchedBatch& watched) {
  // Poll instead of blocking so the watchdog's deadline restarts as each operation completes,
  // NCCL's asynchronous errors surface as errors rather than a silent wait, and an abort asked
  // for by the watchdog is carried out here, by the thread that polls these communicators.
  std::vector<std::size_t> completed(slots_.size(), 0);
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s]) watched.await_absent(slots_[s].watchdog_slot);
  }
  while (true) {
    honour_abort_request();
    bool all_done = true;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      Slot& slot = slots_[s];
      while (launched[s] && completed[s] < iterations) {
        const cudaError_t state = cudaEventQuery(slot.events[2 * completed[s] + 1].get());
        if (state == cudaErrorNotReady) break;
        COMMCERT_CHECK_CUDA(state);
        ++completed[s];
        watched.refresh(slot.watchdog_slot);
      }
      throw_async_error(slot.comm.get());
      // A rank that never launched (an injected hang) is never done: the watchdog ends it.
      all_done = all_done && launched[s] && completed[s] == iterations;
    }
    if (all_done) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
    COMMCERT_CHECK_CUDA(cudaStreamSynchronize(slots_[s].stream.get()));
    watched.end(slots_[s].watchdog_slot);
  }
}

void NcclCommunicator::barrier() {
  // A one-element allreduce on this communicator's own ranks: in a split round the processes
  // outside the group must not be waited for.
  WatchedBatch watched(watchdog_);
  COMMCERT_CHECK_NCCL(ncclGroupStart());
  for (Slot& slot : slots_) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    if (!slot.barrier_word) {
      COMMCERT_CHECK_CUDA(cudaMalloc(slot.barrier_word.out(), sizeof(float)));
    }
    watched.begin(slot.watchdog_slot);
    COMMCERT_CHECK_NCCL(ncclAllReduce(slot.barrier_word.get(), slot.barrier_word.get(), 1,
                                      ncclFloat32, ncclSum, slot.comm.get(), slot.stream.get()),
                        slot.comm.get());
  }
  COMMCERT_CHECK_NCCL(ncclGroupEnd());
  for (Slot& slot : slots_) {
    poll_until_done(
        slot.comm.get(), [&] { return cudaStreamQuery(slot.stream.get()); },
        [this] { honour_abort_request(); }, [] {});
    watched.end(slot.watchdog_slot);
  }
}

std::vector<RankLoopResult> NcclCommunicator::collect(const LoopPlan& plan, std::size_t iterations,
                                                      bool back_to_back) {
  std::vector<RankLoopResult> results;
  for (Slot& slot : slots_) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    RankLoopResult result;
    result.rank = slot.global_rank;
    result.checked = plan.check && plan.timed && layout_for(slot, plan.pattern).has_output;
    if (plan.timed) {
      for (std::size_t i = 0; i < iterations; ++i) {
        float milliseconds = 0;
        COMMCERT_CHECK_CUDA(cudaEventElapsedTime(&milliseconds, slot.events[2 * i].get(),
                                                 slot.events[2 * i + 1].get()));
        result.operation_seconds.push_back(static_cast<double>(milliseconds) * 1e-3);
      }
      if (back_to_back && iterations > 0) {
        float milliseconds = 0;
        COMMCERT_CHECK_CUDA(cudaEventElapsedTime(&milliseconds, slot.events[0].get(),
                                                 slot.events[2 * iterations - 1].get()));
        result.back_to_back_seconds = static_cast<double>(milliseconds) * 1e-3;
      }
    }
    if (result.checked) {
      std::vector<unsigned long long> wrong(iterations, 0);
      COMMCERT_CHECK_CUDA(cudaMemcpy(wrong.data(), slot.wrong_counters.get(),
                                     iterations * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost));
      for (const auto count : wrong) {
        result.wrong_elements += count;
        result.wrong_iterations += count > 0 ? 1 : 0;
      }
    }
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<RankLoopResult> NcclCommunicator::run(const LoopPlan& plan) {
  honour_abort_request();
  if (aborted_) throw RuntimeFailure("NCCL communicator was aborted");
  if (plan.graph_launches > 0 && plan.timed) return run_graph(plan);
  prepare(plan);
  const auto iterations = static_cast<std::size_t>(plan.iterations);
  const bool check = plan.check && plan.timed;
  for (Slot& slot : slots_) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    COMMCERT_CHECK_CUDA(cudaMemsetAsync(
        slot.wrong_counters.get(), 0, iterations * sizeof(unsigned long long), slot.stream.get()));
  }
  std::vector<bool> launched(slots_.size(), true);
  WatchedBatch watched(watchdog_);
  if (plan.blocking > 0) {
    // -z 1: each operation completes everywhere before the next one starts; a barrier sits
    // between operations, so only the per-operation windows are timed.
    for (std::size_t i = 0; i < iterations; ++i) {
      enqueue_checked_iteration(plan, i, launched, watched);
      wait_for_iterations(i + 1, launched, watched);
      barrier();
    }
    return collect(plan, iterations, false);
  }
  // Checked operations run back to back when each has its own slice of the receive buffer;
  // otherwise the poison and the comparison of each one sit between them.
  std::optional<std::vector<std::uint64_t>> strides;
  if (check) {
    // An injected stale/partial output is saved and restored around each operation, so those
    // runs interleave their checks.
    if (!leaves_output_unwritten(plan)) strides = batch_strides(plan);
    if (!strides) {
      barrier();  // the ranks start the timed batch together, as nccl-tests' do
      for (std::size_t i = 0; i < iterations; ++i)
        enqueue_checked_iteration(plan, i, launched, watched);
      wait_for_iterations(iterations, launched, watched);
      watched.end();
      auto results = collect(plan, iterations, false);
      measure_back_to_back(plan, results);
      return results;
    }
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
      for (std::size_t i = 0; i < iterations; ++i)
        stage_output(slots_[s], plan, i * (*strides)[s]);
    }
    COMMCERT_CHECK_CUDA(cudaGetLastError());
  }
  if (plan.timed) barrier();
  std::vector<std::uint64_t> offsets(slots_.size(), 0);
  for (std::size_t i = 0; i < iterations; ++i) {
    mark_hung_ranks(plan, launched);
    if (strides) {
      for (std::size_t s = 0; s < slots_.size(); ++s)
        offsets[s] = i * (*strides)[s];
    }
    enqueue_operation(plan, i, launched, offsets, watched);
  }
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s]) continue;
    COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
    if (strides) {
      for (std::size_t i = 0; i < iterations; ++i)
        verify_output(slots_[s], plan, i, i * (*strides)[s]);
    } else if (iterations > 0) {
      verify_output(slots_[s], plan, iterations - 1, 0);  // unchecked: injected corruption only
    }
  }
  COMMCERT_CHECK_CUDA(cudaGetLastError());
  wait_for_iterations(iterations, launched, watched);
  watched.end();
  auto results = collect(plan, iterations, true);
  measure_back_to_back(plan, results);
  return results;
}

void NcclCommunicator::measure_back_to_back(const LoopPlan& plan,
                                            std::vector<RankLoopResult>& results) {
  // Injected faults act between an operation's events, so their runs keep the windows' span.
  if (!plan.timed || (plan.faults && !plan.faults->empty()) || plan.iterations <= 0) return;
  const auto iterations = static_cast<std::size_t>(plan.iterations);
  // The same operations just took this long with their windows: the watchdog's deadline is
  // restarted for twice that, then runs out as for any operation.
  double windows_seconds = 0;
  for (const RankLoopResult& result : results) {
    double sum = 0;
    for (const double seconds : result.operation_seconds)
      sum += seconds;
    windows_seconds = std::max(windows_seconds, sum);
  }
  const auto allowance = Deadline::after_seconds(2 * windows_seconds + 1);
  barrier();
  WatchedBatch watched(watchdog_);
  for (Slot& slot : slots_) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    COMMCERT_CHECK_CUDA(cudaEventRecord(slot.events[0].get(), slot.stream.get()));
    watched.begin(slot.watchdog_slot);
  }
  // nccl-tests' loop: one group per operation, the same buffers every time.
  for (std::size_t i = 0; i < iterations; ++i) {
    COMMCERT_CHECK_NCCL(ncclGroupStart());
    for (Slot& slot : slots_) {
      COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
      enqueue_collective(slot, plan.pattern, plan.in_place, 0);
    }
    COMMCERT_CHECK_NCCL(ncclGroupEnd());
  }
  for (Slot& slot : slots_) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    COMMCERT_CHECK_CUDA(cudaEventRecord(slot.events[1].get(), slot.stream.get()));
  }
  for (Slot& slot : slots_) {
    poll_until_done(
        slot.comm.get(), [&] { return cudaEventQuery(slot.events[1].get()); },
        [this] { honour_abort_request(); },
        [&] {
          if (allowance.expired()) return;
          for (const Slot& other : slots_)
            watched.refresh(other.watchdog_slot);
        });
  }
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    float milliseconds = 0;
    COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
    COMMCERT_CHECK_CUDA(
        cudaEventElapsedTime(&milliseconds, slots_[s].events[0].get(), slots_[s].events[1].get()));
    results[s].back_to_back_seconds = static_cast<double>(milliseconds) * 1e-3;
  }
  watched.end();
}

}  // namespace commcert
