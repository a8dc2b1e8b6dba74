#include "comm/mpi_link_transport.hpp"

#include <cstring>

#include <climits>

#include "comm/mpi_runtime.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

constexpr int kDataTag = 7301;
constexpr int kAckTag = 7302;
constexpr int kSyncTag = 7303;

class MpiLinkTransport final : public LinkTransport {
 public:
  MpiLinkTransport() { COMMCERT_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm_)); }
  ~MpiLinkTransport() override { MPI_Comm_free(&comm_); }
  MpiLinkTransport(const MpiLinkTransport&) = delete;
  MpiLinkTransport& operator=(const MpiLinkTransport&) = delete;

  std::string_view name() const override { return "mpi"; }
  std::string_view memory() const override { return "host"; }
  std::optional<std::string> unsupported(LinkTest test) const override {
    if (test == LinkTest::kReadBandwidth) {
      return std::string("RDMA read needs --transport verbs");
    }
    return std::nullopt;
  }

  std::vector<double> run(const LinkTransfer& t) override {
    if (t.bytes > static_cast<std::uint64_t>(INT_MAX)) {
      throw UsageError("links: a message above 2 GiB cannot be sent with one MPI call");
    }
    const std::size_t span = static_cast<std::size_t>(t.bytes) * static_cast<std::size_t>(t.window);
    if (send_.size() < span) {
      send_.assign(span, std::byte{0x5a});
      receive_.assign(span, std::byte{0});
    }
    // Both ends start each iteration together, so one end's lateness is the fault's alone.
    return timed_iterations(
        t,
        [&] {
          COMMCERT_CHECK_MPI(MPI_Sendrecv(nullptr, 0, MPI_BYTE, t.peer, kSyncTag, nullptr, 0,
                                          MPI_BYTE, t.peer, kSyncTag, comm_, MPI_STATUS_IGNORE));
        },
        [&] { iterate(t); });
  }

 private:
  void iterate(const LinkTransfer& t) {
    switch (t.test) {
      case LinkTest::kWriteLatency:
        if (t.initiator) {
          send(t, 0);
          receive(t, 0);
        } else {
          receive(t, 0);
          send(t, 0);
        }
        return;
      case LinkTest::kWriteBandwidth:
        if (t.initiator) {
          post(t, true, false);
          COMMCERT_CHECK_MPI(
              MPI_Recv(nullptr, 0, MPI_BYTE, t.peer, kAckTag, comm_, MPI_STATUS_IGNORE));
        } else {
          post(t, false, true);
          COMMCERT_CHECK_MPI(MPI_Send(nullptr, 0, MPI_BYTE, t.peer, kAckTag, comm_));
        }
        return;
      case LinkTest::kWriteBandwidthBidirectional:
        post(t, true, true);
        // The initiator's time ends when the peer has received everything too.
        COMMCERT_CHECK_MPI(MPI_Sendrecv(nullptr, 0, MPI_BYTE, t.peer, kAckTag, nullptr, 0, MPI_BYTE,
                                        t.peer, kAckTag, comm_, MPI_STATUS_IGNORE));
        return;
      case LinkTest::kReadBandwidth:
        break;
    }
    throw RuntimeFailure("links: the MPI transport has no read test");
  }

  void send(const LinkTransfer& t, std::size_t offset) {
    COMMCERT_CHECK_MPI(MPI_Send(send_.data() + offset, static_cast<int>(t.bytes), MPI_BYTE, t.peer,
                                kDataTag, comm_));
  }
  void receive(const LinkTransfer& t, std::size_t offset) {
    COMMCERT_CHECK_MPI(MPI_Recv(receive_.data() + offset, static_cast<int>(t.bytes), MPI_BYTE,
                                t.peer, kDataTag, comm_, MPI_STATUS_IGNORE));
  }

  // A window of messages in flight at once, each in its own part of the buffers (concurrent
  // receives may not share memory).
  void post(const LinkTransfer& t, bool sends, bool receives) {
    std::vector<MPI_Request> requests;
    requests.reserve(2 * static_cast<std::size_t>(t.window));
    const int count = static_cast<int>(t.bytes);
    for (int w = 0; w < t.window; ++w) {
      const std::size_t offset = static_cast<std::size_t>(w) * static_cast<std::size_t>(t.bytes);
      if (receives) {
        COMMCERT_CHECK_MPI(MPI_Irecv(receive_.data() + offset, count, MPI_BYTE, t.peer, kDataTag,
                                     comm_, &requests.emplace_back()));
      }
      if (sends) {
        COMMCERT_CHECK_MPI(MPI_Isend(send_.data() + offset, count, MPI_BYTE, t.peer, kDataTag,
                                     comm_, &requests.emplace_back()));
      }
    }
    COMMCERT_CHECK_MPI(
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<std::byte> send_;
  std::vector<std::byte> receive_;
};

}  // namespace

std::unique_ptr<LinkTransport> make_mpi_link_transport() {
  return std::make_unique<MpiLinkTransport>();
}

}  // namespace commcert
