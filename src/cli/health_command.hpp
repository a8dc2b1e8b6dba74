#pragma once

#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/stage_flags.hpp"
#include "core/json.hpp"
#include "health/node_health.hpp"

namespace commcert {

class StageSession;

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
  };
  struct Resolved {
    HealthOptions options;
    double timeout_s = 0;
  };
  // The raw flag values as options; throws UsageError naming the flag.
  [[nodiscard]] Resolved resolve_options() const;
  // This node's health records (from the process that speaks for the node), progress and a
  // summary on stderr.
  [[nodiscard]] std::vector<Json> node_records(StageSession& session,
                                               const HealthOptions& options) const;

  RawFlags flags_;
  StageFlags stage_{StageFlagSpec("300", "Bound on any one wait for a peer process")};
};

}  // namespace commcert
