#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// What a link test moves between the two ends of a pair (docs/links.md).
//   write_bw:       one direction, from the initiator to its peer (RDMA write / MPI send);
//   write_bw_bidir: both directions at once;
//   read_bw:        the initiator reads from its peer (RDMA read; verbs only);
//   write_lat:      ping-pong of small messages, half the round trip per sample.
enum class LinkTest {
  kWriteBandwidth,
  kWriteBandwidthBidirectional,
  kReadBandwidth,
  kWriteLatency
};

[[nodiscard]] std::string_view name_of(LinkTest test);
// Bytes one iteration moves across the link, counting both directions of a bidirectional test.
[[nodiscard]] std::uint64_t bytes_moved(LinkTest test, std::uint64_t message_bytes, int window);

// One measurement between two ends; both ends call LinkTransport::run with mirrored transfers.
struct LinkTransfer {
  LinkTest test = LinkTest::kWriteBandwidth;
  int peer = -1;            // the other end: a process index of the job
  bool initiator = false;   // the end that times, and the source of a one-way test
  std::uint64_t bytes = 0;  // per message
  int window = 1;           // messages in flight per iteration (bandwidth tests)
  int warmup = 0;
  int iterations = 1;
  // Fault injection: this end arrives this late at every iteration, inside the timed window, as
  // a slow NIC or cable would make it (COMMCERT_FAULT delay / linkdelay).
  double fault_delay_s = 0;
  // Called after every iteration (watchdog refresh); may be empty.
  std::function<void()> after_iteration;
};

// One test's iterations as every transport times them: both ends start each iteration together
// (`start_together`), an injected delay falls inside the timed window, and the initiator keeps
// one sample per timed iteration (half the round trip for latency); the other end keeps none.
[[nodiscard]] std::vector<double> timed_iterations(const LinkTransfer& transfer,
                                                   const std::function<void()>& start_together,
                                                   const std::function<void()>& iterate_once);

// A transport for link tests. MPI point-to-point on host memory (every machine), or RDMA verbs
// on host or GPU memory. Both ends of every pair of a round call run() at the same time.
class LinkTransport {
 public:
  virtual ~LinkTransport() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;    // "mpi", "verbs"
  [[nodiscard]] virtual std::string_view memory() const = 0;  // "host", "gpu"
  // Why this transport cannot run `test`, or nullopt when it can.
  [[nodiscard]] virtual std::optional<std::string> unsupported(LinkTest test) const = 0;
  // Connection set-up at the start of every round, on every process: prepare_connection says
  // what this end tells `peer` (nullopt: idle this round), the caller exchanges every process's
  // text over the control plane, and complete_connection gets the peer's. Transports without
  // connections (MPI) say nothing.
  virtual std::string prepare_connection(std::optional<int> /*peer*/) { return {}; }
  virtual void complete_connection(int /*peer*/, std::string_view /*peer_text*/) {}
  // Seconds per timed iteration on the initiator; empty on the other end. Throws RuntimeFailure.
  virtual std::vector<double> run(const LinkTransfer& transfer) = 0;
};

}  // namespace commcert
