#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/pattern_host.hpp"

namespace commcert {
namespace {

constexpr DataType kAllTypes[] = {DataType::kInt8,   DataType::kUint8,    DataType::kInt32,
                                  DataType::kUint32, DataType::kInt64,    DataType::kUint64,
                                  DataType::kHalf,   DataType::kBfloat16, DataType::kFloat,
                                  DataType::kDouble, DataType::kFp8E4M3,  DataType::kFp8E5M2};

PatternSpec spec(CollectiveKind kind, DataType type, ReduceOp op = ReduceOp::kSum) {
  PatternSpec s;
  s.collective = kind;
  s.type = type;
  s.op = op;
  s.nranks = 4;
  s.root = 1;
  s.count = 1000;
  s.seed = 0xabcdef;
  return s;
}

// A buffer of `elements` elements of `type`, with guard bytes after it.
struct Buffer {
  Buffer(DataType type, std::uint64_t elements)
      : bytes(static_cast<std::size_t>(elements) * element_size(type) + kGuard, kGuardByte),
        type_(type),
        elements_(elements) {}
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  std::uint64_t at(std::uint64_t i) const {
    return load_element(bytes.data(), i, element_size(type_));
  }
  bool guard_intact() const {
    for (std::size_t i = bytes.size() - kGuard; i < bytes.size(); ++i) {
      if (bytes[i] != kGuardByte) return false;
    }
    return true;
  }
  static constexpr std::size_t kGuard = 16;
  static constexpr unsigned char kGuardByte = 0xA5;
  std::vector<unsigned char> bytes;
  DataType type_;
  std::uint64_t elements_;
};

TEST(PatternHost, FillInputWritesInputBitsFromTheGivenFirstElement) {
  for (const DataType type : kAllTypes) {
    for (const CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather}) {
      const PatternSpec s = spec(kind, type);
      Buffer whole(type, 300);
      fill_input_host(s, 2, whole.data(), 300);
      Buffer tail(type, 100);
      fill_input_host(s, 2, tail.data(), 100, 200);
      for (std::uint64_t i = 0; i < 300; ++i) {
        ASSERT_EQ(whole.at(i), input_bits(s, 2, i)) << static_cast<int>(type) << " " << i;
      }
      for (std::uint64_t i = 0; i < 100; ++i)
        ASSERT_EQ(tail.at(i), whole.at(200 + i));
      EXPECT_TRUE(whole.guard_intact());
      EXPECT_TRUE(tail.guard_intact());
    }
  }
}

TEST(PatternHost, FillExpectedWritesExpectedBits) {
  for (const DataType type : kAllTypes) {
    for (const CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                                      CollectiveKind::kAllToAll, CollectiveKind::kScatter}) {
      const PatternSpec s = spec(kind, type, ReduceOp::kMax);
      const RankLayout layout = rank_layout(kind, s.count, s.nranks, 3, s.root);
      Buffer expected(type, layout.output_elements);
      fill_expected_host(s, 3, expected.data(), layout.output_elements);
      for (std::uint64_t i = 0; i < layout.output_elements; ++i) {
        ASSERT_EQ(expected.at(i), expected_bits(s, 3, i)) << static_cast<int>(type) << " " << i;
      }
      EXPECT_TRUE(expected.guard_intact());
    }
  }
}

TEST(PatternHost, ACorrectOutputHasNoMismatches) {
  for (const DataType type : kAllTypes) {
    for (const ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg}) {
      const PatternSpec s = spec(CollectiveKind::kAllReduce, type, op);
      Buffer expected(type, s.count);
      fill_expected_host(s, 0, expected.data(), s.count);
      Buffer output = expected;
      EXPECT_EQ(count_mismatches_host(s, output.data(), expected.data(), s.count), 0u);
    }
  }
}

TEST(PatternHost, APoisonedOutputNeverMatches) {
  // An operation that never writes its output leaves the poison: every element must count,
  // including under the floating-point average's tolerance.
  for (const DataType type : kAllTypes) {
    for (const ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kAvg}) {
      for (const CollectiveKind kind :
           {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kAllGather}) {
        const PatternSpec s = spec(kind, type, op);
        const RankLayout layout = rank_layout(kind, s.count, s.nranks, 0, s.root);
        Buffer expected(type, layout.output_elements);
        fill_expected_host(s, 0, expected.data(), layout.output_elements);
        Buffer output(type, layout.output_elements);
        poison_host(s, expected.data(), output.data(), layout.output_elements);
        EXPECT_EQ(count_mismatches_host(s, output.data(), expected.data(), layout.output_elements),
                  layout.output_elements)
            << static_cast<int>(type) << " op " << static_cast<int>(op);
        // The poison is the complement of the expected value, in every element from the
        // first: whatever memory held before (a buffer never written) is no stand-in for it.
        const int bits = 8 * element_size(type);
        const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
        for (std::uint64_t i = 0; i < layout.output_elements; ++i) {
          ASSERT_FALSE(element_matches(s, output.at(i), expected.at(i)));
          ASSERT_EQ(output.at(i), ~expected.at(i) & mask) << static_cast<int>(type) << " " << i;
        }
        EXPECT_TRUE(output.guard_intact());
      }
    }
  }
}

