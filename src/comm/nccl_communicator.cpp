#include "comm/nccl_communicator.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "comm/cuda_errors.hpp"
#include "comm/watchdog.hpp"
#include "core/errors.hpp"
#include "pattern_device.hpp"

namespace commcert {
namespace {

ncclDataType_t nccl_type(DataType type) {
  switch (type) {
    case DataType::kInt8:
      return ncclInt8;
    case DataType::kUint8:
      return ncclUint8;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kUint32:
      return ncclUint32;
    case DataType::kInt64:
      return ncclInt64;
    case DataType::kUint64:
      return ncclUint64;
    case DataType::kHalf:
      return ncclFloat16;
    case DataType::kBfloat16:
      return ncclBfloat16;
    case DataType::kFloat:
      return ncclFloat32;
    case DataType::kDouble:
      return ncclFloat64;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case DataType::kFp8E4M3:
      return ncclFloat8e4m3;
    case DataType::kFp8E5M2:
      return ncclFloat8e5m2;
#else
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      break;
#endif
  }
  throw RuntimeFailure("datatype not supported by this NCCL");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kProd:
      return ncclProd;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}"
      "{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
      b[15]);
}

// nccl-tests' headroom: keep ceil(total/16 GiB) GiB (at most 4) plus 1 GiB for NCCL and CUDA.
std::uint64_t usable_device_bytes(std::uint64_t free_bytes, std::uint64_t total_bytes) {
  constexpr std::uint64_t kGiB = 1ULL << 30;
  const std::uint64_t reserve =
      std::min((total_bytes + 16 * kGiB - 1) / (16 * kGiB), std::uint64_t{4}) * kGiB + kGiB;
  return free_bytes > reserve ? free_bytes - reserve : 0;
}

bool same_data(const PatternSpec& a, const PatternSpec& b) {
  return a.collective == b.collective && a.type == b.type && a.op == b.op && a.nranks == b.nranks &&
         a.root == b.root && a.count == b.count && a.seed == b.seed;
}

}  // namespace

