#include "links/verbs_link_transport.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <unistd.h>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/errors.hpp"
#include "health/ib_sysfs.hpp"
#include "links/gid_table.hpp"
#include "links/verbs_endpoint.hpp"
#include "links/verbs_errors.hpp"
#include "links/verbs_gpu_memory.hpp"
#include "links/verbs_gpu_registration.hpp"
#include "links/verbs_library.hpp"
#include "links/verbs_qp_plan.hpp"
#include "links/verbs_window.hpp"

namespace commcert {
namespace {

// Receives kept posted at all times: each handshake or latency reply consumes one, and one is
// posted again at its completion, so a peer never meets an empty receive queue.
constexpr int kReceivesPosted = 16;
// Sends beyond the data window: a handshake and a latency message.
constexpr int kControlSends = 2;
constexpr std::uint64_t kReceiveWorkId = 1;
constexpr std::uint64_t kSendWorkId = 2;
constexpr std::uint64_t kHostAlignment = 4096;

struct FreeHostMemory {
  void operator()(void* memory) const noexcept { std::free(memory); }
};

struct CloseFileDescriptor {
  void operator()(const int* fd) const noexcept { ::close(*fd); }
};

class VerbsTransport final : public VerbsLinkTransport {
 public:
  VerbsTransport(const VerbsLibrary& verbs, const VerbsTransportOptions& options)
      : verbs_(verbs),
        options_(options),
        device_port_(fmt::format("{}:{}", options_.device, options_.port)) {
    open();
  }
  ~VerbsTransport() override = default;
  VerbsTransport(const VerbsTransport&) = delete;
  VerbsTransport& operator=(const VerbsTransport&) = delete;

  std::string_view name() const override { return "verbs"; }
  std::string_view memory() const override { return options_.memory; }
  std::string_view registration() const override { return registration_; }
  std::string device_port() const override { return device_port_; }
  const std::string& peer_device() const override { return remote_.device; }
  const std::string& peer_registration() const override { return remote_.registration; }
  const VerbsTransportOptions& options() const override { return options_; }
  std::map<std::string, std::uint64_t> port_counters() const override {
    for (const IbPort& port : read_ib_ports(options_.sysfs_root).ports) {
      if (port.device == options_.device && port.port == options_.port) return port.counters;
    }
    return {};
  }
  std::string gid_choice() const override { return gid_why_.empty() ? "LID (no GRH)" : gid_why_; }
  std::optional<std::string> unsupported(LinkTest /*test*/) const override { return std::nullopt; }

  std::string prepare_connection(std::optional<int> peer) override {
    qp_.reset();
    if (!peer) return {};
    create_qp();
    // Posted before the peer can send: it may reach RTS before this end does.
    for (int i = 0; i < kReceivesPosted; ++i)
      post_receive();
    mine_.qp_number = qp_->qp_num;
    std::random_device random;
    mine_.psn = random() & 0xffffff;
    return encode_endpoint(mine_);
  }

  void complete_connection(int peer, std::string_view peer_text) override {
    try {
      remote_ = decode_endpoint(peer_text, fmt::format("process {}", peer));
      connect(plan_rtr(facts_, remote_), plan_rts(facts_, mine_, remote_));
    } catch (const std::invalid_argument& e) {
      throw RuntimeFailure(fmt::format("links: {}: {}", device_port_, e.what()));
    }
  }

  std::vector<double> run(const LinkTransfer& t) override {
    if (!qp_) throw RuntimeFailure("links: verbs transfer before a connection");
    if (t.bytes * static_cast<std::uint64_t>(t.window) > buffer_bytes_) {
      throw RuntimeFailure(fmt::format("links: {} x {} bytes exceed the {} registered", t.window,
                                       t.bytes, buffer_bytes_));
    }
    peer_ = t.peer;
    auto samples = timed_iterations(
        t, [&] { handshake("the start of an iteration"); }, [&] { iterate(t); });
    // Neither end leaves while the other may still be writing into its buffer.
    handshake("the end of the test");
    return samples;
  }

