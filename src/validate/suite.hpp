#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

struct Baseline;

// One step of a suite: a commcert stage command and its arguments, run by `commcert run`.
struct SuiteStage {
  std::string name;               // unique within the suite, for progress and suite.json
  std::string command;            // health, burn, membw, sweep, links or p2p
  std::vector<std::string> args;  // the command's own flags, as on its command line
  double budget_s = 0;            // wall-clock bound of the stage
  bool required = true;           // its checks are required for certification
  bool needs_gpu = false;         // burn, membw, p2p: not run against a 0-GPU baseline
  // On a cluster-scope shortfall: "pairs" reruns the stage in pairs, "bisect" in node groups
  // round by round (falling back to pairs when bisection does not settle it).
  std::optional<std::string> localize;
  std::string source;       // "file:line" of the stage, for errors about its arguments
  std::string args_source;  // "file:line" of its args
};

// A suite file (docs/suites.md). The validator needs only which checks the suite ran; the stage
// runner (`commcert run`) needs the stages, their budgets and the baseline to judge against.
struct Suite {
  std::string path;
  std::string name;
  std::string description;
  std::optional<std::string> baseline;  // an embedded baseline's name or a path
  std::vector<std::string> required;    // check ids listed explicitly
  std::vector<SuiteStage> stages;
};

// The most stages one suite may have. The shipped suites have 1 to 10; a suite is run in one job,
// and a thousand stages of the shortest useful budget is already longer than a maintenance
// window. A file beyond it is a generator gone wrong, and is refused before planning.
inline constexpr std::size_t kMaxSuiteStages = 1000;

// Throws UsageError "FILE:LINE:COLUMN: key: problem".
[[nodiscard]] Suite load_suite(const std::filesystem::path& path);
[[nodiscard]] Suite parse_suite(std::string_view text, std::string_view origin);

// The value a stage's arguments give an option (`--name value` or `--name=value`), or "".
[[nodiscard]] std::string stage_option_value(const std::vector<std::string>& args,
                                             std::string_view name);

// Why a stage does not run under this baseline, or nothing: a GPU stage (burn, membw, p2p, links
// with `--mem gpu`) under 0 GPUs per node, links over `--transport verbs` under 0 RDMA ports per
// node. The suite's arguments decide; an unset count is not zero (the stage runs).
[[nodiscard]] std::optional<std::string> stage_skip_reason(const SuiteStage& stage,
                                                           const Baseline& baseline);

// The checks a stage produces evidence for, as far as the baseline says the node has the parts:
// a baseline of 0 GPUs per node needs no GPU evidence, one without InfiniBand ports no port
// evidence. An unset count is not zero: the evidence is required (fail closed).
[[nodiscard]] std::vector<std::string> stage_checks(const SuiteStage& stage,
                                                    const Baseline& baseline);

// What a node needs positive evidence for under this suite and baseline: the suite's explicit
// list plus the checks of its required stages, in check order.
[[nodiscard]] std::vector<std::string> required_checks(const Suite& suite,
                                                       const Baseline& baseline);

}  // namespace commcert
