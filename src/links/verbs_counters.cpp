#include "links/verbs_counters.hpp"

#include <stdexcept>

#include "core/json.hpp"

namespace commcert {

int error_counter_bits(std::string_view name) {
  // InfiniBand Architecture Specification, PortCounters (PMA attribute 0x0012).
  static const std::map<std::string_view, int> kBits = {
      {"symbol_error", 16},
      {"link_error_recovery", 8},
      {"link_downed", 8},
      {"port_rcv_errors", 16},
      {"port_rcv_remote_physical_errors", 16},
      {"port_rcv_switch_relay_errors", 16},
      {"port_xmit_discards", 16},
      {"port_xmit_constraint_errors", 8},
      {"port_rcv_constraint_errors", 8},
      {"local_link_integrity_errors", 4},
      {"excessive_buffer_overrun_errors", 4},
      {"VL15_dropped", 16},
  };
  const auto found = kBits.find(name);
  return found == kBits.end() ? 0 : found->second;
}

std::vector<std::string> saturated_counters(const std::map<std::string, std::uint64_t>& after) {
  std::vector<std::string> out;
  for (const auto& [name, value] : after) {
    const int bits = error_counter_bits(name);
    if (bits > 0 && value >= (std::uint64_t{1} << bits) - 1) out.push_back(name);
  }
  return out;
}

std::string encode_counter_end(const LinkCounterDeltas& end) {
  using C = LinkCounterDeltas;
  return Json{{C::kNode, end.node},
              {C::kDevice, end.device},
              {C::kPort, end.port},
              {C::kDeltas, end.deltas},
              {C::kSaturated, end.saturated}}
      .dump();
}

std::optional<LinkCounterDeltas> decode_counter_end(std::string_view text) {
  if (text.empty()) return std::nullopt;
  using C = LinkCounterDeltas;
  try {
    const Json json = Json::parse(text);
    LinkCounterDeltas end;
    end.node = json.at(C::kNode).get<std::string>();
    end.device = json.at(C::kDevice).get<std::string>();
    end.port = json.at(C::kPort).get<int>();
    end.deltas = json.at(C::kDeltas).get<std::map<std::string, std::int64_t>>();
    end.saturated = json.at(C::kSaturated).get<std::vector<std::string>>();
    return end;
  } catch (const Json::exception& e) {
    throw std::invalid_argument(std::string("port counters from the peer: ") + e.what());
  }
}

}  // namespace commcert
