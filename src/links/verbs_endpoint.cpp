#include "links/verbs_endpoint.hpp"

#include <charconv>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace commcert {
namespace {

constexpr std::string_view kMagic = "commcert-verbs";
constexpr std::uint32_t k24Bits = (1U << 24) - 1;

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

[[noreturn]] void bad(std::string_view from, const std::string& what) {
  throw std::invalid_argument(fmt::format("verbs connection info from {}: {}", from, what));
}

std::uint64_t number(std::string_view word, std::string_view key, std::uint64_t max,
                     std::string_view from) {
  const std::string prefix = std::string(key) + "=";
  if (!word.starts_with(prefix)) bad(from, fmt::format("expected '{}...', got '{}'", prefix, word));
  const std::string_view digits = word.substr(prefix.size());
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    bad(from, fmt::format("{} is not a number: '{}'", key, digits));
  }
  if (value > max) bad(from, fmt::format("{}={} is above {}", key, value, max));
  return value;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

int mtu_bytes(int ibv_mtu) {
  return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128 << ibv_mtu : 0;
}

std::string encode_endpoint(const VerbsEndpoint& e) {
  std::string gid;
  for (const std::uint8_t byte : e.gid)
    gid += fmt::format("{:02x}", byte);
  return fmt::format(
      "{} {} qpn={} lid={} gid={} gidx={} psn={} rkey={} addr={} len={} mtu={} ll={} dev={} reg={}",
      kMagic, kVerbsEndpointVersion, e.qp_number, e.lid, gid, e.gid_index + 1, e.psn, e.rkey,
      e.address, e.length, e.mtu, e.link_layer == VerbsLinkLayer::kEthernet ? "eth" : "ib",
      e.device, e.registration);
}

VerbsEndpoint decode_endpoint(std::string_view text, std::string_view from) {
  const auto w = words(text);
  if (w.size() < 2 || w[0] != kMagic) bad(from, "not commcert verbs connection info");
  if (w[1] != std::to_string(kVerbsEndpointVersion)) {
    bad(from, fmt::format("version {}, this commcert speaks {} (run one commcert version on every "
                          "node)",
                          w[1], kVerbsEndpointVersion));
  }
  constexpr std::size_t kWords = 14;
  if (w.size() != kWords) {
    bad(from, fmt::format("{} fields, expected {}", w.size(), kWords));
  }
  VerbsEndpoint e;
  e.qp_number = static_cast<std::uint32_t>(number(w[2], "qpn", k24Bits, from));
  e.lid = static_cast<std::uint16_t>(number(w[3], "lid", 0xffff, from));
  const std::string_view gid = w[4];
  if (!gid.starts_with("gid=") || gid.size() != 4 + 32) bad(from, "gid is not 32 hex digits");
  for (std::size_t i = 0; i < e.gid.size(); ++i) {
    const int high = hex_digit(gid[4 + 2 * i]);
    const int low = hex_digit(gid[5 + 2 * i]);
    if (high < 0 || low < 0) bad(from, "gid is not 32 hex digits");
    e.gid[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  // Stored one up so that "no GID" (-1) stays an unsigned number on the wire.
  e.gid_index = static_cast<int>(number(w[5], "gidx", 256, from)) - 1;
  e.psn = static_cast<std::uint32_t>(number(w[6], "psn", k24Bits, from));
  e.rkey = static_cast<std::uint32_t>(number(w[7], "rkey", 0xffffffffULL, from));
  e.address = number(w[8], "addr", UINT64_MAX, from);
  e.length = number(w[9], "len", UINT64_MAX, from);
  e.mtu = static_cast<int>(number(w[10], "mtu", 5, from));
  if (e.mtu < 1) bad(from, "mtu=0 is not an MTU");
  if (w[11] == "ll=ib") {
    e.link_layer = VerbsLinkLayer::kInfiniBand;
  } else if (w[11] == "ll=eth") {
    e.link_layer = VerbsLinkLayer::kEthernet;
  } else {
    bad(from, fmt::format("link layer '{}' is neither ll=ib nor ll=eth", w[11]));
  }
  if (e.length == 0) bad(from, "len=0: no buffer registered");
  if (!w[12].starts_with("dev=") || w[12].size() == 4) bad(from, "no dev=<device:port>");
  e.device = std::string(w[12].substr(4));
  const std::string_view reg = w[13];
  if (reg != "reg=host" && reg != "reg=dmabuf" && reg != "reg=peer_memory") {
    bad(from, fmt::format("'{}' is not reg=host, reg=dmabuf or reg=peer_memory", reg));
  }
  e.registration = std::string(reg.substr(4));
  return e;
}

}  // namespace commcert
