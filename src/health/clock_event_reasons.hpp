#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace commcert {

// Names of the bits set in an NVML clock-event (throttle) reason mask, in bit order. Several
// bits are normally set at once (a GEMM burn at its power cap shows sw_power_cap); unknown bits
// are named by value ("unknown_0x200") rather than dropped.
[[nodiscard]] std::vector<std::string> clock_event_reason_names(std::uint64_t mask);

// Every bit of `mask` on its own, with its name, so time can be accounted per reason.
struct ClockEventBit {
  std::uint64_t bit = 0;
  std::string name;
};
[[nodiscard]] std::vector<ClockEventBit> clock_event_bits(std::uint64_t mask);

}  // namespace commcert