NcclCommunicator::NcclCommunicator(ControlPlane& control, int local_process_index,
                                   int gpus_per_process)
    : control_(control) {
  int device_count = 0;
  check_cuda(cudaGetDeviceCount(&device_count), "cudaGetDeviceCount");
  if (gpus_per_process > device_count) {
    throw UsageError(fmt::format("-g/--ngpus {} but only {} GPU(s) are visible", gpus_per_process,
                                 device_count));
  }
  size_ = control.process_count() * gpus_per_process;
  ncclUniqueId id{};
  if (control.process_index() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  const std::string shared =
      control.broadcast_from_root(std::string(reinterpret_cast<const char*>(&id), sizeof id));
  std::copy(shared.begin(), shared.end(), reinterpret_cast<char*>(&id));

  slots_.resize(static_cast<std::size_t>(gpus_per_process));
  max_buffer_bytes_ = UINT64_MAX;
  for (int i = 0; i < gpus_per_process; ++i) {
    Slot& slot = slots_[static_cast<std::size_t>(i)];
    slot.rank = control.process_index() * gpus_per_process + i;
    slot.global_rank = slot.rank;
    slot.watchdog_slot = i;
    slot.device = (local_process_index * gpus_per_process + i) % device_count;
    ranks_.push_back(slot.rank);
    global_ranks_.push_back(slot.rank);
    check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
    cudaDeviceProp properties{};
    check_cuda(cudaGetDeviceProperties(&properties, slot.device), "cudaGetDeviceProperties");
    slot.compute_capability = properties.major * 10 + properties.minor;
    slot.gpu.index = slot.device;
    slot.gpu.name = properties.name;
    slot.gpu.uuid = format_uuid(properties.uuid);
    slot.gpu.pci_bus_id = fmt::format("{:08x}:{:02x}:{:02x}.0", properties.pciDomainID,
                                      properties.pciBusID, properties.pciDeviceID);
    check_cuda(cudaStreamCreateWithFlags(&slot.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    max_buffer_bytes_ =
        std::min(max_buffer_bytes_, usable_device_bytes(free_bytes, total_bytes) / 3);
  }
  // Several communicators in one process must be created inside one group.
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (Slot& slot : slots_) {
    check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
    check_nccl(ncclCommInitRank(&slot.comm, size_, id, slot.rank), "ncclCommInitRank");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

NcclCommunicator::NcclCommunicator(ControlPlane& control, std::vector<Slot> slots,
                                   std::uint64_t max_buffer_bytes)
    : control_(control), slots_(std::move(slots)), max_buffer_bytes_(max_buffer_bytes) {
  for (Slot& slot : slots_) {
    int count = 0;
    check_nccl(ncclCommCount(slot.comm, &count), "ncclCommCount", slot.comm);
    check_nccl(ncclCommUserRank(slot.comm, &slot.rank), "ncclCommUserRank", slot.comm);
    size_ = count;
    ranks_.push_back(slot.rank);
    global_ranks_.push_back(slot.global_rank);
    check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&slot.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
}

std::unique_ptr<Communicator> NcclCommunicator::split(std::span<const int> color_per_slot) {
  std::vector<Slot> parts;
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const int color = s < color_per_slot.size() && color_per_slot[s] >= 0 ? color_per_slot[s]
                                                                          : NCCL_SPLIT_NOCOLOR;
    Slot part;
    part.global_rank = slots_[s].global_rank;
    part.watchdog_slot = slots_[s].watchdog_slot;
    part.device = slots_[s].device;
    part.gpu = slots_[s].gpu;
    part.compute_capability = slots_[s].compute_capability;
    check_cuda(cudaSetDevice(part.device), "cudaSetDevice");
    check_nccl(ncclCommSplit(slots_[s].comm, color, slots_[s].global_rank, &part.comm, nullptr),
               "ncclCommSplit", slots_[s].comm);
    parts.push_back(part);
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  std::erase_if(parts, [](const Slot& part) { return part.comm == nullptr; });
  if (parts.empty()) return nullptr;
  std::unique_ptr<Communicator> out(
      new NcclCommunicator(control_, std::move(parts), max_buffer_bytes_));
  out->attach_watchdog(watchdog_);
  return out;
}

void NcclCommunicator::free_buffers(Slot& slot) {
  cudaSetDevice(slot.device);
  if (slot.stream) cudaStreamSynchronize(slot.stream);
  for (cudaEvent_t event : slot.events)
    cudaEventDestroy(event);
  slot.events.clear();
  cudaFree(slot.send);
  cudaFree(slot.receive);
  cudaFree(slot.expected);
  cudaFree(slot.wrong_counters);
  cudaFree(slot.barrier_word);
  slot.send = slot.receive = slot.expected = nullptr;
  slot.wrong_counters = nullptr;
  slot.barrier_word = nullptr;
  slot.capacity = 0;
  slot.counter_capacity = 0;
}

void NcclCommunicator::reserve_buffers(std::uint64_t bytes) {
  for (Slot& slot : slots_)
    reserve(slot, bytes, 1);
}

void NcclCommunicator::release_buffers() {
  for (Slot& slot : slots_)
    free_buffers(slot);
  prepared_.reset();
}

NcclCommunicator::~NcclCommunicator() {
  for (Slot& slot : slots_) {
    free_buffers(slot);
    if (slot.comm && !aborted_) ncclCommDestroy(slot.comm);
    if (slot.stream) cudaStreamDestroy(slot.stream);
  }
}

void NcclCommunicator::abort() noexcept {
  if (aborted_) return;
  aborted_ = true;
  for (Slot& slot : slots_) {
    if (slot.comm) ncclCommAbort(slot.comm);
  }
}

std::optional<std::string> NcclCommunicator::unsupported(CollectiveKind kind, DataType type,
                                                         ReduceOp /*op*/, bool in_place) const {
  if (in_place && kind == CollectiveKind::kSendRecv) {
    return "sendrecv has no in-place form (send and receive buffers would overlap)";
  }
  if (in_place && kind == CollectiveKind::kAllToAll) return "NCCL has no in-place alltoall";
  if (type == DataType::kFp8E4M3 || type == DataType::kFp8E5M2) {
    if (NCCL_VERSION_CODE < NCCL_VERSION(2, 24, 0)) return "fp8 needs NCCL 2.24 or later";
    const bool all_hopper = std::all_of(slots_.begin(), slots_.end(), [](const Slot& slot) {
      return slot.compute_capability >= 90;
    });
    if (!all_hopper) return "fp8 needs compute capability 9.0 (Hopper) or later";
  }
  return std::nullopt;
}

std::vector<std::string> NcclCommunicator::device_descriptions() const {
  std::vector<std::string> out;
  for (const Slot& slot : slots_) {
    out.push_back(fmt::format("[{}] {}", slot.gpu.pci_bus_id, slot.gpu.name));
  }
  return out;
}

std::vector<GpuIdentity> NcclCommunicator::gpu_identities() const {
  std::vector<GpuIdentity> out;
  for (const Slot& slot : slots_)
    out.push_back(slot.gpu);
  return out;
}

RankLayout NcclCommunicator::layout_for(const Slot& slot, const PatternSpec& spec) const {
  return rank_layout(spec.collective, spec.count, size_, slot.rank, spec.root);
}

void NcclCommunicator::reserve(Slot& slot, std::uint64_t bytes, std::size_t iterations) {
  check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
  if (bytes > slot.capacity) {
    check_cuda(cudaStreamSynchronize(slot.stream), "cudaStreamSynchronize");
    cudaFree(slot.send);
    cudaFree(slot.receive);
    cudaFree(slot.expected);
    slot.send = slot.receive = slot.expected = nullptr;
    slot.capacity = 0;
    check_cuda(cudaMalloc(&slot.send, bytes), "cudaMalloc");
    check_cuda(cudaMalloc(&slot.receive, bytes), "cudaMalloc");
    check_cuda(cudaMalloc(&slot.expected, bytes), "cudaMalloc");
    slot.capacity = bytes;
  }
  if (iterations > slot.counter_capacity) {
    check_cuda(cudaStreamSynchronize(slot.stream), "cudaStreamSynchronize");
    cudaFree(slot.wrong_counters);
    slot.wrong_counters = nullptr;
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&slot.wrong_counters),
                          iterations * sizeof(unsigned long long)),
               "cudaMalloc");
    slot.counter_capacity = iterations;
  }
  while (slot.events.size() < 2 * iterations) {
    cudaEvent_t event = nullptr;
    check_cuda(cudaEventCreate(&event), "cudaEventCreate");
    slot.events.push_back(event);
  }
}

void NcclCommunicator::prepare(const LoopPlan& plan) {
  const PatternSpec& spec = plan.pattern;
  const bool want_expected = plan.check && plan.timed;
  const auto iterations = static_cast<std::size_t>(std::max(plan.iterations, 1));
  const auto element = static_cast<std::uint64_t>(element_size(spec.type));
  const bool same = prepared_ && same_data(prepared_->spec, spec);
  // The expected output depends on the data, not the placement: keep it across placements.
  const bool expected_ready = !want_expected || (same && prepared_->with_expected);
  const bool data_ready = same && expected_ready && prepared_->in_place == plan.in_place;
  for (Slot& slot : slots_) {
    const RankLayout layout = layout_for(slot, spec);
    const std::uint64_t image = layout.in_place_buffer_elements();
    // One size for every placement, so switching placement never reallocates (and loses) the
    // expected output.
    reserve(slot, std::max({layout.input_elements, layout.output_elements, image}) * element,
            iterations);
    if (data_ready) continue;
    auto* send = static_cast<unsigned char*>(slot.send);
    if (layout.has_output && !expected_ready) {
      enqueue_fill_expected(spec, slot.rank, slot.expected, layout.output_elements, slot.stream);
    }
    if (plan.in_place) {
      if (layout.has_output && want_expected) {
        enqueue_poison(spec, slot.expected, send + layout.in_place_output_offset * element,
                       layout.output_elements, slot.stream);
      }
      enqueue_fill_input(spec, slot.rank, send + layout.in_place_input_offset * element,
                         layout.input_elements, slot.stream);
      check_cuda(cudaMemcpyAsync(slot.receive, slot.send, image * element, cudaMemcpyDeviceToDevice,
                                 slot.stream),
                 "cudaMemcpyAsync");
    } else {
      enqueue_fill_input(spec, slot.rank, slot.send, layout.input_elements, slot.stream);
    }
    check_cuda(cudaGetLastError(), "pattern kernel launch");
  }
  prepared_ =
      PreparedData{spec, plan.in_place, want_expected || (same && prepared_->with_expected)};
}

void NcclCommunicator::enqueue_collective(Slot& slot, const PatternSpec& spec, bool in_place) {
  const RankLayout layout = layout_for(slot, spec);
  const auto element = static_cast<std::uint64_t>(element_size(spec.type));
  auto* receive = static_cast<unsigned char*>(slot.receive);
  const void* input = in_place ? receive + layout.in_place_input_offset * element : slot.send;
  void* output = in_place ? receive + layout.in_place_output_offset * element : slot.receive;
  const ncclDataType_t type = nccl_type(spec.type);
  const ncclRedOp_t op = nccl_op(spec.op);
  const std::size_t count = spec.count;
  const int n = size_;
  switch (spec.collective) {
    case CollectiveKind::kAllReduce:
      check_nccl(ncclAllReduce(input, output, count, type, op, slot.comm, slot.stream),
                 "ncclAllReduce", slot.comm);
      break;
    case CollectiveKind::kAllGather:
      check_nccl(ncclAllGather(input, output, count, type, slot.comm, slot.stream), "ncclAllGather",
                 slot.comm);
      break;
    case CollectiveKind::kReduceScatter:
      check_nccl(ncclReduceScatter(input, output, count, type, op, slot.comm, slot.stream),
                 "ncclReduceScatter", slot.comm);
      break;
    case CollectiveKind::kBroadcast:
      check_nccl(ncclBroadcast(input, output, count, type, spec.root, slot.comm, slot.stream),
                 "ncclBroadcast", slot.comm);
      break;
    case CollectiveKind::kReduce:
      check_nccl(ncclReduce(input, output, count, type, op, spec.root, slot.comm, slot.stream),
                 "ncclReduce", slot.comm);
      break;
    case CollectiveKind::kAllToAll:
      check_nccl(ncclAlltoAll(input, output, count, type, slot.comm, slot.stream), "ncclAlltoAll",
                 slot.comm);
      break;
    case CollectiveKind::kGather:
      check_nccl(ncclGather(input, output, count, type, spec.root, slot.comm, slot.stream),
                 "ncclGather", slot.comm);
      break;
    case CollectiveKind::kScatter:
      check_nccl(ncclScatter(input, output, count, type, spec.root, slot.comm, slot.stream),
                 "ncclScatter", slot.comm);
      break;
    case CollectiveKind::kSendRecv:
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      check_nccl(ncclSend(input, count, type, (slot.rank + 1) % n, slot.comm, slot.stream),
                 "ncclSend", slot.comm);
      check_nccl(ncclRecv(output, count, type, (slot.rank + n - 1) % n, slot.comm, slot.stream),
                 "ncclRecv", slot.comm);
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      break;
  }
}

void NcclCommunicator::enqueue_iteration(const LoopPlan& plan, std::size_t iteration,
                                         std::vector<bool>& launched) {
  const PatternSpec& spec = plan.pattern;
  const auto element = static_cast<std::uint64_t>(element_size(spec.type));
  const FaultPlan no_faults;
  const FaultPlan& faults = plan.faults ? *plan.faults : no_faults;
  const bool check = plan.check && plan.timed;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    Slot& slot = slots_[s];
    const auto hang_at = faults.hang_before_operation(slot.global_rank);
    launched[s] = launched[s] && !(hang_at && data_operations_ >= *hang_at);
    if (!launched[s]) continue;  // injected hang: this rank never arrives
    check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
    const RankLayout layout = layout_for(slot, spec);
    auto* receive = static_cast<unsigned char*>(slot.receive);
    if (check && layout.has_output) {
      if (plan.in_place) {
        check_cuda(
            cudaMemcpyAsync(slot.receive, slot.send, layout.in_place_buffer_elements() * element,
                            cudaMemcpyDeviceToDevice, slot.stream),
            "cudaMemcpyAsync");
      } else {
        enqueue_poison(spec, slot.expected, receive, layout.output_elements, slot.stream);
      }
    }
    if (const auto delay = faults.delay_seconds(slot.global_rank))
      enqueue_spin(*delay, slot.stream);
    check_cuda(cudaEventRecord(slot.events[2 * iteration], slot.stream), "cudaEventRecord");
    if (watchdog_) watchdog_->begin(slot.watchdog_slot);
  }
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s]) continue;
    check_cuda(cudaSetDevice(slots_[s].device), "cudaSetDevice");
    enqueue_collective(slots_[s], spec, plan.in_place);
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  ++data_operations_;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!launched[s]) continue;
    Slot& slot = slots_[s];
    check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
    check_cuda(cudaEventRecord(slot.events[2 * iteration + 1], slot.stream), "cudaEventRecord");
    const RankLayout layout = layout_for(slot, spec);
    if (!layout.has_output) continue;
    auto* output = static_cast<unsigned char*>(slot.receive) +
                   (plan.in_place ? layout.in_place_output_offset * element : 0);
    if (faults.corrupts(slot.global_rank))
      enqueue_corrupt(spec, output, layout.output_elements, slot.stream);
    if (check) {
      enqueue_count_mismatches(spec, output, slot.expected, layout.output_elements,
                               slot.wrong_counters + iteration, slot.stream);
    }
  }
  check_cuda(cudaGetLastError(), "kernel launch");
}

