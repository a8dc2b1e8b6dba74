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

struct DeviceList {
  const VerbsLibrary& verbs;
  ibv_device** list = nullptr;
  int count = 0;
  ~DeviceList() {
    if (list) verbs.free_device_list(list);
  }
};

class VerbsTransport final : public VerbsLinkTransport {
 public:
  VerbsTransport(const VerbsLibrary& verbs, const VerbsTransportOptions& options)
      : verbs_(verbs), options_(options) {
    try {
      open();
    } catch (...) {
      close();
      throw;
    }
  }
  ~VerbsTransport() override { close(); }
  VerbsTransport(const VerbsTransport&) = delete;
  VerbsTransport& operator=(const VerbsTransport&) = delete;

  std::string_view name() const override { return "verbs"; }
  std::string_view memory() const override { return options_.memory; }
  std::string_view registration() const override { return registration_; }
  std::string device_port() const override {
    return fmt::format("{}:{}", options_.device, options_.port);
  }
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
    destroy_qp();
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
      throw RuntimeFailure(fmt::format("links: {}: {}", device_port(), e.what()));
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
    DeviceList devices{verbs_};
    devices.list = verbs_.get_device_list(&devices.count);
    if (!devices.list || devices.count == 0) throw RuntimeFailure("no RDMA device");
    for (int i = 0; i < devices.count; ++i) {
      if (options_.device == verbs_.get_device_name(devices.list[i])) {
        context_ = verbs_.open_device(devices.list[i]);
        break;
      }
    }
    if (!context_) {
      throw RuntimeFailure(
          fmt::format("{}: not listed by libibverbs, or cannot be opened", options_.device));
    }
    check_port();
    ibv_device_attr device{};
    if (verbs_.query_device(context_, &device) != 0) {
      throw RuntimeFailure(fmt::format("{}: ibv_query_device failed", options_.device));
    }
    facts_.max_rd_atomic = device.max_qp_rd_atom;
    facts_.max_dest_rd_atomic = device.max_qp_init_rd_atom;
    send_depth_ = std::min(options_.window + kControlSends, device.max_qp_wr);
    if (send_depth_ <= kControlSends || device.max_qp_wr < kReceivesPosted) {
      throw RuntimeFailure(fmt::format("{}: queue pairs of {} work requests are too small",
                                       options_.device, device.max_qp_wr));
    }
    pd_ = verbs_.alloc_pd(context_);
    if (!pd_) throw RuntimeFailure(fmt::format("{}: ibv_alloc_pd failed", options_.device));
    const int cq_depth = send_depth_ + kReceivesPosted;
    cq_ = verbs_.create_cq(context_, cq_depth, nullptr, nullptr, 0);
    if (!cq_)
      throw RuntimeFailure(fmt::format("{}: ibv_create_cq({}) failed", options_.device, cq_depth));
    register_buffer();
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
    if (verbs_.query_port_attr(context_, port_number, attr) != 0 || attr.state != IBV_PORT_ACTIVE) {
      throw RuntimeFailure(fmt::format("{}: ibv_query_port does not say ACTIVE", device_port()));
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
      if (!gid.index) throw RuntimeFailure(fmt::format("{}: {}", device_port(), gid.why));
      ibv_gid value{};
      if (verbs_.query_gid(context_, port_number, *gid.index, &value) != 0) {
        throw RuntimeFailure(
            fmt::format("{}: ibv_query_gid({}) failed", device_port(), *gid.index));
      }
      facts_.gid_index = *gid.index;
      std::copy(std::begin(value.raw), std::end(value.raw), mine_.gid.begin());
      gid_why_ = gid.why;
    }
    mine_.device = device_port();
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
      host_ = std::aligned_alloc(kHostAlignment, rounded);
      if (!host_) throw RuntimeFailure(fmt::format("links: {} bytes of host memory", rounded));
      buffer_ = host_;
      mr_ = verbs_.reg_mr(pd_, buffer_, buffer_bytes_, kAccess);
      if (!mr_)
        throw RuntimeFailure(fmt::format("{}: ibv_reg_mr on host memory failed", options_.device));
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
      if (method == GpuRegistration::kDmaBuf) {
        std::string error;
        const int fd = gpu_->export_dmabuf(error);
        if (fd >= 0) {
          mr_ = verbs_.reg_dmabuf_mr(pd_, 0, buffer_bytes_,
                                     reinterpret_cast<std::uintptr_t>(buffer_), fd, access);
          ::close(fd);  // the registration holds its own reference
          if (!mr_) error = "ibv_reg_dmabuf_mr failed";
        }
        if (mr_) {
          registration_ = name_of(method);
          return;
        }
        failures += fmt::format("{}dma-buf: {}", failures.empty() ? "" : "; ", error);
      } else {
        mr_ = verbs_.reg_mr(pd_, buffer_, buffer_bytes_, access);
        if (mr_) {
          registration_ = name_of(method);
          return;
        }
        failures += std::string(failures.empty() ? "" : "; ") + "peer memory: ibv_reg_mr failed";
      }
    }
    throw RuntimeFailure(fmt::format("{}: GPU memory cannot be registered for RDMA ({})",
                                     options_.device, failures));
  }

  void create_qp() {
    ibv_qp_init_attr init{};
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = static_cast<std::uint32_t>(send_depth_);
    init.cap.max_recv_wr = kReceivesPosted;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    qp_ = verbs_.create_qp(pd_, &init);
    if (!qp_) throw RuntimeFailure(fmt::format("{}: ibv_create_qp failed", device_port()));
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
    if (const int rc = verbs_.modify_qp(qp_, &attr, mask); rc != 0) {
      throw RuntimeFailure(
          fmt::format("{}: ibv_modify_qp to {}: {}", device_port(), state, std::strerror(rc)));
    }
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
    if (const int rc = ibv_post_send(qp_, &wr, &bad); rc != 0) {
      throw RuntimeFailure(fmt::format("{}: ibv_post_send: {}", device_port(), std::strerror(rc)));
    }
    ++sends_posted_;
  }

  void post_receive() {
    ibv_recv_wr wr{};
    wr.wr_id = kReceiveWorkId;
    ibv_recv_wr* bad = nullptr;
    if (const int rc = ibv_post_recv(qp_, &wr, &bad); rc != 0) {
      throw RuntimeFailure(fmt::format("{}: ibv_post_recv: {}", device_port(), std::strerror(rc)));
    }
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
      const int found = ibv_poll_cq(cq_, static_cast<int>(completions.size()), completions.data());
      if (found < 0) throw RuntimeFailure(fmt::format("{}: ibv_poll_cq failed", device_port()));
      for (int i = 0; i < found; ++i)
        account(completions[static_cast<std::size_t>(i)]);
      if (found > 0) return;
      if (deadline.expired()) {
        throw RuntimeFailure(
            fmt::format("links: {}: no completion from process {} within {:.0f} s, waiting for {}",
                        device_port(), peer_, options_.timeout_s * 1.25 + 1, what));
      }
    }
  }

  void account(const ibv_wc& wc) {
    if (wc.status != IBV_WC_SUCCESS) {
      throw RuntimeFailure(fmt::format("{}: work completion with process {}: {}", device_port(),
                                       peer_, verbs_.wc_status_str(wc.status)));
    }
    if (wc.opcode & IBV_WC_RECV) {
      ++received_;
      post_receive();
    } else {
      ++sends_completed_;
    }
  }

  void destroy_qp() {
    if (qp_) verbs_.destroy_qp(qp_);
    qp_ = nullptr;
  }

  void close() {
    destroy_qp();
    if (mr_) verbs_.dereg_mr(mr_);
    mr_ = nullptr;
    gpu_.reset();
    std::free(host_);
    host_ = nullptr;
    if (cq_) verbs_.destroy_cq(cq_);
    cq_ = nullptr;
    if (pd_) verbs_.dealloc_pd(pd_);
    pd_ = nullptr;
    if (context_) verbs_.close_device(context_);
    context_ = nullptr;
  }

  const VerbsLibrary& verbs_;
  VerbsTransportOptions options_;
  VerbsPortFacts facts_;
  VerbsEndpoint mine_;
  VerbsEndpoint remote_;
  std::string gid_why_;
  std::string registration_;
  int send_depth_ = 0;
  int peer_ = -1;
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  ibv_mr* mr_ = nullptr;
  void* host_ = nullptr;
  std::unique_ptr<GpuAllocation> gpu_;
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
