#pragma once

#include <string>

#include "bench/p2p_engine.hpp"
#include "cli/command.hpp"
#include "cli/stage_flags.hpp"
#include "core/json.hpp"

namespace commcert {

// The --methods and --paths lists, parsed (UsageError naming `flag` for an unknown name).
[[nodiscard]] P2pSelection parse_p2p_selection(std::string_view methods, std::string_view paths);

// How a process takes part in p2p. Pairs need every GPU of the node in one process: with -g 0 and
// several processes on a host (a suite launched one rank per GPU), the host's first process
// drives them all and the others stand by, writing no records.
struct P2pRole {
  bool one_for_the_node = false;  // -g 0 with several processes on this host
  bool bystander = false;         // one of those processes, not the host's first
};
[[nodiscard]] P2pRole p2p_role(int gpus_per_process, int local_count, int local_index);

// `commcert p2p`: copy bandwidth and latency between the GPUs of a node (every ordered pair, copy
// engine and SM copy, write and read, one way and both ways), host<->GPU from the GPU's own NUMA
// node and another, and each GPU's copy within its own memory (docs/p2p.md).
class P2pCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "p2p"; }
  [[nodiscard]] std::string_view summary() const override {
    return "GPU<->GPU and host<->GPU bandwidth and latency inside a node";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;
  void check() const override { (void)resolve_settings(); }

  [[nodiscard]] P2pSettings resolve_settings() const;

 private:
  // meta.json's `parameters`: the settings in effect.
  [[nodiscard]] Json parameters(const P2pSettings& settings) const;

  struct RawFlags {
    std::string size = "256M";
    int copies = 8;
    std::string methods = "ce,sm,latency";
    std::string paths = "gpu_gpu,host_gpu,device_local";
    std::string chase_size = "128M";
    int chase_loads = 20000;
    std::string sysfs_root = "/sys";
  };
  RawFlags flags_;
  StageFlags stage_{StageFlagSpec("120", "Bound on any one wait for a GPU")
                        .with_iterations(5, 10000, "Timed samples per test (median kept)")
                        .with_warmup(1, 1000, "Untimed samples before them")
                        .with_gpus_per_process(0)};
};

}  // namespace commcert
