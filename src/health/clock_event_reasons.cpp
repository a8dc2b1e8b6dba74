#include "health/clock_event_reasons.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace commcert {
namespace {

// nvmlClocksEventReason* bits (NVML header; the same values as the older *ThrottleReason* names).
constexpr std::array<std::pair<std::uint64_t, const char*>, 9> kReasons = {{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal"},
    {0x40, "hw_thermal"},
    {0x80, "hw_power_brake"},
    {0x100, "display_clock_setting"},
}};

}  // namespace

std::vector<ClockEventBit> clock_event_bits(std::uint64_t mask) {
  std::vector<ClockEventBit> bits;
  for (int position = 0; position < 64; ++position) {
    const std::uint64_t bit = std::uint64_t{1} << position;
    if ((mask & bit) == 0) continue;
    std::string name = fmt::format("unknown_{:#x}", bit);
    for (const auto& [value, known] : kReasons) {
      if (value == bit) name = known;
    }
    bits.push_back({bit, std::move(name)});
  }
  return bits;
}

std::vector<std::string> clock_event_reason_names(std::uint64_t mask) {
  std::vector<std::string> names;
  for (auto& bit : clock_event_bits(mask))
    names.push_back(std::move(bit.name));
  return names;
}

}  // namespace commcert