 private:
  void open() {
    open_device();
    check_port();
    ibv_device_attr device{};
    COMMCERT_CHECK_IBV(verbs_, query_device, (context_.get(), &device), options_.device);
    facts_.max_rd_atomic = device.max_qp_rd_atom;
    facts_.max_dest_rd_atomic = device.max_qp_init_rd_atom;
    send_depth_ = std::min(options_.window + kControlSends, device.max_qp_wr);
    if (send_depth_ <= kControlSends || device.max_qp_wr < kReceivesPosted) {
      throw RuntimeFailure(fmt::format("{}: queue pairs of {} work requests are too small",
                                       options_.device, device.max_qp_wr));
    }
    pd_ = VerbsProtectionDomain(
        verbs_, COMMCERT_CHECK_IBV(verbs_, alloc_pd, (context_.get()), options_.device));
    const int cq_depth = send_depth_ + kReceivesPosted;
    cq_ = VerbsCompletionQueue(
        verbs_, COMMCERT_CHECK_IBV(verbs_, create_cq,
                                   (context_.get(), cq_depth, nullptr, nullptr, 0), options_.device,
                                   fmt::format("creating a completion queue of {}", cq_depth)));
    register_buffer();
  }

  void open_device() {
    int count = 0;
    const VerbsDeviceList devices(
        verbs_, COMMCERT_CHECK_IBV(verbs_, get_device_list, (&count), options_.device,
                                   "listing the RDMA devices"));
    if (count == 0) throw RuntimeFailure("no RDMA device");
    const auto listed = std::find_if(devices.get(), devices.get() + count, [&](ibv_device* d) {
      return options_.device == verbs_.get_device_name(d);
    });
    if (listed == devices.get() + count) {
      throw RuntimeFailure(fmt::format("{}: not listed by libibverbs", options_.device));
    }
    context_ = VerbsContext(verbs_, COMMCERT_CHECK_IBV(verbs_, open_device, (*listed),
                                                       options_.device, "opening the device"));
  }

  // Port state and rate first (sysfs, the reader `health` uses), then what verbs says of it.
  void check_port() {
    const IbScan scan = read_ib_ports(options_.sysfs_root);
    const auto port = std::find_if(scan.ports.begin(), scan.ports.end(), [&](const IbPort& p) {
      return p.device == options_.device && p.port == options_.port;
    });
    if (port == scan.ports.end()) {
      throw RuntimeFailure(fmt::format("{}: no port {} in sysfs", options_.device, options_.port));
    }
    if (const auto why = port_not_ready(*port)) throw RuntimeFailure(*why);
    ibv_port_attr attr{};
    const auto port_number = static_cast<std::uint8_t>(options_.port);
    COMMCERT_CHECK_IBV(verbs_, query_port, (context_.get(), port_number, attr), device_port_);
    if (attr.state != IBV_PORT_ACTIVE) {
      throw RuntimeFailure(fmt::format("{}: libibverbs says the port is in state {}, not ACTIVE",
                                       device_port_, static_cast<int>(attr.state)));
    }
    facts_.port = port_number;
    facts_.lid = attr.lid;
    facts_.active_mtu = static_cast<int>(attr.active_mtu);
    facts_.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? VerbsLinkLayer::kEthernet
                                                                   : VerbsLinkLayer::kInfiniBand;
    // InfiniBand routes by LID inside a subnet and needs no GRH unless a GID is asked for
    // (perftest's -x does the same); RoCE always addresses by GID.
    if (facts_.link_layer == VerbsLinkLayer::kEthernet || options_.gid_index) {
      const GidChoice gid =
          choose_gid(read_gid_table(options_.sysfs_root, options_.device, options_.port),
                     port->link_layer.value_or(""), options_.gid_index);
      if (!gid.index) throw RuntimeFailure(fmt::format("{}: {}", device_port_, gid.why));
      ibv_gid value{};
      COMMCERT_CHECK_IBV(verbs_, query_gid, (context_.get(), port_number, *gid.index, &value),
                         device_port_, fmt::format("reading GID index {}", *gid.index));
      facts_.gid_index = *gid.index;
      std::copy(std::begin(value.raw), std::end(value.raw), mine_.gid.begin());
      gid_why_ = gid.why;
    }
    mine_.device = device_port_;
    mine_.lid = facts_.lid;
    mine_.gid_index = facts_.gid_index;
    mine_.mtu = facts_.active_mtu;
    mine_.link_layer = facts_.link_layer;
  }

