#include <algorithm>
#include <vector>

#include "comm/cuda_errors.hpp"
#include "comm/nccl_communicator.hpp"
#include "comm/watchdog.hpp"
#include "core/errors.hpp"
#include "kernels/pattern_device.hpp"

// -G: a plan's operations captured once in a CUDA graph per rank and the graph replayed.

namespace commcert {

// The executable graph of each slot; destroyed however the run is left.
struct NcclGraphs {
  explicit NcclGraphs(std::size_t slots) : executables(slots, nullptr) {}
  ~NcclGraphs() {
    for (cudaGraphExec_t graph : executables) {
      if (graph) cudaGraphExecDestroy(graph);
    }
  }
  NcclGraphs(const NcclGraphs&) = delete;
  NcclGraphs& operator=(const NcclGraphs&) = delete;

  std::vector<cudaGraphExec_t> executables;
};

std::vector<RankLoopResult> NcclCommunicator::run_graph(const LoopPlan& plan) {
  // -G: the -n operations are captured once and the graph is replayed -G times; each replay
  // gives one sample (its time divided by -n). The output of the last replay is checked.
  prepare(plan);
  const auto launches = static_cast<std::size_t>(plan.graph_launches);
  for (Slot& slot : slots_)
    reserve(slot, slot.capacity, std::max(launches, std::size_t{1}));
  NcclGraphs graphs(slots_.size());
  capture_graphs(plan, graphs);
  std::vector<bool> launched(slots_.size(), true);
  WatchedBatch watched(watchdog_);
  launch_graphs(plan, graphs, launched, watched);
  COMMCERT_CHECK_CUDA(cudaGetLastError());
  wait_for_iterations(launches, launched, watched);
  std::vector<RankLoopResult> results = graph_replay_times(plan);
  if (plan.check) check_graph_output(plan, results);
  return results;
}

void NcclCommunicator::capture_graphs(const LoopPlan& plan, NcclGraphs& graphs) {
  // Thread-local capture, as nccl-tests: global mode would forbid NCCL's own threads the CUDA
  // calls they make meanwhile (and the cudaMalloc of a connection set up during capture).
  for (Slot& slot : slots_) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    COMMCERT_CHECK_CUDA(
        cudaStreamBeginCapture(slot.stream.get(), cudaStreamCaptureModeThreadLocal));
  }
  try {
    for (int i = 0; i < plan.iterations; ++i) {
      COMMCERT_CHECK_NCCL(ncclGroupStart());
      for (Slot& slot : slots_) {
        COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
        enqueue_collective(slot, plan.pattern, plan.in_place, 0);
      }
      COMMCERT_CHECK_NCCL(ncclGroupEnd());
    }
  } catch (...) {
    // Leave no stream capturing: the error is reported, and the streams are used again.
    for (Slot& slot : slots_) {
      cudaGraph_t partial = nullptr;
      cudaSetDevice(slot.device);
      if (cudaStreamEndCapture(slot.stream.get(), &partial) == cudaSuccess && partial) {
        cudaGraphDestroy(partial);
      }
      cudaGetLastError();
    }
    throw;
  }
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    cudaGraph_t graph = nullptr;
    COMMCERT_CHECK_CUDA(cudaSetDevice(slots_[s].device));
    COMMCERT_CHECK_CUDA(cudaStreamEndCapture(slots_[s].stream.get(), &graph));
    const cudaError_t instantiated = cudaGraphInstantiate(&graphs.executables[s], graph, 0);
    cudaGraphDestroy(graph);
    COMMCERT_CHECK_CUDA(instantiated);
  }
}

void NcclCommunicator::launch_graphs(const LoopPlan& plan, const NcclGraphs& graphs,
                                     std::vector<bool>& launched, WatchedBatch& watched) {
  const auto launches = static_cast<std::size_t>(plan.graph_launches);
  for (std::size_t launch = 0; launch < launches; ++launch) {
    const bool last = launch + 1 == launches;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      Slot& slot = slots_[s];
      const auto hang_at =
          plan.faults ? plan.faults->hang_before_operation(slot.global_rank) : std::nullopt;
      launched[s] = launched[s] && !(hang_at && data_operations_ >= *hang_at);
      if (!launched[s]) continue;
      COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
      // The output checked is the last replay's: poison it first (outside the replay's events),
      // so a graph that writes nothing cannot pass on what the warm-up or earlier replays left.
      if (plan.check && last && !plan.in_place) {
        stage_output(slot, plan, 0);
        save_unwritten(slot, plan, 0);
      }
      if (plan.faults) {
        if (const auto delay = plan.faults->delay_seconds(slot.global_rank)) {
          enqueue_spin(*delay, slot.stream.get());
        }
      }
      COMMCERT_CHECK_CUDA(cudaEventRecord(slot.events[2 * launch].get(), slot.stream.get()));
      watched.begin(slot.watchdog_slot);
      COMMCERT_CHECK_CUDA(cudaGraphLaunch(graphs.executables[s], slot.stream.get()));
      COMMCERT_CHECK_CUDA(cudaEventRecord(slot.events[2 * launch + 1].get(), slot.stream.get()));
    }
    data_operations_ += static_cast<std::uint64_t>(plan.iterations);
  }
}

std::vector<RankLoopResult> NcclCommunicator::graph_replay_times(const LoopPlan& plan) {
  const auto launches = static_cast<std::size_t>(plan.graph_launches);
  std::vector<RankLoopResult> results;
  for (Slot& slot : slots_) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    RankLoopResult result;
    result.rank = slot.global_rank;
    for (std::size_t launch = 0; launch < launches; ++launch) {
      float milliseconds = 0;
      COMMCERT_CHECK_CUDA(cudaEventElapsedTime(&milliseconds, slot.events[2 * launch].get(),
                                               slot.events[2 * launch + 1].get()));
      result.operation_seconds.push_back(static_cast<double>(milliseconds) * 1e-3 /
                                         plan.iterations);
    }
    results.push_back(std::move(result));
  }
  return results;
}

void NcclCommunicator::check_graph_output(const LoopPlan& plan,
                                          std::vector<RankLoopResult>& results) {
  // In place, repeated operations compound (an allreduce of an allreduce), so the evidence is
  // one more, checked iteration; out of place the last replay's output is checked directly.
  LoopPlan checked = plan;
  checked.graph_launches = 0;
  checked.iterations = 1;
  const auto verdict = plan.in_place ? run(checked) : std::vector<RankLoopResult>{};
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    Slot& slot = slots_[s];
    results[s].checked = layout_for(slot, plan.pattern).has_output;
    if (plan.in_place) {
      results[s].wrong_elements = verdict[s].wrong_elements;
      results[s].wrong_iterations = verdict[s].wrong_iterations;
      continue;
    }
    if (!results[s].checked) continue;
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    COMMCERT_CHECK_CUDA(cudaMemsetAsync(slot.wrong_counters.get(), 0, sizeof(unsigned long long),
                                        slot.stream.get()));
    verify_output(slot, plan, 0, 0);
    unsigned long long wrong = 0;
    COMMCERT_CHECK_CUDA(cudaMemcpyAsync(&wrong, slot.wrong_counters.get(), sizeof wrong,
                                        cudaMemcpyDeviceToHost, slot.stream.get()));
    COMMCERT_CHECK_CUDA(cudaStreamSynchronize(slot.stream.get()));
    results[s].wrong_elements = wrong;
    results[s].wrong_iterations = wrong > 0 ? 1 : 0;
  }
}

}  // namespace commcert
