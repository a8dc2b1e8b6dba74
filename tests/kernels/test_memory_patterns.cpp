#include <bit>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "kernels/memory_patterns.hpp"

namespace commcert {
namespace {

TEST(MemoryPatterns, WalkingOnesHaveOneBitThatMovesWithTheAddress) {
  for (std::uint64_t word = 0; word < 256; ++word) {
    const std::uint64_t v = memory_pattern_word(MemoryPattern::kWalkingOnes, 0, word);
    ASSERT_EQ(std::popcount(v), 1);
    ASSERT_EQ(v, std::uint64_t{1} << (word % 64));
  }
}

TEST(MemoryPatterns, WalkingZerosAreTheComplementSoEveryBitSeesBothValues) {
  for (std::uint64_t word = 0; word < 256; ++word) {
    const std::uint64_t ones = memory_pattern_word(MemoryPattern::kWalkingOnes, 0, word);
    const std::uint64_t zeros = memory_pattern_word(MemoryPattern::kWalkingZeros, 0, word);
    ASSERT_EQ(ones ^ zeros, ~std::uint64_t{0});
  }
}

TEST(MemoryPatterns, AddressInAddressIsUniquePerWord) {
  std::set<std::uint64_t> values;
  for (std::uint64_t word = 0; word < 10000; ++word) {
    values.insert(memory_pattern_word(MemoryPattern::kAddressInAddress, 0, word));
  }
  EXPECT_EQ(values.size(), 10000u);
  EXPECT_EQ(memory_pattern_word(MemoryPattern::kAddressInAddress, 0, 3), 24u);  // byte offset
}

TEST(MemoryPatterns, RandomDependsOnSeedAndAddress) {
  int same_seed_change = 0;
  std::set<std::uint64_t> values;
  for (std::uint64_t word = 0; word < 1000; ++word) {
    const std::uint64_t v = memory_pattern_word(MemoryPattern::kRandom, 1, word);
    same_seed_change += v == memory_pattern_word(MemoryPattern::kRandom, 2, word);
    values.insert(v);
    ASSERT_EQ(v, memory_pattern_word(MemoryPattern::kRandom, 1, word));
  }
  EXPECT_EQ(same_seed_change, 0);
  EXPECT_EQ(values.size(), 1000u);
}

TEST(MemoryPatterns, HaveStableNamesForRecords) {
  EXPECT_EQ(std::string(memory_pattern_name(MemoryPattern::kWalkingOnes)), "walking_ones");
  EXPECT_EQ(std::string(memory_pattern_name(MemoryPattern::kWalkingZeros)), "walking_zeros");
  EXPECT_EQ(std::string(memory_pattern_name(MemoryPattern::kAddressInAddress)),
            "address_in_address");
  EXPECT_EQ(std::string(memory_pattern_name(MemoryPattern::kRandom)), "random");
  EXPECT_EQ(kMemoryPatternCount, 4);
}

TEST(MemoryPatterns, ErrorLogLayoutIsFixedForTheDeviceToHostCopy) {
  // The verify kernel writes this struct and the host copies it back as bytes.
  EXPECT_EQ(sizeof(MemoryErrorEntry), 32u);
  EXPECT_EQ(sizeof(MemoryErrorLog), 8u + kMemoryErrorSlots * 32u);
}

}  // namespace
}  // namespace commcert
