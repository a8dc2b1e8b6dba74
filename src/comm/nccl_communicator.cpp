#include "comm/nccl_communicator.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "comm/batch_layout.hpp"
#include "comm/collective_dispatch.hpp"
#include "comm/cuda_errors.hpp"
#include "comm/nccl_features.hpp"
#include "comm/watchdog.hpp"
#include "core/clock.hpp"
#include "core/errors.hpp"
#include "kernels/pattern_device.hpp"

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

// What every NCCL collective call needs, gathered once so each kind's call is one small function.
struct NcclCall {
  const void* input;
  void* output;
  std::size_t count;
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;
  int rank;
  int size;
  ncclComm_t comm;
  cudaStream_t stream;
};

void nccl_allreduce(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclAllReduce(c.input, c.output, c.count, c.type, c.op, c.comm, c.stream),
                      c.comm);
}

void nccl_allgather(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclAllGather(c.input, c.output, c.count, c.type, c.comm, c.stream), c.comm);
}

void nccl_reduce_scatter(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclReduceScatter(c.input, c.output, c.count, c.type, c.op, c.comm, c.stream),
                      c.comm);
}

void nccl_broadcast(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclBroadcast(c.input, c.output, c.count, c.type, c.root, c.comm, c.stream),
                      c.comm);
}

void nccl_reduce(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(
      ncclReduce(c.input, c.output, c.count, c.type, c.op, c.root, c.comm, c.stream), c.comm);
}

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
void nccl_alltoall(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclAlltoAll(c.input, c.output, c.count, c.type, c.comm, c.stream), c.comm);
}

void nccl_gather(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclGather(c.input, c.output, c.count, c.type, c.root, c.comm, c.stream),
                      c.comm);
}

void nccl_scatter(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclScatter(c.input, c.output, c.count, c.type, c.root, c.comm, c.stream),
                      c.comm);
}
#else
[[noreturn]] void nccl_needs_2_28(const NcclCall& /*c*/) {
  // unsupported() reports these as skipped; reaching here is a bug in the caller.
  throw RuntimeFailure("alltoall, gather and scatter need NCCL 2.28 headers at build time");
}
constexpr auto nccl_alltoall = nccl_needs_2_28;
constexpr auto nccl_gather = nccl_needs_2_28;
constexpr auto nccl_scatter = nccl_needs_2_28;
#endif

void nccl_sendrecv(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclGroupStart());
  COMMCERT_CHECK_NCCL(ncclSend(c.input, c.count, c.type, (c.rank + 1) % c.size, c.comm, c.stream),
                      c.comm);
  COMMCERT_CHECK_NCCL(
      ncclRecv(c.output, c.count, c.type, (c.rank + c.size - 1) % c.size, c.comm, c.stream),
      c.comm);
  COMMCERT_CHECK_NCCL(ncclGroupEnd());
}

using NcclCallFn = void (*)(const NcclCall&);
constexpr CollectiveEntry<NcclCallFn> kNcclCallList[] = {
    {CollectiveKind::kAllReduce, nccl_allreduce},
    {CollectiveKind::kAllGather, nccl_allgather},
    {CollectiveKind::kReduceScatter, nccl_reduce_scatter},
    {CollectiveKind::kBroadcast, nccl_broadcast},
    {CollectiveKind::kReduce, nccl_reduce},
    {CollectiveKind::kAllToAll, nccl_alltoall},
    {CollectiveKind::kSendRecv, nccl_sendrecv},
    {CollectiveKind::kGather, nccl_gather},
    {CollectiveKind::kScatter, nccl_scatter},
};
constexpr auto kNcclCalls = make_collective_dispatch(kNcclCallList);

}  // namespace

