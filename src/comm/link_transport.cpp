#include "comm/link_transport.hpp"

#include <chrono>
#include <thread>

#include "core/clock.hpp"

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

std::vector<double> timed_iterations(const LinkTransfer& t,
                                     const std::function<void()>& start_together,
                                     const std::function<void()>& iterate_once) {
  std::vector<double> samples;
  for (int i = 0; i < t.warmup + t.iterations; ++i) {
    start_together();
    const auto start = SteadyClock::now();
    if (t.fault_delay_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(t.fault_delay_s));
    }
    iterate_once();
    const double seconds = seconds_between(start, SteadyClock::now());
    if (t.initiator && i >= t.warmup) {
      samples.push_back(t.test == LinkTest::kWriteLatency ? seconds / 2 : seconds);
    }
    if (t.after_iteration) t.after_iteration();
  }
  return samples;
}

}  // namespace commcert
