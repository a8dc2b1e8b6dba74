#pragma once

// Conversions between double and the bit patterns of every element type, host and device alike.
// Encoding rounds to nearest even, as GPUs and MPI reductions do; the test patterns only use
// values that every format represents exactly, except the quotient of an average.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/collective_types.hpp"

namespace commcert {

// Layout of a small binary floating-point format: sign, `exponent_bits`, `mantissa_bits`.
struct MiniFloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool ieee_specials;  // all-ones exponent is inf/NaN (IEEE); false for OCP e4m3 (only S.1111.111
                       // is NaN)
};

inline constexpr MiniFloatFormat kHalfFormat{5, 10, 15, true};
inline constexpr MiniFloatFormat kBfloat16Format{8, 7, 127, true};
inline constexpr MiniFloatFormat kFp8E4M3Format{4, 3, 7, false};
inline constexpr MiniFloatFormat kFp8E5M2Format{5, 2, 15, true};

COMMCERT_HD inline std::uint64_t encode_minifloat(double value, MiniFloatFormat f) {
  const int width = 1 + f.exponent_bits + f.mantissa_bits;
  const std::uint64_t sign = std::signbit(value) ? (std::uint64_t{1} << (width - 1)) : 0;
  const std::uint64_t exponent_all_ones = (std::uint64_t{1} << f.exponent_bits) - 1;
  const std::uint64_t mantissa_all_ones = (std::uint64_t{1} << f.mantissa_bits) - 1;
  const std::uint64_t quiet_nan =
      (exponent_all_ones << f.mantissa_bits) |
      (f.ieee_specials ? (std::uint64_t{1} << (f.mantissa_bits - 1)) : mantissa_all_ones);
  if (std::isnan(value)) return sign | quiet_nan;
  const double magnitude = std::fabs(value);
  if (magnitude == 0.0) return sign;
  const int max_biased = f.ieee_specials ? static_cast<int>(exponent_all_ones) - 1
                                         : static_cast<int>(exponent_all_ones);
  if (std::isinf(value)) {
    return f.ieee_specials ? (sign | (exponent_all_ones << f.mantissa_bits)) : (sign | quiet_nan);
  }
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = m * 2^exponent, m in [0.5, 1)
  exponent -= 1;                     // now magnitude = s * 2^exponent, s in [1, 2)
  const int min_normal_exponent = 1 - f.bias;
  std::uint64_t biased = 0;
  std::uint64_t mantissa = 0;
  if (exponent < min_normal_exponent) {
    // Subnormal: value = mantissa * 2^(min_normal_exponent - mantissa_bits).
    const double scaled = std::ldexp(magnitude, f.mantissa_bits - min_normal_exponent);
    mantissa = static_cast<std::uint64_t>(std::nearbyint(scaled));
    if (mantissa > mantissa_all_ones) {
      biased = 1;
      mantissa = 0;
    }
  } else {
    const double fraction = std::ldexp(magnitude, -exponent) - 1.0;
    mantissa = static_cast<std::uint64_t>(std::nearbyint(std::ldexp(fraction, f.mantissa_bits)));
    if (mantissa > mantissa_all_ones) {
      mantissa = 0;
      exponent += 1;
    }
    // NOLINTNEXTLINE(bugprone-misplaced-widening-cast): a biased exponent fits any int.
    biased = static_cast<std::uint64_t>(exponent + f.bias);
  }
  const bool overflow =
      static_cast<int>(biased) > max_biased ||
      (!f.ieee_specials && static_cast<int>(biased) == max_biased && mantissa == mantissa_all_ones);
  if (overflow) {
    return f.ieee_specials ? (sign | (exponent_all_ones << f.mantissa_bits)) : (sign | quiet_nan);
  }
  return sign | (biased << f.mantissa_bits) | mantissa;
}

