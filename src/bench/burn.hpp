#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peer_compare.hpp"
#include "core/json.hpp"
#include "core/record.hpp"
#include "records/burn.hpp"

namespace commcert {

// What the burn runs (docs/gpu-stages.md). Ids are the record's `kernel` values.
enum class BurnKernel { kGemmBf16, kGemmFp16, kGemmTf32, kGemmFp8, kGemmFp64, kPowerFma };

[[nodiscard]] std::string_view burn_kernel_name(BurnKernel kernel);
// Throws UsageError naming `flag` for an unknown id.
[[nodiscard]] BurnKernel parse_burn_kernel(std::string_view text, std::string_view flag);
// The GEMM's element type as the record names it ("bf16", "fp8_e4m3", ...); empty for power_fma.
[[nodiscard]] std::string_view burn_matrix_dtype(BurnKernel kernel);
// Lowest compute capability (major * 10 + minor) with tensor cores for the kernel.
[[nodiscard]] int burn_min_compute_capability(BurnKernel kernel);

struct BurnSettings {
  BurnKernel kernel = BurnKernel::kGemmBf16;
  std::uint64_t size = 8192;  // m = n = k
  double duration_s = 60;
  double window_s = 1.0;  // TFLOP/s is measured per window
  int check_every = 0;    // launches between result checks; 0 = once per window
  std::uint64_t seed = 0x6275726eULL;
  double timeout_s = 300;  // bound on any one wait for a GPU
};

// How a window's launches are split so that result checks run between timed spans, never inside
// one: each element is one span's launch count, and a check follows every span. Only GEMM flops
// are counted, so a check inside the timed span would read as a slower GPU (6-9 % at
// --check-every 1 for 8192^3 bf16). `check_every` 0 is one span per window.
[[nodiscard]] std::vector<std::uint64_t> burn_window_spans(std::uint64_t launches_per_window,
                                                           int check_every);

// What one GPU did during the burn.
struct BurnOutcome {
  RecordStatus status = RecordStatus::kOk;  // kOk: measured (fail is decided with peers)
  std::string reason;
  GpuIdentity gpu;
  std::string model;  // name and SM count: what must match for bit-identical results
  int compute_capability = 0;
  bool measured = false;  // the burn ran (possibly cut short by a timeout)
  double duration_s = 0;
  std::uint64_t iterations = 0;
  std::vector<double> window_tflops;
  std::vector<double> window_end_s;  // when each window ended, since the burn started
  std::uint64_t miscompares = 0;
  std::uint64_t checked_results = 0;
  std::optional<std::uint64_t> fingerprint;  // of the first result, for peer comparison
  Json telemetry = nullptr;
  Json timeline = nullptr;  // health/telemetry_timeline.hpp
};

// What a GPU that ran the burn puts in its record (records/burn.hpp).
[[nodiscard]] BurnMeasurement burn_measurement(const BurnSettings& settings,
                                               const BurnOutcome& outcome, const PeerVerdict& peers,
                                               std::optional<double> datasheet_peak_tflops);

// ok / fail (miscompares or a peer mismatch) / the outcome's own error, timeout or skip.
[[nodiscard]] RecordStatus burn_status(const BurnOutcome& outcome, const PeerVerdict& peers);
// The record's `reason` for a status other than ok.
[[nodiscard]] std::string burn_reason(const BurnOutcome& outcome, const PeerVerdict& peers,
                                      const std::string& node);

}  // namespace commcert
