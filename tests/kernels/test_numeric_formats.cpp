// Host compile of the __host__ __device__ conversions in kernels/numeric_formats.hpp, checked
// against the format definitions (IEEE 754 binary16, bfloat16, OCP FP8 E4M3/E5M2) rather than
// against the code's own output.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/numeric_formats.hpp"

namespace commcert {
namespace {

struct FormatCase {
  const char* name;
  DataType type;
  int exponent_bits;
  int mantissa_bits;
  bool ieee;  // inf and NaN in the all-ones exponent (false: OCP e4m3, only S.1111.111 is NaN)
};

constexpr FormatCase kFormats[] = {
    {"half", DataType::kHalf, 5, 10, true},
    {"bfloat16", DataType::kBfloat16, 8, 7, true},
    {"f8e4m3", DataType::kFp8E4M3, 4, 3, false},
    {"f8e5m2", DataType::kFp8E5M2, 5, 2, true},
};

int width(const FormatCase& f) {
  return 1 + f.exponent_bits + f.mantissa_bits;
}

// The value of a bit pattern straight from the format definition.
double reference_decode(const FormatCase& f, std::uint64_t bits) {
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  const std::uint64_t exponent_field = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const std::uint64_t mantissa_field = bits & ((1u << f.mantissa_bits) - 1);
  const bool negative = (bits >> (width(f) - 1)) & 1;
  const std::uint64_t all_ones = (1u << f.exponent_bits) - 1;
  double magnitude;
  if (exponent_field == all_ones && f.ieee) {
    magnitude = mantissa_field == 0 ? std::numeric_limits<double>::infinity()
                                    : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent_field == all_ones && mantissa_field == (1u << f.mantissa_bits) - 1) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent_field == 0) {
    magnitude = static_cast<double>(mantissa_field) * std::pow(2.0, 1 - bias - f.mantissa_bits);
  } else {
    magnitude = (1.0 + static_cast<double>(mantissa_field) / (1u << f.mantissa_bits)) *
                std::pow(2.0, static_cast<int>(exponent_field) - bias);
  }
  return negative ? -magnitude : magnitude;
}

// Positive finite values of the format, ascending, with their bit patterns.
struct Ladder {
  std::vector<double> values;
  std::vector<std::uint64_t> bits;
};

Ladder positive_ladder(const FormatCase& f) {
  Ladder ladder;
  const std::uint64_t sign_bit = std::uint64_t{1} << (width(f) - 1);
  for (std::uint64_t bits = 0; bits < sign_bit; ++bits) {
    const double value = reference_decode(f, bits);
    if (std::isfinite(value)) {
      ladder.values.push_back(value);
      ladder.bits.push_back(bits);
    }
  }
  // Positive patterns in increasing order are increasing values (the point of the layout).
  EXPECT_TRUE(std::is_sorted(ladder.values.begin(), ladder.values.end()));
  return ladder;
}

std::uint64_t overflow_bits(const FormatCase& f) {
  // IEEE-like: infinity. OCP e4m3 has no infinity: NaN (0x7F).
  const std::uint64_t exponent_all_ones = (std::uint64_t{1} << f.exponent_bits) - 1;
  return f.ieee ? exponent_all_ones << f.mantissa_bits
                : (exponent_all_ones << f.mantissa_bits) | ((1u << f.mantissa_bits) - 1);
}

// Round to nearest, ties to the even pattern, by searching the ladder: independent of
// encode_minifloat's arithmetic.
std::uint64_t reference_encode_positive(const FormatCase& f, const Ladder& ladder, double value) {
  const auto& v = ladder.values;
  const double max = v.back();
  const double max_ulp = v.back() - v[v.size() - 2];
  if (value == max + max_ulp / 2) {
    // The midpoint to the next (unrepresentable) step ties to the even neighbour: max itself
    // when its mantissa is even (e4m3's 448), else the overflow value.
    return (ladder.bits.back() & 1) == 0 ? ladder.bits.back() : overflow_bits(f);
  }
  if (value > max + max_ulp / 2) return overflow_bits(f);
  if (value > max) {
    // Between max and the midpoint: rounds down to max.
    return ladder.bits.back();
  }
  const auto upper = std::lower_bound(v.begin(), v.end(), value);
  const auto hi = static_cast<std::size_t>(upper - v.begin());
  if (v[hi] == value || hi == 0) return ladder.bits[hi];
  const std::size_t lo = hi - 1;
  const double below = value - v[lo];
  const double above = v[hi] - value;
  if (below < above) return ladder.bits[lo];
  if (above < below) return ladder.bits[hi];
  return (ladder.bits[lo] & 1) == 0 ? ladder.bits[lo] : ladder.bits[hi];
}

class MiniFloat : public ::testing::TestWithParam<FormatCase> {};

TEST_P(MiniFloat, DecodeMatchesTheFormatDefinitionForEveryPattern) {
  const FormatCase& f = GetParam();
  for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << width(f)); ++bits) {
    const double want = reference_decode(f, bits);
    const double got = decode_value(bits, f.type);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << bits;
    } else {
      EXPECT_EQ(got, want) << std::hex << bits;
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << std::hex << bits;
    }
  }
}