  void register_buffer() {
    constexpr int kAccess =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    buffer_bytes_ = std::max<std::uint64_t>(options_.buffer_bytes, 1);
    if (options_.memory == "gpu") {
      gpu_ = allocate_gpu_memory(options_.gpu, buffer_bytes_);
      buffer_ = gpu_->pointer();
      register_gpu_buffer(kAccess);
    } else {
      const std::uint64_t rounded =
          (buffer_bytes_ + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
      host_.reset(std::aligned_alloc(kHostAlignment, rounded));
      if (!host_) throw RuntimeFailure(fmt::format("links: {} bytes of host memory", rounded));
      buffer_ = host_.get();
      mr_ = VerbsMemoryRegion(
          verbs_, COMMCERT_CHECK_IBV(
                      verbs_, reg_mr, (pd_.get(), buffer_, buffer_bytes_, kAccess), options_.device,
                      fmt::format("registering {} bytes of host memory", buffer_bytes_)));
      registration_ = "host";
    }
    mine_.registration = registration_;
    mine_.rkey = mr_->rkey;
    mine_.address = reinterpret_cast<std::uintptr_t>(buffer_);
    mine_.length = buffer_bytes_;
  }

  // GPUDirect RDMA: dma-buf first, then peer memory (plan_gpu_registration); the record says
  // which worked, and a GPU that neither can register is an error, never host memory in disguise.
  void register_gpu_buffer(int access) {
    const GpuRegistrationPlan plan =
        plan_gpu_registration({verbs_.reg_dmabuf_mr != nullptr, gpu_->dmabuf_supported(),
                               peer_memory_module_loaded(options_.sysfs_root)});
    std::string failures = plan.why;
    for (const GpuRegistration method : plan.order) {
      std::string error;
      try {
        mr_ = register_gpu_buffer_by(method, access, error);
      } catch (const ApiFailure& e) {
        error = describe_failed_call(e.error());
      }
      if (mr_) {
        registration_ = name_of(method);
        return;
      }
      failures +=
          fmt::format("{}{}: {}", failures.empty() ? "" : "; ",
                      method == GpuRegistration::kDmaBuf ? "dma-buf" : "peer memory", error);
    }
    throw RuntimeFailure(fmt::format("{}: GPU memory cannot be registered for RDMA ({})",
                                     options_.device, failures));
  }

  // The GPU buffer registered one way; empty, with `error` saying why, when the CUDA side cannot
  // export it. A failed registration throws ApiFailure.
  VerbsMemoryRegion register_gpu_buffer_by(GpuRegistration method, int access, std::string& error) {
    if (method == GpuRegistration::kPeerMemory) {
      return VerbsMemoryRegion(
          verbs_, COMMCERT_CHECK_IBV(verbs_, reg_mr, (pd_.get(), buffer_, buffer_bytes_, access),
                                     options_.device, "registering GPU memory as peer memory"));
    }
    const int fd = gpu_->export_dmabuf(error);
    if (fd < 0) return {};
    // The registration holds its own reference to the dma-buf: this one is closed either way.
    const std::unique_ptr<const int, CloseFileDescriptor> exported(&fd);
    const auto address = reinterpret_cast<std::uintptr_t>(buffer_);
    return VerbsMemoryRegion(
        verbs_, COMMCERT_CHECK_IBV(verbs_, reg_dmabuf_mr,
                                   (pd_.get(), 0, buffer_bytes_, address, fd, access),
                                   options_.device, "registering GPU memory by dma-buf"));
  }

  void create_qp() {
    ibv_qp_init_attr init{};
    init.send_cq = cq_.get();
    init.recv_cq = cq_.get();
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = static_cast<std::uint32_t>(send_depth_);
    init.cap.max_recv_wr = kReceivesPosted;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    qp_ = VerbsQueuePair(verbs_,
                         COMMCERT_CHECK_IBV(verbs_, create_qp, (pd_.get(), &init), device_port_));
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = facts_.port;
    attr.qp_access_flags =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    modify(attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT");
    sends_posted_ = sends_completed_ = 0;
    received_ = consumed_ = 0;
  }

  void connect(const VerbsRtrPlan& rtr, const VerbsRtsPlan& rts) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = static_cast<ibv_mtu>(rtr.path_mtu);
    attr.dest_qp_num = rtr.dest_qp_number;
    attr.rq_psn = rtr.receive_psn;
    attr.max_dest_rd_atomic = static_cast<std::uint8_t>(rtr.max_dest_rd_atomic);
    attr.min_rnr_timer = static_cast<std::uint8_t>(rtr.min_rnr_timer);
    attr.ah_attr.dlid = rtr.dlid;
    attr.ah_attr.port_num = rtr.port;
    attr.ah_attr.is_global = rtr.is_global ? 1 : 0;
    if (rtr.is_global) {
      std::copy(rtr.dgid.begin(), rtr.dgid.end(), std::begin(attr.ah_attr.grh.dgid.raw));
      attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(rtr.sgid_index);
      attr.ah_attr.grh.hop_limit = rtr.hop_limit;
    }
    modify(attr,
           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
           "RTR");
    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = rts.send_psn;
    attr.timeout = static_cast<std::uint8_t>(rts.timeout);
    attr.retry_cnt = static_cast<std::uint8_t>(rts.retry_count);
    attr.rnr_retry = static_cast<std::uint8_t>(rts.rnr_retry);
    attr.max_rd_atomic = static_cast<std::uint8_t>(rts.max_rd_atomic);
    modify(attr,
           IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
               IBV_QP_MAX_QP_RD_ATOMIC,
           "RTS");
  }

  void modify(ibv_qp_attr& attr, int mask, std::string_view state) {
    COMMCERT_CHECK_IBV(verbs_, modify_qp, (qp_.get(), &attr, mask), device_port_,
                       fmt::format("moving the queue pair to {}", state));
  }

  void iterate(const LinkTransfer& t) {
    switch (t.test) {
      case LinkTest::kWriteLatency:
        if (t.initiator) {
          post_rdma(IBV_WR_RDMA_WRITE_WITH_IMM, 0, t.bytes);
          await_messages(1, "the latency reply");
        } else {
          await_messages(1, "the latency message");
          post_rdma(IBV_WR_RDMA_WRITE_WITH_IMM, 0, t.bytes);
        }
        await_sends("the latency message's completion");
        return;
      case LinkTest::kWriteBandwidth:
      case LinkTest::kReadBandwidth:
        if (t.initiator) {
          move_window(t.test == LinkTest::kReadBandwidth ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
                      t.bytes, t.window);
        }
        return;
      case LinkTest::kWriteBandwidthBidirectional:
        move_window(IBV_WR_RDMA_WRITE, t.bytes, t.window);
        // The initiator's time ends when the peer's writes have landed too.
        handshake("the peer's half of a bidirectional window");
        return;
    }
  }

  void move_window(ibv_wr_opcode opcode, std::uint64_t bytes, int total) {
    RequestWindow window(total, send_depth_ - kControlSends);
    while (!window.done()) {
      const int count = window.postable();
      for (int i = 0; i < count; ++i) {
        const std::uint64_t offset = message_offset(window.next_index() + i, bytes);
        post_rdma(opcode, offset, bytes);
      }
      window.posted(count);
      const std::uint64_t before = sends_completed_;
      poll_once("RDMA completions");
      window.completed(static_cast<int>(sends_completed_ - before));
    }
  }

  void post_rdma(ibv_wr_opcode opcode, std::uint64_t offset, std::uint64_t bytes) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(buffer_) + offset;
    sge.length = static_cast<std::uint32_t>(bytes);
    sge.lkey = mr_->lkey;
    ibv_send_wr wr{};
    wr.wr_id = kSendWorkId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_.address + offset;
    wr.wr.rdma.rkey = remote_.rkey;
    post_send(wr);
  }