NcclCommunicator::NcclCommunicator(ControlPlane& control, const std::vector<int>& devices)
    : control_(control), abort_signal_(std::make_shared<AbortSignal>()) {
  if (devices.empty()) throw RuntimeFailure("--backend nccl: no GPU assigned to this process");
  // The library loaded now, not the headers compiled against, decides what may be called: an
  // older libnccl.so.2 first on the library path would otherwise end the sweep with "undefined
  // symbol" in the middle, without a record.
  int loaded_version = 0;
  COMMCERT_CHECK_NCCL(ncclGetVersion(&loaded_version));
  if (const auto why = nccl_too_old(loaded_version)) {
    throw RuntimeFailure(fmt::format("--backend nccl: {}", *why));
  }
  nccl_version_ = usable_nccl_version(NCCL_VERSION_CODE, loaded_version);

  const int gpus_per_process = static_cast<int>(devices.size());
  size_ = control.process_count() * gpus_per_process;
  ncclUniqueId id{};
  if (control.process_index() == 0) COMMCERT_CHECK_NCCL(ncclGetUniqueId(&id));
  const std::string shared =
      control.broadcast_from_root(std::string(reinterpret_cast<const char*>(&id), sizeof id));
  std::copy(shared.begin(), shared.end(), reinterpret_cast<char*>(&id));

  slots_.resize(devices.size());
  max_buffer_bytes_ = UINT64_MAX;
  for (int i = 0; i < gpus_per_process; ++i) {
    Slot& slot = slots_[static_cast<std::size_t>(i)];
    slot.rank = control.process_index() * gpus_per_process + i;
    slot.global_rank = slot.rank;
    slot.watchdog_slot = i;
    slot.device = devices[static_cast<std::size_t>(i)];
    ranks_.push_back(slot.rank);
    global_ranks_.push_back(slot.rank);
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    cudaDeviceProp properties{};
    COMMCERT_CHECK_CUDA(cudaGetDeviceProperties(&properties, slot.device));
    slot.compute_capability = properties.major * 10 + properties.minor;
    slot.gpu.index = slot.device;
    slot.gpu.name = properties.name;
    slot.gpu.uuid = format_uuid(properties.uuid);
    // The sysfs spelling (4-digit domain) the other stages write; the sweep normalizes it again
    // with its ranks (communicator_slots in cli/run_setup).
    slot.gpu.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", properties.pciDomainID,
                                      properties.pciBusID, properties.pciDeviceID);
    COMMCERT_CHECK_CUDA(cudaStreamCreateWithFlags(slot.stream.out(), cudaStreamNonBlocking));
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    COMMCERT_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
    max_buffer_bytes_ =
        std::min(max_buffer_bytes_, usable_device_bytes(free_bytes, total_bytes) / 3);
  }
  // Several communicators in one process must be created inside one group.
  COMMCERT_CHECK_NCCL(ncclGroupStart());
  for (Slot& slot : slots_) {
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    COMMCERT_CHECK_NCCL(ncclCommInitRank(slot.comm.out(), size_, id, slot.rank));
  }
  COMMCERT_CHECK_NCCL(ncclGroupEnd());
}

NcclCommunicator::NcclCommunicator(ControlPlane& control, std::vector<Slot> slots,
                                   std::uint64_t max_buffer_bytes, int nccl_version,
                                   std::shared_ptr<AbortSignal> abort_signal)
    : control_(control),
      slots_(std::move(slots)),
      max_buffer_bytes_(max_buffer_bytes),
      nccl_version_(nccl_version),
      abort_signal_(std::move(abort_signal)) {
  for (Slot& slot : slots_) {
    int count = 0;
    COMMCERT_CHECK_NCCL(ncclCommCount(slot.comm.get(), &count), slot.comm.get());
    COMMCERT_CHECK_NCCL(ncclCommUserRank(slot.comm.get(), &slot.rank), slot.comm.get());
    size_ = count;
    ranks_.push_back(slot.rank);
    global_ranks_.push_back(slot.global_rank);
    COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
    COMMCERT_CHECK_CUDA(cudaStreamCreateWithFlags(slot.stream.out(), cudaStreamNonBlocking));
  }
}

