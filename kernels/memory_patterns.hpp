#pragma once

// Data patterns of the device-memory integrity test, as 64-bit words: word i of the tested
// region must hold memory_pattern_word(pattern, seed, i) after the fill. Shared with the host so
// tests can check what the verify kernel checks.

#include <cstdint>

#include "kernels/burn_math.hpp"
#include "kernels/host_device.hpp"

namespace commcert {

// The order the test runs them in. Walking ones then walking zeros drive every bit of every
// word to both values; address-in-address catches aliasing (two addresses reaching one cell:
// the cell holds the other address); random catches data-dependent faults.
enum class MemoryPattern : std::uint8_t {
  kWalkingOnes = 0,
  kWalkingZeros = 1,
  kAddressInAddress = 2,
  kRandom = 3,
};
inline constexpr int kMemoryPatternCount = 4;

COMMCERT_HD inline std::uint64_t memory_pattern_word(MemoryPattern pattern, std::uint64_t seed,
                                                     std::uint64_t word) {
  switch (pattern) {
    case MemoryPattern::kWalkingOnes:
      return std::uint64_t{1} << (word & 63);
    case MemoryPattern::kWalkingZeros:
      return ~(std::uint64_t{1} << (word & 63));
    case MemoryPattern::kAddressInAddress:
      return word * 8;  // the word's byte offset
    case MemoryPattern::kRandom:
      return burn_mix64(seed ^ burn_mix64(word + 1));
  }
  return 0;
}

inline const char* memory_pattern_name(MemoryPattern pattern) {
  switch (pattern) {
    case MemoryPattern::kWalkingOnes:
      return "walking_ones";
    case MemoryPattern::kWalkingZeros:
      return "walking_zeros";
    case MemoryPattern::kAddressInAddress:
      return "address_in_address";
    case MemoryPattern::kRandom:
      return "random";
  }
  return "unknown";
}

// What the verify kernel keeps of a miscompare; the first kMemoryErrorSlots are kept.
struct MemoryErrorEntry {
  std::uint64_t offset;  // byte offset in the tested region
  std::uint64_t expected;
  std::uint64_t actual;
  std::uint32_t pattern;
  std::uint32_t reserved;
};

inline constexpr unsigned kMemoryErrorSlots = 16;

// Device-resident log a verify pass appends to.
struct MemoryErrorLog {
  unsigned long long count;  // every miscompare, also those past the kept slots
  MemoryErrorEntry first[kMemoryErrorSlots];
};

}  // namespace commcert
