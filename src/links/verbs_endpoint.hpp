#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace commcert {

// What one end of an RC queue pair tells the other before they connect (docs/links.md, "RDMA
// verbs"): exchanged as one line of text over the job's control plane, so it is readable in a
// log and carries its own version. Pure: built and parsed without libibverbs.
enum class VerbsLinkLayer : std::uint8_t { kInfiniBand = 0, kEthernet = 1 };

struct VerbsEndpoint {
  std::uint32_t qp_number = 0;  // 24 bits
  std::uint16_t lid = 0;        // InfiniBand only; 0 on RoCE
  std::array<std::uint8_t, 16> gid{};
  int gid_index = -1;     // -1: no GID used (InfiniBand inside one subnet)
  std::uint32_t psn = 0;  // 24 bits
  std::uint32_t rkey = 0;
  std::uint64_t address = 0;  // start of the registered buffer in the peer's address space
  std::uint64_t length = 0;   // bytes registered
  int mtu = 0;                // the port's active MTU as enum ibv_mtu (1: 256 ... 5: 4096)
  VerbsLinkLayer link_layer = VerbsLinkLayer::kInfiniBand;
  std::string device;        // "mlx5_0:1", for the record's `devices`
  std::string registration;  // host | dmabuf | peer_memory, for the record's `registrations`
};

inline constexpr int kVerbsEndpointVersion = 1;

// "commcert-verbs 1 qpn=... lid=... gid=<32 hex> gidx=... psn=... rkey=... addr=... len=... mtu=...
// ll=ib|eth dev=mlx5_0:1 reg=host|dmabuf|peer_memory".
[[nodiscard]] std::string encode_endpoint(const VerbsEndpoint& endpoint);

// The inverse. Throws std::invalid_argument with one line saying what is wrong (another version,
// a missing or extra field, a value out of range) and `from` (who sent it).
[[nodiscard]] VerbsEndpoint decode_endpoint(std::string_view text, std::string_view from);

// MTU in bytes of an enum ibv_mtu value (1..5), 0 for anything else.
[[nodiscard]] int mtu_bytes(int ibv_mtu);

}  // namespace commcert