std::unique_ptr<Communicator> NcclCommunicator::split(std::span<const int> color_per_slot) {
  honour_abort_request();
  // Inside a group, ncclCommSplit leaves *newcomm null and writes the new communicator through
  // that pointer when the group completes (ncclGroupEnd): every destination must be in place,
  // and stay there, before the group starts.
  std::vector<Slot> parts(slots_.size());
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    parts[s].global_rank = slots_[s].global_rank;
    parts[s].watchdog_slot = slots_[s].watchdog_slot;
    parts[s].device = slots_[s].device;
    parts[s].gpu = slots_[s].gpu;
    parts[s].compute_capability = slots_[s].compute_capability;
  }
  COMMCERT_CHECK_NCCL(ncclGroupStart());
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const int color = s < color_per_slot.size() && color_per_slot[s] >= 0 ? color_per_slot[s]
                                                                          : NCCL_SPLIT_NOCOLOR;
    COMMCERT_CHECK_CUDA(cudaSetDevice(parts[s].device));
    COMMCERT_CHECK_NCCL(ncclCommSplit(slots_[s].comm.get(), color, slots_[s].global_rank,
                                      parts[s].comm.out(), nullptr),
                        slots_[s].comm.get());
  }
  COMMCERT_CHECK_NCCL(ncclGroupEnd());
  std::erase_if(parts, [](const Slot& part) { return !part.comm; });
  if (parts.empty()) return nullptr;
  std::unique_ptr<Communicator> out(new NcclCommunicator(
      control_, std::move(parts), max_buffer_bytes_, nccl_version_, abort_signal_));
  out->attach_watchdog(watchdog_);
  return out;
}

void NcclCommunicator::free_buffers(Slot& slot) {
  cudaSetDevice(slot.device);
  if (slot.stream) cudaStreamSynchronize(slot.stream.get());
  slot.events.clear();
  slot.send.reset();
  slot.receive.reset();
  slot.expected.reset();
  slot.wrong_counters.reset();
  slot.barrier_word.reset();
  slot.unwritten.reset();
  slot.unwritten_capacity = 0;
  slot.capacity = 0;
  slot.receive_capacity = 0;
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
  // Destroyed while an exception unwinds (a CUDA or NCCL error, a peer that failed): an
  // operation may still wait for a peer that will never come, and ncclCommDestroy or a stream
  // synchronisation would wait with it, so the error would never be recorded. Abort instead.
  if (std::uncaught_exceptions() > 0) abort();
  for (Slot& slot : slots_) {
    free_buffers(slot);
    // After abort() the communicators are gone; otherwise the handle destroys it here.
    slot.comm.reset();
    slot.stream.reset();
  }
}

void NcclCommunicator::abort() noexcept {
  if (!aborted_) {
    aborted_ = true;
    for (Slot& slot : slots_) {
      // Tearing down: nothing to do about a failure. The handle no longer owns what is aborted.
      if (slot.comm) ncclCommAbort(slot.comm.release());
    }
  }
  abort_signal_->mark_done();
}

bool NcclCommunicator::request_abort(double wait_seconds) noexcept {
  abort_signal_->request();
  try {
    return abort_signal_->wait_done(wait_seconds);
  } catch (...) {
    return false;
  }
}

void NcclCommunicator::honour_abort_request() {
  if (!abort_signal_->requested()) return;
  abort();
  throw AbortedOnRequest("NCCL communicators aborted on the watchdog's request (timeout)");
}