void NcclCommunicator::wait_for_iterations(const LoopPlan& /*plan*/, std::size_t iterations,
                                           const std::vector<bool>& launched) {
  // Poll instead of blocking so the watchdog's deadline restarts as each operation completes
  // and NCCL's asynchronous errors surface as errors rather than a silent wait.
  std::vector<std::size_t> completed(slots_.size(), 0);
  while (true) {
    bool all_done = true;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      Slot& slot = slots_[s];
      while (launched[s] && completed[s] < iterations) {
        const cudaError_t state = cudaEventQuery(slot.events[2 * completed[s] + 1]);
        if (state == cudaErrorNotReady) break;
        check_cuda(state, "cudaEventQuery");
        ++completed[s];
        if (watchdog_) watchdog_->refresh(slot.watchdog_slot);
      }
      ncclResult_t async_error = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(slot.comm, &async_error), "ncclCommGetAsyncError",
                 slot.comm);
      check_nccl(async_error, "NCCL asynchronous error", slot.comm);
      all_done = all_done && (!launched[s] ? false : completed[s] == iterations);
    }
    if (all_done) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    check_cuda(cudaSetDevice(slots_[s].device), "cudaSetDevice");
    check_cuda(cudaStreamSynchronize(slots_[s].stream), "cudaStreamSynchronize");
    if (watchdog_) watchdog_->end(slots_[s].watchdog_slot);
  }
}

