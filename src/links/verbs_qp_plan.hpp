#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "links/verbs_endpoint.hpp"

namespace commcert {

// The attributes of the INIT -> RTR -> RTS transitions of an RC queue pair, as plain numbers
// (the transport copies them into struct ibv_qp_attr), so the rules are tested without a device.

// What this end knows about its own port.
struct VerbsPortFacts {
  VerbsLinkLayer link_layer = VerbsLinkLayer::kInfiniBand;
  std::uint16_t lid = 0;
  int active_mtu = 0;          // enum ibv_mtu
  int gid_index = -1;          // chosen by choose_gid; -1 none
  int max_rd_atomic = 1;       // ibv_device_attr::max_qp_rd_atom
  int max_dest_rd_atomic = 1;  // ibv_device_attr::max_qp_init_rd_atom
  std::uint8_t port = 1;
};

struct VerbsRtrPlan {
  int path_mtu = 0;  // the smaller of the two ends' active MTUs
  std::uint32_t dest_qp_number = 0;
  std::uint32_t receive_psn = 0;  // the peer's first send PSN
  int max_dest_rd_atomic = 1;     // RDMA reads the peer may have outstanding against us
  int min_rnr_timer = 12;         // 0.64 ms: receives are always posted, RNR is a fault
  // Address vector.
  std::uint16_t dlid = 0;
  bool is_global = false;  // a GRH: RoCE always (no LIDs on Ethernet), IB when a GID was chosen
  int sgid_index = 0;
  std::array<std::uint8_t, 16> dgid{};
  std::uint8_t hop_limit = 0;
  std::uint8_t port = 1;
};

struct VerbsRtsPlan {
  std::uint32_t send_psn = 0;
  int timeout = 14;  // 4.096 us * 2^14 = 67 ms per ACK wait
  int retry_count = 7;
  int rnr_retry = 7;
  int max_rd_atomic = 1;  // RDMA reads we may have outstanding
};

// Throws std::invalid_argument when the two ends cannot connect: InfiniBand with Ethernet, RoCE
// without a GID on either end, an IB peer without a LID and without a GID.
[[nodiscard]] VerbsRtrPlan plan_rtr(const VerbsPortFacts& local, const VerbsEndpoint& remote);
[[nodiscard]] VerbsRtsPlan plan_rts(const VerbsPortFacts& local, const VerbsEndpoint& mine,
                                    const VerbsEndpoint& remote);

}  // namespace commcert