std::optional<std::string> NcclCommunicator::unsupported(CollectiveKind kind, DataType type,
                                                         ReduceOp /*op*/, bool in_place) const {
  if (in_place && kind == CollectiveKind::kSendRecv) {
    return "sendrecv has no in-place form (send and receive buffers would overlap)";
  }
  if (in_place && kind == CollectiveKind::kAllToAll) return "NCCL has no in-place alltoall";
  if (auto lacking = nccl_version_lacks(nccl_version_, kind, type)) return lacking;
  if (type == DataType::kFp8E4M3 || type == DataType::kFp8E5M2) {
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

std::uint64_t NcclCommunicator::image_bytes(const Slot& slot, const LoopPlan& plan) const {
  const RankLayout layout = layout_for(slot, plan.pattern);
  const auto element = static_cast<std::uint64_t>(element_size(plan.pattern.type));
  if (plan.in_place) return layout.in_place_buffer_elements() * element;
  return layout.has_output ? layout.output_elements * element : 0;
}

void NcclCommunicator::reserve(Slot& slot, std::uint64_t bytes, std::size_t iterations) {
  COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
  if (bytes > slot.capacity) {
    COMMCERT_CHECK_CUDA(cudaStreamSynchronize(slot.stream.get()));
    slot.send.reset();
    slot.receive.reset();
    slot.expected.reset();
    slot.capacity = 0;
    slot.receive_capacity = 0;
    COMMCERT_CHECK_CUDA(cudaMalloc(slot.send.out(), bytes));
    COMMCERT_CHECK_CUDA(cudaMalloc(slot.receive.out(), bytes));
    COMMCERT_CHECK_CUDA(cudaMalloc(slot.expected.out(), bytes));
    slot.capacity = bytes;
    slot.receive_capacity = bytes;
  }
  if (iterations > slot.counter_capacity) {
    COMMCERT_CHECK_CUDA(cudaStreamSynchronize(slot.stream.get()));
    COMMCERT_CHECK_CUDA(
        cudaMalloc(slot.wrong_counters.out(), iterations * sizeof(unsigned long long)));
    slot.counter_capacity = iterations;
  }
  while (slot.events.size() < 2 * iterations) {
    CudaEventHandle event;
    COMMCERT_CHECK_CUDA(cudaEventCreate(event.out()));
    slot.events.push_back(std::move(event));
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
    auto* send = static_cast<unsigned char*>(slot.send.get());
    if (layout.has_output && !expected_ready) {
      enqueue_fill_expected(spec, slot.rank, slot.expected.get(), layout.output_elements,
                            slot.stream.get());
    }
    if (plan.in_place) {
      // The send buffer keeps the pristine in-place image (input, poisoned output) from which
      // every checked iteration restores its receive buffer.
      if (layout.has_output && want_expected) {
        enqueue_poison(spec, slot.expected.get(), send + layout.in_place_output_offset * element,
                       layout.output_elements, slot.stream.get());
      }
      enqueue_fill_input(spec, slot.rank, send + layout.in_place_input_offset * element,
                         layout.input_elements, slot.stream.get());
      COMMCERT_CHECK_CUDA(cudaMemcpyAsync(slot.receive.get(), slot.send.get(), image * element,
                                          cudaMemcpyDeviceToDevice, slot.stream.get()));
    } else {
      enqueue_fill_input(spec, slot.rank, slot.send.get(), layout.input_elements,
                         slot.stream.get());
    }
    COMMCERT_CHECK_CUDA(cudaGetLastError());
  }
  prepared_ =
      PreparedData{spec, plan.in_place, want_expected || (same && prepared_->with_expected)};
}

std::optional<std::vector<std::uint64_t>> NcclCommunicator::batch_strides(const LoopPlan& plan) {
  const auto iterations = static_cast<std::uint64_t>(plan.iterations);
  std::vector<std::uint64_t> strides;
  for (Slot& slot : slots_) {
    const std::uint64_t image = image_bytes(slot, plan);
    if (!batch_slice_stride(image, iterations, slot.receive_capacity)) {
      COMMCERT_CHECK_CUDA(cudaSetDevice(slot.device));
      std::size_t free_bytes = 0;
      std::size_t total_bytes = 0;
      COMMCERT_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
      const std::uint64_t grown =
          batch_receive_bytes(image, iterations, slot.receive_capacity, slot.capacity,
                              usable_device_bytes(free_bytes, total_bytes));
      if (grown > slot.receive_capacity) {
        // Outside any timed window: the receive buffer's contents are restored per slice.
        COMMCERT_CHECK_CUDA(cudaStreamSynchronize(slot.stream.get()));
        COMMCERT_CHECK_CUDA(cudaFree(slot.receive.release()));
        if (cudaMalloc(slot.receive.out(), grown) == cudaSuccess) {
          slot.receive_capacity = grown;
        } else {
          cudaGetLastError();  // out of memory after all (fragmentation): keep the old size
          COMMCERT_CHECK_CUDA(cudaMalloc(slot.receive.out(), slot.receive_capacity));
        }
        // The receive buffer no longer holds the prepared in-place image: prepare afresh next
        // time (this batch restores every slice from the send buffer, which is intact).
        prepared_.reset();
      }
    }
    const auto stride = batch_slice_stride(image, iterations, slot.receive_capacity);
    if (!stride) return std::nullopt;
    strides.push_back(*stride);
  }
  return strides;
}

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
  kNcclCalls[static_cast<std::size_t>(spec.collective)](call);
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
      ncclResult_t async_error = ncclSuccess;
      COMMCERT_CHECK_NCCL(ncclCommGetAsyncError(slot.comm.get(), &async_error), slot.comm.get());
      COMMCERT_CHECK_NCCL(async_error, slot.comm.get());
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
    while (true) {
      honour_abort_request();
      const cudaError_t state = cudaStreamQuery(slot.stream.get());
      if (state != cudaErrorNotReady) {
        COMMCERT_CHECK_CUDA(state);
        break;
      }
      ncclResult_t async_error = ncclSuccess;
      COMMCERT_CHECK_NCCL(ncclCommGetAsyncError(slot.comm.get(), &async_error), slot.comm.get());
      COMMCERT_CHECK_NCCL(async_error, slot.comm.get());
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
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
    while (true) {
      honour_abort_request();
      const cudaError_t state = cudaEventQuery(slot.events[1].get());
      if (state != cudaErrorNotReady) {
        COMMCERT_CHECK_CUDA(state);
        break;
      }
      ncclResult_t async_error = ncclSuccess;
      COMMCERT_CHECK_NCCL(ncclCommGetAsyncError(slot.comm.get(), &async_error), slot.comm.get());
      COMMCERT_CHECK_NCCL(async_error, slot.comm.get());
      if (!allowance.expired()) {
        for (const Slot& other : slots_)
          watched.refresh(other.watchdog_slot);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
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

std::vector<RankLoopResult> NcclCommunicator::run_graph(const LoopPlan& plan) {
  // -G: the -n operations are captured once and the graph is replayed -G times; each replay
  // gives one sample (its time divided by -n). The output of the last replay is checked.
  prepare(plan);
  const auto launches = static_cast<std::size_t>(plan.graph_launches);
  const bool check = plan.check;
  for (Slot& slot : slots_)
    reserve(slot, slot.capacity, std::max(launches, std::size_t{1}));

  // Destroys the executable graphs however this function is left.
  struct Executables {
    std::vector<cudaGraphExec_t> graphs;
    ~Executables() {
      for (cudaGraphExec_t graph : graphs) {
        if (graph) cudaGraphExecDestroy(graph);
      }
    }
  } executables{std::vector<cudaGraphExec_t>(slots_.size(), nullptr)};
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
    const cudaError_t instantiated = cudaGraphInstantiate(&executables.graphs[s], graph, 0);
    cudaGraphDestroy(graph);
    COMMCERT_CHECK_CUDA(instantiated);
  }
  std::vector<bool> launched(slots_.size(), true);
  WatchedBatch watched(watchdog_);
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
      if (check && last && !plan.in_place) {
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
      COMMCERT_CHECK_CUDA(cudaGraphLaunch(executables.graphs[s], slot.stream.get()));
      COMMCERT_CHECK_CUDA(cudaEventRecord(slot.events[2 * launch + 1].get(), slot.stream.get()));
    }
    data_operations_ += static_cast<std::uint64_t>(plan.iterations);
  }
  COMMCERT_CHECK_CUDA(cudaGetLastError());
  wait_for_iterations(launches, launched, watched);

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
  if (check) {
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
  return results;
}

}  // namespace commcert