TEST(PatternHost, CountIsExact) {
  for (const DataType type : kAllTypes) {
    const PatternSpec s = spec(CollectiveKind::kAllGather, type);
    const std::uint64_t n = s.count * static_cast<std::uint64_t>(s.nranks);
    Buffer expected(type, n);
    fill_expected_host(s, 0, expected.data(), n);
    Buffer output = expected;
    const int bytes = element_size(type);
    // Wrong elements at the ends, in the middle and adjacent; some differ only in the lowest
    // bit, some only in the highest.
    const std::uint64_t wrong[] = {0, 1, 2, 500, 1999, n - 2, n - 1};
    for (std::size_t k = 0; k < std::size(wrong); ++k) {
      const std::uint64_t flip = k % 2 ? 1 : std::uint64_t{1} << (8 * bytes - 1);
      store_element(output.data(), wrong[k], bytes, output.at(wrong[k]) ^ flip);
    }
    EXPECT_EQ(count_mismatches_host(s, output.data(), expected.data(), n), std::size(wrong))
        << static_cast<int>(type);
    // Only the first `elements` are compared.
    EXPECT_EQ(count_mismatches_host(s, output.data(), expected.data(), 2), 2u);
    // One wrong element alone: the last one, and one whose first byte is one below the expected
    // (whatever the bytewise comparison's sign and size, it is a mismatch).
    Buffer last_wrong = expected;
    store_element(last_wrong.data(), n - 1, bytes, last_wrong.at(n - 1) ^ 1);
    EXPECT_EQ(count_mismatches_host(s, last_wrong.data(), expected.data(), n), 1u)
        << static_cast<int>(type);
    Buffer one_below = expected;
    std::uint64_t odd = 0;
    while (odd < n && (one_below.at(odd) & 1) == 0)
      ++odd;
    ASSERT_LT(odd, n);
    store_element(one_below.data(), odd, bytes, one_below.at(odd) - 1);
    EXPECT_EQ(count_mismatches_host(s, one_below.data(), expected.data(), n), 1u)
        << static_cast<int>(type);
    EXPECT_EQ(count_mismatches_host(s, output.data(), expected.data(), 0), 0u);
  }
}

TEST(PatternHost, CountHonoursTheAverageToleranceAndNothingElse) {
  const PatternSpec avg = spec(CollectiveKind::kAllReduce, DataType::kFloat, ReduceOp::kAvg);
  Buffer expected(DataType::kFloat, 8);
  fill_expected_host(avg, 0, expected.data(), 8);
  Buffer output = expected;
  store_element(output.data(), 0, 4, output.at(0) + 1);  // 1 ulp: accepted
  store_element(output.data(), 1, 4, output.at(1) + 2);  // 2 ulp: accepted
  store_element(output.data(), 2, 4, output.at(2) + 3);  // 3 ulp: wrong
  EXPECT_EQ(count_mismatches_host(avg, output.data(), expected.data(), 8), 1u);
  // Only the first `elements` are compared under the tolerance too: the wrong third is not.
  EXPECT_EQ(count_mismatches_host(avg, output.data(), expected.data(), 2), 0u);
  // The same damage on a sum is three wrong elements.
  const PatternSpec sum = spec(CollectiveKind::kAllReduce, DataType::kFloat, ReduceOp::kSum);
  EXPECT_EQ(count_mismatches_host(sum, output.data(), expected.data(), 8), 3u);
}

TEST(PatternHost, CorruptTouchesExactlyOneElementPerStride) {
  for (const DataType type : kAllTypes) {
    for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, kCorruptionStride - 1,
                                  kCorruptionStride, kCorruptionStride + 1, 2 * kCorruptionStride,
                                  2 * kCorruptionStride + 1, std::uint64_t{10000}}) {
      const PatternSpec s = spec(CollectiveKind::kAllReduce, type);
      Buffer expected(type, n);
      fill_expected_host(s, 0, expected.data(), n);
      Buffer output = expected;
      corrupt_host(s, output.data(), n);
      const std::uint64_t touched = (n + kCorruptionStride - 1) / kCorruptionStride;
      EXPECT_EQ(count_mismatches_host(s, output.data(), expected.data(), n), touched)
          << static_cast<int>(type) << " n=" << n;
      for (std::uint64_t i = 0; i < n; ++i) {
        const bool target = i % kCorruptionStride == 0;
        ASSERT_EQ(output.at(i) != expected.at(i), target) << i;
        if (target) {
          ASSERT_EQ(output.at(i), corrupted_bits(expected.at(i), type));
        }
      }
      EXPECT_TRUE(output.guard_intact());
    }
  }
}

TEST(PatternHost, CorruptionIsCaughtUnderTheAverageTolerance) {
  for (const DataType type : {DataType::kHalf, DataType::kBfloat16, DataType::kFloat,
                              DataType::kDouble, DataType::kFp8E4M3, DataType::kFp8E5M2}) {
    const PatternSpec s = spec(CollectiveKind::kReduceScatter, type, ReduceOp::kAvg);
    const std::uint64_t n = 3 * kCorruptionStride;
    Buffer expected(type, n);
    fill_expected_host(s, 0, expected.data(), n);
    Buffer output = expected;
    corrupt_host(s, output.data(), n);
    EXPECT_EQ(count_mismatches_host(s, output.data(), expected.data(), n), 3u)
        << static_cast<int>(type);
  }
}

}  // namespace
}  // namespace commcert
