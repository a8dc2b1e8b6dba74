#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench/burn.hpp"
#include "cli/command.hpp"
#include "cli/stage_flags.hpp"
#include "core/json.hpp"

namespace commcert {

// `commcert burn`: tensor-core GEMM (or FMA power) load on every GPU at once, results checked
// bit for bit against the GPU's own first result and against same-model peers, TFLOP/s per
// window, NVML telemetry throughout (docs/gpu-stages.md).
class BurnCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "burn"; }
  [[nodiscard]] std::string_view summary() const override {
    return "GPU burn-in: GEMM or FMA load with bit-exact checks and telemetry";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;
  void check() const override;

  // Turns the raw flag values into settings; throws UsageError naming the flag.
  [[nodiscard]] BurnSettings resolve_settings() const;
  [[nodiscard]] double telemetry_interval_s() const;

 private:
  // meta.json's `parameters`: the settings in effect.
  [[nodiscard]] Json parameters(const BurnSettings& settings, double telemetry_interval_s) const;

  struct RawFlags {
    std::string duration = "60";
    std::string kernel = "gemm_bf16";
    std::uint64_t size = 8192;
    std::string window = "1s";
    int check_every = 0;
    std::string telemetry_interval = "100ms";
    std::string nvml_library = "libnvidia-ml.so.1";
    std::optional<std::uint64_t> seed;
  };
  RawFlags flags_;
  StageFlags stage_{one_gpu_stage_flag_spec().with_zero_timeout_note("a burn is always bounded")};
};

}  // namespace commcert