  // Both ends send one empty message and wait for the other's: neither starts (or leaves)
  // before the other is there.
  void handshake(std::string_view what) {
    ibv_send_wr wr{};
    wr.wr_id = kSendWorkId;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    post_send(wr);
    await_messages(1, what);
    await_sends(what);
  }

  void post_send(ibv_send_wr& wr) {
    ibv_send_wr* bad = nullptr;
    COMMCERT_CHECK_VERBS(ibv_post_send(qp_.get(), &wr, &bad), device_port_);
    ++sends_posted_;
  }

  void post_receive() {
    ibv_recv_wr wr{};
    wr.wr_id = kReceiveWorkId;
    ibv_recv_wr* bad = nullptr;
    COMMCERT_CHECK_VERBS(ibv_post_recv(qp_.get(), &wr, &bad), device_port_);
  }

  void await_messages(std::uint64_t count, std::string_view what) {
    const Deadline deadline = wait_deadline();
    while (received_ - consumed_ < count)
      poll_once(what, deadline);
    consumed_ += count;
  }

  void await_sends(std::string_view what) {
    const Deadline deadline = wait_deadline();
    while (sends_completed_ < sends_posted_)
      poll_once(what, deadline);
  }

  // The watchdog ends a stuck transfer at -T and names the pair; this deadline, a little later,
  // bounds the loop where the watchdog cannot act (a process without its side channel).
  Deadline wait_deadline() const { return Deadline::after_seconds(options_.timeout_s * 1.25 + 1); }