void NcclCommunicator::barrier() {
  // A one-element allreduce on this communicator's own ranks: in a split round the processes
  // outside the group must not be waited for.
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (Slot& slot : slots_) {
    check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
    if (!slot.barrier_word) {
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&slot.barrier_word), sizeof(float)),
                 "cudaMalloc");
    }
    if (watchdog_) watchdog_->begin(slot.watchdog_slot);
    check_nccl(ncclAllReduce(slot.barrier_word, slot.barrier_word, 1, ncclFloat32, ncclSum,
                             slot.comm, slot.stream),
               "ncclAllReduce", slot.comm);
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  for (Slot& slot : slots_) {
    while (cudaStreamQuery(slot.stream) == cudaErrorNotReady) {
      ncclResult_t async_error = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(slot.comm, &async_error), "ncclCommGetAsyncError",
                 slot.comm);
      check_nccl(async_error, "NCCL asynchronous error", slot.comm);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    check_cuda(cudaStreamSynchronize(slot.stream), "cudaStreamSynchronize");
    if (watchdog_) watchdog_->end(slot.watchdog_slot);
  }
}

std::vector<RankLoopResult> NcclCommunicator::collect(const LoopPlan& plan,
                                                      std::size_t iterations) {
  std::vector<RankLoopResult> results;
  for (Slot& slot : slots_) {
    RankLoopResult result;
    result.rank = slot.global_rank;
    result.checked = plan.check && plan.timed && layout_for(slot, plan.pattern).has_output;
    if (plan.timed) {
      for (std::size_t i = 0; i < iterations; ++i) {
        float milliseconds = 0;
        check_cuda(cudaEventElapsedTime(&milliseconds, slot.events[2 * i], slot.events[2 * i + 1]),
                   "cudaEventElapsedTime");
        result.operation_seconds.push_back(static_cast<double>(milliseconds) * 1e-3);
      }
    }
    if (result.checked) {
      std::vector<unsigned long long> wrong(iterations, 0);
      check_cuda(cudaMemcpy(wrong.data(), slot.wrong_counters,
                            iterations * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
                 "cudaMemcpy");
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
  if (aborted_) throw RuntimeFailure("NCCL communicator was aborted");
  if (plan.graph_launches > 0 && plan.timed) return run_graph(plan);
  prepare(plan);
  const auto iterations = static_cast<std::size_t>(plan.iterations);
  for (Slot& slot : slots_) {
    check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
    check_cuda(cudaMemsetAsync(slot.wrong_counters, 0, iterations * sizeof(unsigned long long),
                               slot.stream),
               "cudaMemsetAsync");
  }
  std::vector<bool> launched(slots_.size(), true);
  if (plan.blocking > 0) {
    // -z 1: each operation completes everywhere before the next one starts.
    for (std::size_t i = 0; i < iterations; ++i) {
      enqueue_iteration(plan, i, launched);
      wait_for_iterations(plan, i + 1, launched);
      barrier();
    }
  } else {
    for (std::size_t i = 0; i < iterations; ++i)
      enqueue_iteration(plan, i, launched);
    wait_for_iterations(plan, iterations, launched);
  }
  return collect(plan, iterations);
}

std::vector<RankLoopResult> NcclCommunicator::run_graph(const LoopPlan& plan) {
  // -G: the -n operations are captured once and the graph is replayed -G times; each replay
  // gives one sample (its time divided by -n). The output of the last replay is checked.
  prepare(plan);
  const auto launches = static_cast<std::size_t>(plan.graph_launches);
  const FaultPlan no_faults;
  const FaultPlan& faults = plan.faults ? *plan.faults : no_faults;
  std::vector<cudaGraphExec_t> executables(slots_.size(), nullptr);
  const auto mode =
      slots_.size() > 1 ? cudaStreamCaptureModeThreadLocal : cudaStreamCaptureModeGlobal;
  for (Slot& slot : slots_) {
    reserve(slot, slot.capacity, std::max(launches, std::size_t{1}));
    check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
    check_cuda(cudaStreamBeginCapture(slot.stream, mode), "cudaStreamBeginCapture");
  }
  for (int i = 0; i < plan.iterations; ++i) {
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (Slot& slot : slots_) {
      check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
      enqueue_collective(slot, plan.pattern, plan.in_place);
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    cudaGraph_t graph = nullptr;
    check_cuda(cudaSetDevice(slots_[s].device), "cudaSetDevice");
    check_cuda(cudaStreamEndCapture(slots_[s].stream, &graph), "cudaStreamEndCapture");
    check_cuda(cudaGraphInstantiate(&executables[s], graph, 0), "cudaGraphInstantiate");
    cudaGraphDestroy(graph);
  }
  std::vector<bool> launched(slots_.size(), true);
  for (std::size_t launch = 0; launch < launches; ++launch) {
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      Slot& slot = slots_[s];
      const auto hang_at = faults.hang_before_operation(slot.global_rank);
      launched[s] = launched[s] && !(hang_at && data_operations_ >= *hang_at);
      if (!launched[s]) continue;
      check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
      if (const auto delay = faults.delay_seconds(slot.global_rank))
        enqueue_spin(*delay, slot.stream);
      check_cuda(cudaEventRecord(slot.events[2 * launch], slot.stream), "cudaEventRecord");
      if (watchdog_) watchdog_->begin(slot.watchdog_slot);
      check_cuda(cudaGraphLaunch(executables[s], slot.stream), "cudaGraphLaunch");
      check_cuda(cudaEventRecord(slot.events[2 * launch + 1], slot.stream), "cudaEventRecord");
    }
    data_operations_ += static_cast<std::uint64_t>(plan.iterations);
  }
  wait_for_iterations(plan, launches, launched);
  for (std::size_t s = 0; s < slots_.size(); ++s)
    cudaGraphExecDestroy(executables[s]);

  std::vector<RankLoopResult> results;
  for (Slot& slot : slots_) {
    RankLoopResult result;
    result.rank = slot.global_rank;
    for (std::size_t launch = 0; launch < launches; ++launch) {
      float milliseconds = 0;
      check_cuda(
          cudaEventElapsedTime(&milliseconds, slot.events[2 * launch], slot.events[2 * launch + 1]),
          "cudaEventElapsedTime");
      result.operation_seconds.push_back(static_cast<double>(milliseconds) * 1e-3 /
                                         plan.iterations);
    }
    results.push_back(std::move(result));
  }
  if (plan.check) {
    // In place, repeated operations compound (an allreduce of an allreduce), so the evidence is
    // one more, checked iteration; out of place the last replay's output is checked directly.
    LoopPlan checked = plan;
    checked.graph_launches = 0;
    checked.iterations = 1;
    const auto verdict = plan.in_place ? run(checked) : std::vector<RankLoopResult>{};
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      Slot& slot = slots_[s];
      const RankLayout layout = layout_for(slot, plan.pattern);
      results[s].checked = layout.has_output;
      if (plan.in_place) {
        results[s].wrong_elements = verdict[s].wrong_elements;
        results[s].wrong_iterations = verdict[s].wrong_iterations;
        continue;
      }
      if (!layout.has_output) continue;
      check_cuda(cudaSetDevice(slot.device), "cudaSetDevice");
      check_cuda(cudaMemsetAsync(slot.wrong_counters, 0, sizeof(unsigned long long), slot.stream),
                 "cudaMemsetAsync");
      if (faults.corrupts(slot.global_rank))
        enqueue_corrupt(plan.pattern, slot.receive, layout.output_elements, slot.stream);
      enqueue_count_mismatches(plan.pattern, slot.receive, slot.expected, layout.output_elements,
                               slot.wrong_counters, slot.stream);
      unsigned long long wrong = 0;
      check_cuda(cudaMemcpyAsync(&wrong, slot.wrong_counters, sizeof wrong, cudaMemcpyDeviceToHost,
                                 slot.stream),
                 "cudaMemcpyAsync");
      check_cuda(cudaStreamSynchronize(slot.stream), "cudaStreamSynchronize");
      results[s].wrong_elements = wrong;
      results[s].wrong_iterations = wrong > 0 ? 1 : 0;
    }
  }
  return results;
}

}  // namespace commcert
