#pragma once

#include <optional>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "cli/run_setup.hpp"

namespace commcert {

// A count flag of a stage: -n/--iterations (at least 1) or -w/--warmup (at least 0).
struct CountFlagSpec {
  int value = 0;  // the default
  int max = 0;    // the largest value accepted
  std::string help;
};

// Which of the flags stages share a stage has, and its defaults and help lines. Every stage has
// -T/--timeout and the run-output flags (--out, --run-id, --node-name, -q); -n, -w and -g are
// added by the with_* calls:
//   StageFlagSpec("120", "Bound on any one wait for a GPU").with_gpus_per_process(0)
struct StageFlagSpec {
  // -T/--timeout's default (a duration: 90, 90s, 10m) and what it bounds.
  StageFlagSpec(std::string timeout_default, std::string timeout_bounds)
      : timeout(std::move(timeout_default)), timeout_help(std::move(timeout_bounds)) {}
  StageFlagSpec&& with_iterations(int value, int max, std::string help) && {
    iterations = CountFlagSpec{value, max, std::move(help)};
    return std::move(*this);
  }
  StageFlagSpec&& with_warmup(int value, int max, std::string help) && {
    warmup = CountFlagSpec{value, max, std::move(help)};
    return std::move(*this);
  }
  StageFlagSpec&& with_gpus_per_process(int value) && {
    gpus_per_process = value;
    return std::move(*this);
  }
  StageFlagSpec&& with_zero_timeout_note(std::string note) && {
    zero_timeout_note = std::move(note);
    return std::move(*this);
  }

  std::string timeout;
  std::string timeout_help;
  // Appended to "-T/--timeout: must be longer than 0 s" (burn: why a burn is always bounded).
  std::string zero_timeout_note;
  std::optional<CountFlagSpec> iterations;  // -n/--iterations
  std::optional<CountFlagSpec> warmup;      // -w/--warmup
  std::optional<int> gpus_per_process;      // -g/--ngpus's default; nullopt: no -g
};

// The GPU stages that drive one GPU per process (burn, membw): -g 1, and -T bounding any one wait
// for a GPU or a peer process, five minutes unless set.
[[nodiscard]] inline StageFlagSpec one_gpu_stage_flag_spec() {
  return StageFlagSpec("300", "Bound on any one wait for a GPU or a peer process")
      .with_gpus_per_process(1);
}

// The values of the flags stages share, declared on a stage's CLI11 app by one call (add_to) so
// each flag reads the same in every stage. A stage's other flags stay its own.
class StageFlags {
 public:
  explicit StageFlags(StageFlagSpec spec);
  // CLI11 holds references to the members.
  StageFlags(const StageFlags&) = delete;
  StageFlags& operator=(const StageFlags&) = delete;

  // Declares -n, -w and -g (those the spec names), -T (env COMMCERT_TIMEOUT), then --out,
  // --run-id, --node-name and -q (add_stage_options). A value out of a flag's range is a CLI11
  // parse error naming the flag.
  void add_to(CLI::App& app);

  [[nodiscard]] int iterations() const { return iterations_; }
  [[nodiscard]] int warmup() const { return warmup_; }
  [[nodiscard]] int gpus_per_process() const { return gpus_per_process_; }
  // -T in seconds; UsageError naming -T/--timeout for a value that is no duration or is not
  // longer than 0 s.
  [[nodiscard]] double timeout_s() const;
  // --out, --run-id, --node-name and -q.
  [[nodiscard]] const StageOptions& output() const { return output_; }
  // Rejects a bad run id or node name before anything starts (validate_stage_options).
  void validate_output() const;

 private:
  StageFlagSpec spec_;
  int iterations_ = 0;
  int warmup_ = 0;
  int gpus_per_process_ = 0;
  std::string timeout_;
  StageOptions output_;
};

}  // namespace commcert
