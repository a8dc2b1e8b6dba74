#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/collective_record.hpp"
#include "bench/sweep_options.hpp"
#include "cli/command.hpp"
#include "cli/run_setup.hpp"
#include "comm/communicator.hpp"
#include "comm/watchdog.hpp"
#include "core/rank_identity.hpp"
#include "core/run_output.hpp"

namespace commcert {

// What a sweep does when its watchdog declares a timeout, on the watchdog's thread, in the
// order nccl-tests uses: the timeout line on stderr and, on the reporting process, the `timeout`
// record and meta.json; only then are the communicators aborted, by the thread that drives them
// (asked through request_abort: that thread may be polling them at this very moment), waiting
// at most `abort_wait_seconds` for it. The watchdog ends the job when report() returns, whether
// the abort happened or not.
class SweepTimeoutHandler {
 public:
  // `reporter_head_start_seconds`: how long a process that does not report waits before asking
  // for its abort, so the reporter's record is on disk before any communicator goes away (a
  // peer's abort surfaces as an error on the others).
  SweepTimeoutHandler(double abort_wait_seconds, double reporter_head_start_seconds)
      : abort_wait_seconds_(abort_wait_seconds),
        reporter_head_start_seconds_(reporter_head_start_seconds) {}

  // Set-up fills these in as it goes; before arm() a timeout is reported on stderr only.
  void set_communicator(Communicator* communicator);
  void arm(RunOutput* output, const CollectiveRecordContext& context,
           const std::vector<RankIdentity>* ranks);
  void report(const TimeoutReport& report);

 private:
  std::mutex mutex_;
  double abort_wait_seconds_;
  double reporter_head_start_seconds_;
  Communicator* communicator_ = nullptr;
  RunOutput* output_ = nullptr;
  CollectiveRecordContext context_;
  const std::vector<RankIdentity>* ranks_ = nullptr;
};

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
  // --backend, --seed and where the ranks run: --scope, --pair-list, --pair-ranks, --groups.
  void add_placement_options(CLI::App& app);

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
    std::string groups;
    int groups_round = 0;
    std::optional<std::uint64_t> seed;
  };

  RawFlags flags_;
  StageOptions stage_;
  CLI::Option* iterations_option_ = nullptr;
  CLI::Option* scope_option_ = nullptr;
};

}  // namespace commcert
