#include "cli/stage_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {
namespace {

// Set by `commcert run` for every stage: a suite that sets them would split the run.
constexpr std::string_view kRunOptions[] = {"--out", "--run-id", "--node-name"};

std::unique_ptr<Command> make_command(std::string_view name) {
  for (auto& command : make_commands()) {
    if (command->name() == name) return std::move(command);
  }
  throw UsageError(fmt::format("no stage command '{}'", name));
}

}  // namespace

std::vector<std::string> stage_argv(const SuiteStage& stage, const StageOptions& shared,
                                    const std::string& run_id) {
  std::vector<std::string> argv{"commcert", stage.command};
  argv.insert(argv.end(), stage.args.begin(), stage.args.end());
  argv.insert(argv.end(), {"--out", shared.results_root, "--run-id", run_id});
  if (shared.node_name) argv.insert(argv.end(), {"--node-name", *shared.node_name});
  if (shared.quiet) argv.emplace_back("-q");
  return argv;
}

ParsedStage parse_stage(const SuiteStage& stage, const std::vector<std::string>& argv) {
  for (const auto& arg : stage.args) {
    for (const auto option : kRunOptions) {
      if (arg == option || arg.starts_with(std::string(option) + "=")) {
        throw UsageError(fmt::format("{}: stage '{}': {} is set by `commcert run` for all stages",
                                     stage.args_source, stage.name, option));
      }
    }
  }
  ParsedStage parsed;
  parsed.command = make_command(stage.command);
  parsed.app = std::make_unique<CLI::App>(fmt::format("commcert {}", stage.command),
                                          std::string(stage.command));
  parsed.command->configure(*parsed.app);
  std::vector<std::string> reversed(argv.begin() + 2, argv.end());
  std::reverse(reversed.begin(), reversed.end());  // CLI11 takes the arguments back to front
  try {
    parsed.app->parse(reversed);
  } catch (const CLI::ParseError& error) {
    const std::string what = error.get_exit_code() == 0 ? "asks for help" : error.what();
    throw UsageError(
        fmt::format("{}: stage '{}' ({}): {}", stage.args_source, stage.name, stage.command, what));
  }
  try {
    parsed.command->check();
  } catch (const UsageError& error) {
    throw UsageError(fmt::format("{}: stage '{}' ({}): {}", stage.args_source, stage.name,
                                 stage.command, error.what()));
  }
  return parsed;
}

std::vector<PlannedStage> plan_stages(const Suite& suite, const Baseline& baseline,
                                      const StageOptions& shared) {
  std::vector<PlannedStage> plan;
  for (const auto& stage : suite.stages) {
    PlannedStage planned{stage, stage_argv(stage, shared, "planned"), false, {}};
    (void)parse_stage(stage, planned.argv);  // every stage's flags, before anything runs
    if (stage.localize) {
      // Bisection falls back to the pairs scope: both must take the stage's flags.
      const SuiteStage pairs = pairs_stage_of(stage);
      (void)parse_stage(pairs, stage_argv(pairs, shared, "planned"));
      if (*stage.localize == "bisect") {
        const SuiteStage groups = bisection_stage_of(stage, "a,b;c,d", 0);
        (void)parse_stage(groups, stage_argv(groups, shared, "planned"));
      }
    }
    if (auto reason = stage_skip_reason(stage, baseline)) {
      planned.skipped = true;
      planned.skip_reason = std::move(*reason);
    }
    plan.push_back(std::move(planned));
  }
  return plan;
}

namespace {

bool names_option(const std::vector<std::string>& args, std::string_view short_name,
                  std::string_view long_name) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
    return arg == short_name || arg == long_name || arg.starts_with(std::string(long_name) + "=") ||
           (arg.size() > short_name.size() && arg.starts_with(short_name));  // -g2
  });
}

}  // namespace

SuiteStage with_every_local_gpu(SuiteStage stage, int processes, int visible_gpus) {
  if (processes != 1 || visible_gpus < 1 || names_option(stage.args, "-g", "--ngpus")) return stage;
  if (stage.command == "burn" || stage.command == "membw") {
    stage.args.insert(stage.args.end(), {"-g", "0"});
  } else if (stage.command == "sweep" && stage_option_value(stage.args, "--backend") != "mpi") {
    stage.args.insert(stage.args.end(), {"-g", std::to_string(visible_gpus)});
  }
  return stage;
}

namespace {

// The sweep stage in another scope, judged by localization rather than by coverage.
SuiteStage rescoped(const SuiteStage& sweep, std::string name, const std::string& scope) {
  SuiteStage out = sweep;
  out.name = std::move(name);
  out.localize.reset();
  out.required = false;
  bool replaced = false;
  for (std::size_t i = 0; i < out.args.size(); ++i) {
    if (out.args[i] == "--scope" && i + 1 < out.args.size()) {
      out.args[i + 1] = scope;
      replaced = true;
    } else if (out.args[i].starts_with("--scope=")) {
      out.args[i] = "--scope=" + scope;
      replaced = true;
    }
  }
  if (!replaced) out.args.insert(out.args.end(), {"--scope", scope});
  return out;
}

}  // namespace

SuiteStage pairs_stage_of(const SuiteStage& sweep) {
  return rescoped(sweep, sweep.name + "-pairs", "pairs");
}

SuiteStage bisection_stage_of(const SuiteStage& sweep, const std::string& groups, int round) {
  SuiteStage stage = rescoped(sweep, fmt::format("{}-bisect{}", sweep.name, round + 1), "groups");
  stage.args.insert(stage.args.end(),
                    {"--groups", groups, "--groups-round", std::to_string(round)});
  return stage;
}

bool measures_all_pairs(const SuiteStage& stage) {
  if (stage.command != "sweep") return false;
  bool pairs = false;
  for (std::size_t i = 0; i < stage.args.size(); ++i) {
    const std::string& arg = stage.args[i];
    if (arg == "--pair-list" || arg.starts_with("--pair-list=")) return false;
    if (arg == "--scope" && i + 1 < stage.args.size()) pairs = stage.args[i + 1] == "pairs";
    if (arg.starts_with("--scope=")) pairs = arg == "--scope=pairs";
  }
  return pairs;
}

SuiteStage retest_stage_of(const SuiteStage& pairs, const std::string& pair_list) {
  SuiteStage retest = pairs;
  retest.name = pairs.name + "-retest";
  retest.args.insert(retest.args.end(), {"--pair-list", pair_list});
  return retest;
}

}  // namespace commcert