TEST_P(MiniFloat, EveryNonNanPatternRoundTrips) {
  const FormatCase& f = GetParam();
  for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << width(f)); ++bits) {
    const double value = decode_value(bits, f.type);
    if (std::isnan(value)) continue;
    EXPECT_EQ(encode_value(value, f.type), bits) << std::hex << bits << " = " << value;
  }
}

TEST_P(MiniFloat, NanEncodesAsTheCanonicalNanAndStaysNan) {
  const FormatCase& f = GetParam();
  const std::uint64_t bits = encode_value(std::numeric_limits<double>::quiet_NaN(), f.type);
  EXPECT_TRUE(std::isnan(decode_value(bits, f.type))) << std::hex << bits;
  EXPECT_TRUE(std::isnan(decode_value(encode_value(-std::nan(""), f.type), f.type)));
}

TEST_P(MiniFloat, RoundsToNearestEvenAtEveryMidpoint) {
  const FormatCase& f = GetParam();
  const Ladder ladder = positive_ladder(f);
  const std::uint64_t sign_bit = std::uint64_t{1} << (width(f) - 1);
  for (std::size_t i = 0; i + 1 < ladder.values.size(); ++i) {
    const double lo = ladder.values[i];
    const double hi = ladder.values[i + 1];
    const double mid = lo + (hi - lo) / 2;  // exact in double
    const std::uint64_t even = (ladder.bits[i] & 1) == 0 ? ladder.bits[i] : ladder.bits[i + 1];
    ASSERT_EQ(encode_value(mid, f.type), even) << "tie between " << lo << " and " << hi;
    ASSERT_EQ(encode_value(-mid, f.type), even | sign_bit) << "tie between " << -lo;
    const double just_below = std::nextafter(mid, 0.0);
    const double just_above = std::nextafter(mid, HUGE_VAL);
    ASSERT_EQ(encode_value(just_below, f.type), ladder.bits[i]) << just_below;
    ASSERT_EQ(encode_value(just_above, f.type), ladder.bits[i + 1]) << just_above;
  }
}

TEST_P(MiniFloat, RandomValuesRoundLikeTheReference) {
  const FormatCase& f = GetParam();
  const Ladder ladder = positive_ladder(f);
  const std::uint64_t sign_bit = std::uint64_t{1} << (width(f) - 1);
  std::mt19937_64 rng(1234);
  const double top = ladder.values.back() * 1.25;
  const double bottom = ladder.values[1] / 4;  // well below the smallest subnormal
  std::uniform_real_distribution<double> log_uniform(std::log2(bottom), std::log2(top));
  for (int i = 0; i < 20000; ++i) {
    const double value = std::exp2(log_uniform(rng));
    const std::uint64_t want = reference_encode_positive(f, ladder, value);
    ASSERT_EQ(encode_value(value, f.type), want) << f.name << " " << value;
    ASSERT_EQ(encode_value(-value, f.type), want | sign_bit) << f.name << " " << -value;
  }
}

TEST_P(MiniFloat, OverflowAndInfinity) {
  const FormatCase& f = GetParam();
  const Ladder ladder = positive_ladder(f);
  const std::uint64_t sign_bit = std::uint64_t{1} << (width(f) - 1);
  const double max = ladder.values.back();
  const double max_ulp = max - ladder.values[ladder.values.size() - 2];
  EXPECT_EQ(encode_value(max, f.type), ladder.bits.back());
  EXPECT_EQ(encode_value(max + max_ulp / 4, f.type), ladder.bits.back());  // rounds down
  EXPECT_EQ(encode_value(max + max_ulp, f.type), overflow_bits(f));
  EXPECT_EQ(encode_value(HUGE_VAL, f.type), overflow_bits(f));
  EXPECT_EQ(encode_value(-HUGE_VAL, f.type), overflow_bits(f) | sign_bit);
  EXPECT_EQ(encode_value(1e300, f.type), overflow_bits(f));
}

