#pragma once

#include <string>

#include "bench/p2p_engine.hpp"
#include "cli/command.hpp"
#include "cli/run_setup.hpp"

namespace commcert {

// The --methods and --paths lists, parsed (UsageError naming `flag` for an unknown name).
[[nodiscard]] P2pSelection parse_p2p_selection(std::string_view methods, std::string_view paths);

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
  struct RawFlags {
    std::string size = "256M";
    int copies = 8;
    int iterations = 5;
    int warmup = 1;
    std::string methods = "ce,sm,latency";
    std::string paths = "gpu_gpu,host_gpu,device_local";
    std::string chase_size = "128M";
    int chase_loads = 20000;
    int gpus_per_process = 0;
    std::string timeout = "120";
    std::string sysfs_root = "/sys";
  };
  RawFlags flags_;
  StageOptions stage_;
};

}  // namespace commcert