COMMCERT_HD inline double decode_minifloat(std::uint64_t bits, MiniFloatFormat f) {
  const int width = 1 + f.exponent_bits + f.mantissa_bits;
  const bool negative = (bits >> (width - 1)) & 1;
  const std::uint64_t exponent_all_ones = (std::uint64_t{1} << f.exponent_bits) - 1;
  const std::uint64_t mantissa_all_ones = (std::uint64_t{1} << f.mantissa_bits) - 1;
  const std::uint64_t biased = (bits >> f.mantissa_bits) & exponent_all_ones;
  const std::uint64_t mantissa = bits & mantissa_all_ones;
  double magnitude = 0.0;
  if (biased == exponent_all_ones && (f.ieee_specials || mantissa == mantissa_all_ones)) {
    magnitude = (f.ieee_specials && mantissa == 0) ? HUGE_VAL : NAN;
  } else if (biased == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (mantissa_all_ones + 1)),
                           static_cast<int>(biased) - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

COMMCERT_HD inline std::uint64_t float_bits(float value) {
  std::uint32_t bits = 0;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

COMMCERT_HD inline std::uint64_t double_bits(double value) {
  std::uint64_t bits = 0;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

COMMCERT_HD inline std::uint64_t width_mask(DataType type) {
  const int bytes = element_size(type);
  return bytes == 8 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (8 * bytes)) - 1);
}

// Bits of `value` in `type`. Integers wrap modulo their width (two's complement), floats round
// to nearest even.
COMMCERT_HD inline std::uint64_t encode_value(double value, DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kInt32:
    case DataType::kInt64:
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(value)) & width_mask(type);
    case DataType::kUint8:
    case DataType::kUint32:
    case DataType::kUint64:
      return static_cast<std::uint64_t>(value) & width_mask(type);
    case DataType::kHalf:
      return encode_minifloat(value, kHalfFormat);
    case DataType::kBfloat16:
      return encode_minifloat(value, kBfloat16Format);
    case DataType::kFloat:
      return float_bits(static_cast<float>(value));
    case DataType::kDouble:
      return double_bits(value);
    case DataType::kFp8E4M3:
      return encode_minifloat(value, kFp8E4M3Format);
    case DataType::kFp8E5M2:
      return encode_minifloat(value, kFp8E5M2Format);
  }
  return 0;
}

COMMCERT_HD inline double decode_value(std::uint64_t bits, DataType type) {
  switch (type) {
    case DataType::kInt8:
      return static_cast<double>(static_cast<std::int8_t>(bits & 0xff));
    case DataType::kInt32:
      return static_cast<double>(static_cast<std::int32_t>(bits & 0xffffffffU));
    case DataType::kInt64:
      return static_cast<double>(static_cast<std::int64_t>(bits));
    case DataType::kUint8:
    case DataType::kUint32:
    case DataType::kUint64:
      return static_cast<double>(bits & width_mask(type));
    case DataType::kHalf:
      return decode_minifloat(bits, kHalfFormat);
    case DataType::kBfloat16:
      return decode_minifloat(bits, kBfloat16Format);
    case DataType::kFloat: {
      const auto narrow = static_cast<std::uint32_t>(bits);
      float value = 0;
      memcpy(&value, &narrow, sizeof value);
      return value;
    }
    case DataType::kDouble: {
      double value = 0;
      memcpy(&value, &bits, sizeof value);
      return value;
    }
    case DataType::kFp8E4M3:
      return decode_minifloat(bits, kFp8E4M3Format);
    case DataType::kFp8E5M2:
      return decode_minifloat(bits, kFp8E5M2Format);
  }
  return 0;
}

// Distance in units in the last place between two floating-point bit patterns of `type`
// (sign-magnitude mapped onto a monotonic integer line).
COMMCERT_HD inline std::uint64_t ulp_distance(std::uint64_t a, std::uint64_t b, DataType type) {
  const int width = 8 * element_size(type);
  const std::uint64_t sign_bit = std::uint64_t{1} << (width - 1);
  const auto ordered = [&](std::uint64_t bits) -> std::int64_t {
    const auto magnitude = static_cast<std::int64_t>(bits & (sign_bit - 1));
    return (bits & sign_bit) ? -magnitude : magnitude;
  };
  const std::int64_t da = ordered(a & width_mask(type));
  const std::int64_t db = ordered(b & width_mask(type));
  return static_cast<std::uint64_t>(da > db ? da - db : db - da);
}

}  // namespace commcert
