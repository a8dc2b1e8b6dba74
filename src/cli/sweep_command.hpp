#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/sweep_options.hpp"
#include "cli/command.hpp"
#include "cli/run_setup.hpp"

namespace commcert {

// `commcert sweep <collective>... [flags]`: collective sweeps with nccl-tests' flags and table,
// plus records, per-rank timing, checks of every timed iteration and a timeout that is on.
class SweepCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "sweep"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Collective sweeps (nccl-tests flags and table) with per-rank evidence";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;
  void check() const override { (void)resolve_options(); }

  // Turns the raw flag values into SweepOptions; throws UsageError naming the flag.
  [[nodiscard]] SweepOptions resolve_options() const;

 private:
  [[nodiscard]] Json parameters_json(const SweepOptions& options) const;

  struct RawFlags {
    std::vector<std::string> collectives;
    std::string min_bytes = "32M";
    std::string max_bytes = "32M";
    std::string step_bytes = "1M";
    double step_factor = 1.0;
    int iterations = 20;
    int warmup = 1;
    int check = 1;
    std::string op = "sum";
    std::string datatype = "float";
    int root = 0;
    int blocking = 0;
    int average = 1;
    int cycles = 1;
    std::string timeout = "300";
    int graph_launches = 0;
    int gpus_per_process = 1;
    int threads = 1;
    std::optional<double> target_ci;
    std::string size_budget = "5";
    int max_iterations = 10000;
    std::string backend = "auto";
    std::string scope = "cluster";
    std::string pair_ranks = "one";
    std::string pair_list;
    std::optional<std::uint64_t> seed;
  };

  RawFlags flags_;
  StageOptions stage_;
  CLI::Option* iterations_option_ = nullptr;
  CLI::Option* scope_option_ = nullptr;
};

}  // namespace commcert
