#pragma once

#include <string>

#include "cli/command.hpp"
#include "cli/run_setup.hpp"
#include "health/node_health.hpp"

namespace commcert {

// `commcert health`: hardware state without load, one set of records per node: every GPU
// through NVML (loaded at run time), every InfiniBand/RoCE port from sysfs, and the node's
// GPU/NIC/NUMA placement (docs/gpu-stages.md).
class HealthCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "health"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Hardware health evidence: NVML (ECC, remaps, PCIe, NVLink, Xids), IB ports, topology";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;
  void check() const override { (void)resolve_options(); }

 private:
  struct RawFlags {
    std::string sysfs_root = "/sys";
    std::string nvml_library = "libnvidia-ml.so.1";
    std::string watch = "0";
    std::string timeout = "300";
  };
  struct Resolved {
    HealthOptions options;
    double timeout_s = 0;
  };
  // The raw flag values as options; throws UsageError naming the flag.
  [[nodiscard]] Resolved resolve_options() const;

  RawFlags flags_;
  StageOptions stage_;
};

}  // namespace commcert
