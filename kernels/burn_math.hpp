#pragma once

// Deterministic data of the burn: GEMM inputs, result fingerprints and the power kernel's
// arithmetic. Pure functions of (seed, index), identical on the host (tests, references) and in
// kernels, so every GPU of a model computes bit-identical results from identical inputs and a
// GPU that computes differently stands out.

#include <cmath>
#include <cstdint>

#include "kernels/host_device.hpp"

namespace commcert {

// MurmurHash3's 64-bit finaliser: every input bit affects every output bit.
COMMCERT_HD inline std::uint64_t burn_mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

COMMCERT_HD inline std::uint64_t burn_input_bits(std::uint64_t seed, unsigned matrix,
                                                 std::uint64_t index) {
  return burn_mix64(seed ^ burn_mix64((static_cast<std::uint64_t>(matrix) << 56) ^ (index + 1)));
}

// Element `index` of matrix `matrix` (0 = A, 1 = B): uniform in [-1, 1) with 24 random bits, so
// the low mantissa bits toggle (random data draws more power than small integers) and every
// product stays far from overflow in fp16, bf16 and fp8 e4m3.
COMMCERT_HD inline float burn_input_value(std::uint64_t seed, unsigned matrix,
                                          std::uint64_t index) {
  const auto bits24 = static_cast<std::int32_t>(burn_input_bits(seed, matrix, index) >> 40);
  return static_cast<float>(bits24) * (1.0f / 8388608.0f) - 1.0f;
}

// The fp64 burn uses 53 random bits for the same reason.
COMMCERT_HD inline double burn_input_value_f64(std::uint64_t seed, unsigned matrix,
                                               std::uint64_t index) {
  const auto bits53 = static_cast<std::int64_t>(burn_input_bits(seed, matrix, index) >> 11);
  return static_cast<double>(bits53) * (1.0 / 4503599627370496.0) - 1.0;
}

// One element's share of a buffer fingerprint. A fingerprint is the wrapping sum of the shares
// of all elements, so any summation order (atomics on the GPU, a loop on the host) gives the
// same value, and moving a value to another index changes it.
COMMCERT_HD inline std::uint64_t fingerprint_share(std::uint64_t index, std::uint64_t bits) {
  return burn_mix64(bits ^ burn_mix64(index + 0x9e3779b97f4a7c15ULL));
}

// Floating-point operations of one m x n x k GEMM (a multiply and an add per term).
COMMCERT_HD inline double gemm_flops(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// --- power_fma -----------------------------------------------------------------------------
// The power kernel rotates points (x, y) by a fixed angle with three shears, each exactly one
// fused multiply-add. A shear has determinant 1, so the rounded map neither spirals in nor out:
// values stay bounded for any number of steps while every mantissa bit keeps changing (a
// contracting map would settle on a fixed point and stop toggling). Each step is correctly
// rounded IEEE arithmetic, so the host reproduces a GPU thread's result bit for bit.

inline constexpr int kPowerFmaPairs = 4;        // independent chains per thread (ILP)
inline constexpr int kPowerFmaFmasPerStep = 3;  // per pair

struct PowerFmaShear {
  float minus_tan_half;  // -tan(theta / 2)
  float sin_theta;       // sin(theta)
};

struct PowerFmaShears {
  PowerFmaShear pair[kPowerFmaPairs];
};

// The rotation of pair p. Computed on the host once and passed to kernels, so device and host
// use identical constants whatever their libm.
inline PowerFmaShear power_fma_shear(int pair) {
  const double theta = 0.61803398874989484 + 0.1 * pair;
  return {static_cast<float>(-std::tan(theta / 2)), static_cast<float>(std::sin(theta))};
}

COMMCERT_HD inline void power_fma_step(float& x, float& y, PowerFmaShear shear) {
  x = fmaf(shear.minus_tan_half, y, x);
  y = fmaf(shear.sin_theta, x, y);
  x = fmaf(shear.minus_tan_half, y, x);
}

inline PowerFmaShears power_fma_shears() {
  PowerFmaShears shears{};
  for (int p = 0; p < kPowerFmaPairs; ++p)
    shears.pair[p] = power_fma_shear(p);
  return shears;
}

// Starting point of pair `pair` of thread `thread`, in the square [-1, 1)^2.
COMMCERT_HD inline void power_fma_start(std::uint64_t seed, std::uint64_t thread, int pair,
                                        float& x, float& y) {
  const std::uint64_t slot = thread * kPowerFmaPairs + static_cast<std::uint64_t>(pair);
  x = burn_input_value(seed, 2, slot);
  y = burn_input_value(seed, 3, slot);
}

// Floating-point operations of one power_fma launch.
COMMCERT_HD inline double power_fma_flops(std::uint64_t threads, std::uint64_t steps) {
  return 2.0 * kPowerFmaFmasPerStep * kPowerFmaPairs * static_cast<double>(threads) *
         static_cast<double>(steps);
}

}  // namespace commcert