TEST_P(MiniFloat, ZeroSignedZeroAndUnderflow) {
  const FormatCase& f = GetParam();
  const Ladder ladder = positive_ladder(f);
  const std::uint64_t sign_bit = std::uint64_t{1} << (width(f) - 1);
  const double smallest = ladder.values[1];  // smallest positive subnormal
  EXPECT_EQ(encode_value(0.0, f.type), 0u);
  EXPECT_EQ(encode_value(-0.0, f.type), sign_bit);
  EXPECT_EQ(encode_value(smallest, f.type), 1u);
  EXPECT_EQ(encode_value(smallest / 2, f.type), 0u);  // tie with zero: zero is even
  EXPECT_EQ(encode_value(smallest * 0.75, f.type), 1u);
  EXPECT_EQ(encode_value(smallest / 4, f.type), 0u);
  EXPECT_EQ(encode_value(-smallest / 4, f.type), sign_bit);  // underflow keeps the sign
  EXPECT_EQ(encode_value(1e-300, f.type), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, MiniFloat, ::testing::ValuesIn(kFormats),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(NumericFormats, KnownHalfPatterns) {
  const auto h = [](double v) { return encode_value(v, DataType::kHalf); };
  EXPECT_EQ(h(1.0), 0x3C00u);
  EXPECT_EQ(h(-2.0), 0xC000u);
  EXPECT_EQ(h(0.5), 0x3800u);
  EXPECT_EQ(h(65504.0), 0x7BFFu);               // largest finite
  EXPECT_EQ(h(65519.0), 0x7BFFu);               // below the midpoint to 65536
  EXPECT_EQ(h(65520.0), 0x7C00u);               // the midpoint: ties to even = infinity
  EXPECT_EQ(h(std::ldexp(1.0, -14)), 0x0400u);  // smallest normal
  EXPECT_EQ(h(std::ldexp(1.0, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(h(std::ldexp(1023.0, -24)), 0x03FFu);
  EXPECT_EQ(h(1.0 + std::ldexp(1.0, -11)), 0x3C00u);      // tie: even (1.0)
  EXPECT_EQ(h(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02u);  // tie: even (1 + 2^-9)
  EXPECT_EQ(h(2049.0), 0x6800u);  // 2048 and 2050 are neighbours; 2049 ties to 2048
  EXPECT_EQ(h(2051.0), 0x6802u);  // ties to 2052
  EXPECT_EQ(h(HUGE_VAL), 0x7C00u);
  EXPECT_EQ(h(-HUGE_VAL), 0xFC00u);
  EXPECT_EQ(h(std::nan("")), 0x7E00u);
  EXPECT_DOUBLE_EQ(decode_value(0x3555, DataType::kHalf), 0.333251953125);
}

TEST(NumericFormats, KnownBfloat16Patterns) {
  const auto b = [](double v) { return encode_value(v, DataType::kBfloat16); };
  EXPECT_EQ(b(1.0), 0x3F80u);
  EXPECT_EQ(b(-1.0), 0xBF80u);
  EXPECT_EQ(b(3.0), 0x4040u);
  EXPECT_EQ(b(256.0), 0x4380u);
  EXPECT_EQ(b(257.0), 0x4380u);                           // 8 significant bits: 257 ties to 256
  EXPECT_EQ(b(259.0), 0x4382u);                           // ties to 260
  EXPECT_EQ(b(std::ldexp(255.0 / 128.0, 127)), 0x7F7Fu);  // largest finite
  EXPECT_EQ(b(std::ldexp(1.0, -126)), 0x0080u);           // smallest normal
  EXPECT_EQ(b(std::ldexp(1.0, -133)), 0x0001u);           // smallest subnormal
  EXPECT_EQ(b(HUGE_VAL), 0x7F80u);
  EXPECT_EQ(b(std::nan("")), 0x7FC0u);
  // bfloat16 is the top half of a float: the same rounding as truncating float bits with RNE.
  EXPECT_EQ(b(1.0 / 3.0), 0x3EABu);  // float 0x3EAAAAAB -> 0x3EAB
}

TEST(NumericFormats, KnownFp8E4M3Patterns) {
  const auto e = [](double v) { return encode_value(v, DataType::kFp8E4M3); };
  EXPECT_EQ(e(1.0), 0x38u);
  EXPECT_EQ(e(-1.0), 0xB8u);
  EXPECT_EQ(e(448.0), 0x7Eu);  // largest finite: S.1111.110
  EXPECT_EQ(e(-448.0), 0xFEu);
  EXPECT_EQ(e(464.0), 0x7Eu);  // midpoint to the (NaN) next step: ties to even 448
  EXPECT_EQ(e(470.0), 0x7Fu);  // beyond: no infinity in e4m3, overflow is NaN
  EXPECT_EQ(e(HUGE_VAL), 0x7Fu);
  EXPECT_EQ(e(std::nan("")), 0x7Fu);
  EXPECT_TRUE(std::isnan(decode_value(0x7F, DataType::kFp8E4M3)));
  EXPECT_TRUE(std::isnan(decode_value(0xFF, DataType::kFp8E4M3)));
  EXPECT_DOUBLE_EQ(decode_value(0x78, DataType::kFp8E4M3), 256.0);  // exponent 1111 is finite
  EXPECT_DOUBLE_EQ(decode_value(0x7D, DataType::kFp8E4M3), 416.0);
  EXPECT_EQ(e(std::ldexp(1.0, -6)), 0x08u);  // smallest normal
  EXPECT_EQ(e(std::ldexp(1.0, -9)), 0x01u);  // smallest subnormal
  EXPECT_EQ(e(std::ldexp(7.0, -9)), 0x07u);  // largest subnormal
  EXPECT_EQ(e(16.0), 0x58u);
  EXPECT_EQ(e(17.0), 0x58u);  // 16 and 18 neighbour; tie to even 16
  EXPECT_EQ(e(19.0), 0x5Au);  // tie to even 20
}

TEST(NumericFormats, KnownFp8E5M2Patterns) {
  const auto e = [](double v) { return encode_value(v, DataType::kFp8E5M2); };
  EXPECT_EQ(e(1.0), 0x3Cu);
  EXPECT_EQ(e(-1.0), 0xBCu);
  EXPECT_EQ(e(57344.0), 0x7Bu);  // largest finite
  EXPECT_EQ(e(61440.0), 0x7Cu);  // midpoint to 65536: ties to even = infinity
  EXPECT_EQ(e(HUGE_VAL), 0x7Cu);
  EXPECT_EQ(e(-HUGE_VAL), 0xFCu);
  EXPECT_EQ(e(std::nan("")), 0x7Eu);
  EXPECT_EQ(e(std::ldexp(1.0, -14)), 0x04u);  // smallest normal
  EXPECT_EQ(e(std::ldexp(1.0, -16)), 0x01u);  // smallest subnormal
  EXPECT_EQ(e(4.5), 0x44u);                   // 4 and 5 neighbour; tie to even 4
  EXPECT_EQ(e(5.5), 0x46u);                   // tie to even 6
  EXPECT_TRUE(std::isinf(decode_value(0x7C, DataType::kFp8E5M2)));
  EXPECT_TRUE(std::isnan(decode_value(0x7D, DataType::kFp8E5M2)));
}

TEST(NumericFormats, FloatAndDoubleAreTheHardwareFormats) {
  EXPECT_EQ(encode_value(1.0, DataType::kFloat), 0x3F800000u);
  EXPECT_EQ(encode_value(-2.5, DataType::kFloat), 0xC0200000u);
  EXPECT_EQ(encode_value(1.0, DataType::kDouble), 0x3FF0000000000000u);
  EXPECT_EQ(encode_value(1.0 / 3.0, DataType::kFloat), 0x3EAAAAABu);
  EXPECT_DOUBLE_EQ(decode_value(0x3EAAAAABu, DataType::kFloat), static_cast<float>(1.0 / 3.0));
  EXPECT_DOUBLE_EQ(decode_value(0x4009'21FB'5444'2D18u, DataType::kDouble), std::numbers::pi);
  EXPECT_EQ(encode_value(std::ldexp(1.0, -149), DataType::kFloat), 1u);  // float subnormal
}

TEST(NumericFormats, IntegersWrapInTwosComplement) {
  EXPECT_EQ(encode_value(-1, DataType::kInt8), 0xFFu);
  EXPECT_EQ(encode_value(127, DataType::kInt8), 0x7Fu);
  EXPECT_EQ(encode_value(-128, DataType::kInt8), 0x80u);
  EXPECT_EQ(encode_value(200, DataType::kUint8), 200u);
  EXPECT_EQ(encode_value(-1, DataType::kInt32), 0xFFFFFFFFu);
  EXPECT_EQ(encode_value(-1, DataType::kInt64), ~std::uint64_t{0});
  EXPECT_EQ(encode_value(4e9, DataType::kUint32), 4000000000u);
  EXPECT_EQ(encode_value(std::ldexp(1.0, 63), DataType::kUint64), std::uint64_t{1} << 63);
  EXPECT_DOUBLE_EQ(decode_value(0xFF, DataType::kInt8), -1);
  EXPECT_DOUBLE_EQ(decode_value(0xFF, DataType::kUint8), 255);
  EXPECT_DOUBLE_EQ(decode_value(0x80000000u, DataType::kInt32), -2147483648.0);
  EXPECT_DOUBLE_EQ(decode_value(0x80000000u, DataType::kUint32), 2147483648.0);
  EXPECT_DOUBLE_EQ(decode_value(~std::uint64_t{0}, DataType::kInt64), -1);
  // Bits above the type's width are ignored.
  EXPECT_DOUBLE_EQ(decode_value(0x1234'5601, DataType::kUint8), 1);
}

TEST(NumericFormats, WidthMaskAndElementSize) {
  EXPECT_EQ(width_mask(DataType::kInt8), 0xFFu);
  EXPECT_EQ(width_mask(DataType::kHalf), 0xFFFFu);
  EXPECT_EQ(width_mask(DataType::kFloat), 0xFFFFFFFFu);
  EXPECT_EQ(width_mask(DataType::kDouble), ~std::uint64_t{0});
  EXPECT_EQ(element_size(DataType::kFp8E4M3), 1);
  EXPECT_EQ(element_size(DataType::kBfloat16), 2);
  EXPECT_EQ(element_size(DataType::kUint32), 4);
  EXPECT_EQ(element_size(DataType::kInt64), 8);
}

TEST(UlpDistance, CountsRepresentableStepsAcrossZero) {
  EXPECT_EQ(ulp_distance(0x3C00, 0x3C00, DataType::kHalf), 0u);
  EXPECT_EQ(ulp_distance(0x3C00, 0x3C01, DataType::kHalf), 1u);
  EXPECT_EQ(ulp_distance(0x3C01, 0x3C00, DataType::kHalf), 1u);
  EXPECT_EQ(ulp_distance(0x3BFF, 0x3C00, DataType::kHalf), 1u);  // across an exponent boundary
  EXPECT_EQ(ulp_distance(0x0000, 0x8000, DataType::kHalf), 0u);  // +0 and -0
  EXPECT_EQ(ulp_distance(0x0001, 0x8001, DataType::kHalf), 2u);  // +-smallest subnormal
  EXPECT_EQ(ulp_distance(0x3F800000, 0x3F800002, DataType::kFloat), 2u);
  EXPECT_EQ(ulp_distance(0x3F800000, 0xBF800000, DataType::kFloat), 2u * 0x3F800000u);
  EXPECT_EQ(ulp_distance(0x3FF0000000000000, 0x3FF0000000000003, DataType::kDouble), 3u);
  EXPECT_EQ(ulp_distance(0x38, 0x3A, DataType::kFp8E4M3), 2u);
  // Only the type's width counts.
  EXPECT_EQ(ulp_distance(0xFF3C00, 0x3C01, DataType::kHalf), 1u);
}

TEST(UlpDistance, AgreesWithTheNumberOfValuesBetween) {
  // For every pair of positive half values a < b: distance = number of steps on the ladder.
  const FormatCase half = kFormats[0];
  const Ladder ladder = positive_ladder(half);
  for (std::size_t i = 0; i < ladder.bits.size(); i += 97) {
    for (std::size_t j = i; j < ladder.bits.size(); j += 1013) {
      EXPECT_EQ(ulp_distance(ladder.bits[i], ladder.bits[j], DataType::kHalf), j - i);
    }
  }
}

}  // namespace
}  // namespace commcert
