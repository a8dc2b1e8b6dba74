#include "comm/link_transport.hpp"

namespace commcert {

std::string_view name_of(LinkTest test) {
  switch (test) {
    case LinkTest::kWriteBandwidthBidirectional:
      return "write_bw_bidir";
    case LinkTest::kReadBandwidth:
      return "read_bw";
    case LinkTest::kWriteLatency:
      return "write_lat";
    case LinkTest::kWriteBandwidth:
      break;
  }
  return "write_bw";
}

std::uint64_t bytes_moved(LinkTest test, std::uint64_t message_bytes, int window) {
  switch (test) {
    case LinkTest::kWriteBandwidthBidirectional:
      return 2 * message_bytes * static_cast<std::uint64_t>(window);
    case LinkTest::kWriteLatency:
      return message_bytes;
    case LinkTest::kWriteBandwidth:
    case LinkTest::kReadBandwidth:
      break;
  }
  return message_bytes * static_cast<std::uint64_t>(window);
}

}  // namespace commcert