  void poll_once(std::string_view what) { poll_once(what, wait_deadline()); }

  void poll_once(std::string_view what, const Deadline& deadline) {
    std::array<ibv_wc, 32> completions{};
    for (;;) {
      const int found = COMMCERT_CHECK_VERBS_COUNT(
          ibv_poll_cq(cq_.get(), static_cast<int>(completions.size()), completions.data()),
          device_port_);
      for (int i = 0; i < found; ++i)
        account(completions[static_cast<std::size_t>(i)]);
      if (found > 0) return;
      if (deadline.expired()) {
        throw RuntimeFailure(
            fmt::format("links: {}: no completion from process {} within {:.0f} s, waiting for {}",
                        device_port_, peer_, options_.timeout_s * 1.25 + 1, what));
      }
    }
  }

  void account(const ibv_wc& wc) {
    if (wc.status != IBV_WC_SUCCESS) {
      throw RuntimeFailure(fmt::format("{}: work completion with process {}: {}", device_port_,
                                       peer_, verbs_.wc_status_str(wc.status)));
    }
    if (wc.opcode & IBV_WC_RECV) {
      ++received_;
      post_receive();
    } else {
      ++sends_completed_;
    }
  }

  const VerbsLibrary& verbs_;
  VerbsTransportOptions options_;
  std::string device_port_;  // "mlx5_0:1", made once: the data path's errors name it
  VerbsPortFacts facts_;
  VerbsEndpoint mine_;
  VerbsEndpoint remote_;
  std::string gid_why_;
  std::string registration_;
  int send_depth_ = 0;
  int peer_ = -1;
  // Declared in the order they are made, so destruction closes them in reverse: the queue pair
  // and the registration before the memory they use, the device last.
  VerbsContext context_;
  VerbsProtectionDomain pd_;
  VerbsCompletionQueue cq_;
  std::unique_ptr<void, FreeHostMemory> host_;
  std::unique_ptr<GpuAllocation> gpu_;
  VerbsMemoryRegion mr_;
  VerbsQueuePair qp_;
  void* buffer_ = nullptr;
  std::uint64_t buffer_bytes_ = 0;
  std::uint64_t sends_posted_ = 0;
  std::uint64_t sends_completed_ = 0;
  std::uint64_t received_ = 0;
  std::uint64_t consumed_ = 0;
};

}  // namespace

std::unique_ptr<VerbsLinkTransport> make_verbs_link_transport(
    const VerbsTransportOptions& options) {
  std::string error;
  const VerbsLibrary* verbs = load_verbs_library(error);
  if (!verbs) throw RuntimeFailure(error);
  return std::make_unique<VerbsTransport>(*verbs, options);
}

}  // namespace commcert
