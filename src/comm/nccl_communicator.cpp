#include "comm/nccl_communicator.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "comm/batch_layout.hpp"
#include "comm/cuda_errors.hpp"
#include "comm/nccl_features.hpp"
#include "core/errors.hpp"
#include "kernels/pattern_device.hpp"

// The communicator's life: making it (and its splits), its buffers and the data they start with,
// what it can run, and aborting it. Running operations: nccl_communicator_run.cpp (-z 0 and -z 1)
// and nccl_communicator_graph.cpp (-G).

namespace commcert {
namespace {

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

}  // namespace commcert
