#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench/membw.hpp"
#include "cli/command.hpp"
#include "cli/stage_flags.hpp"
#include "core/json.hpp"

namespace commcert {

// `commcert membw`: HBM read/write/copy bandwidth against the datasheet and cudaMemcpy, a
// pattern test over most of device memory, and pinned host<->device bandwidth from the GPU's
// NUMA node (docs/gpu-stages.md).
class MembwCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "membw"; }
  [[nodiscard]] std::string_view summary() const override {
    return "GPU memory bandwidth, memory integrity patterns and host<->device bandwidth";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;
  void check() const override { (void)resolve_settings(); }

  [[nodiscard]] MembwSettings resolve_settings() const;

 private:
  // meta.json's `parameters`: the settings in effect.
  [[nodiscard]] Json parameters(const MembwSettings& settings) const;

  struct RawFlags {
    std::string buffer_size = "1G";
    double memtest_fraction = 0.9;
    std::string host_size = "256M";
    std::string sysfs_root = "/sys";
    std::optional<std::uint64_t> seed;
  };
  RawFlags flags_;
  StageFlags stage_{one_gpu_stage_flag_spec().with_iterations(
      20, 100000, "Timed samples per measurement (median kept)")};
};

}  // namespace commcert
