#include "validate/suite.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "validate/baseline.hpp"
#include "validate/checks.hpp"
#include "validate/detail/yaml_input.hpp"

namespace commcert {
namespace {

struct StageCommand {
  std::string_view name;
  bool needs_gpu;
};

// The stage commands a suite may run; burn and membw have nothing to do without a GPU.
constexpr StageCommand kStageCommands[] = {{"health", false}, {"burn", true},   {"membw", true},
                                           {"sweep", false},  {"links", false}, {"p2p", true}};

const StageCommand* find_stage_command(std::string_view name) {
  for (const auto& command : kStageCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

SuiteStage parse_stage(const detail::YamlInput& in, const YAML::Node& node,
                       const std::string& path) {
  in.expect_map(node, path);
  in.allow_keys(node, path, {"name", "run", "args", "budget", "required", "localize"});
  SuiteStage stage;
  stage.source = in.where(node);
  if (!node["run"])
    in.fail(node, detail::join_path(path, "run"),
            "missing: health, burn, membw, sweep, links or p2p");
  stage.command = in.string(node["run"], detail::join_path(path, "run"));
  const StageCommand* command = find_stage_command(stage.command);
  if (!command) {
    in.fail(node["run"], detail::join_path(path, "run"),
            fmt::format("unknown stage '{}' (health, burn, membw, sweep, links or p2p)",
                        stage.command));
  }
  stage.needs_gpu = command->needs_gpu;
  stage.name =
      node["name"] ? in.string(node["name"], detail::join_path(path, "name")) : stage.command;
  if (node["args"]) {
    stage.args = in.strings(node["args"], detail::join_path(path, "args"));
    stage.args_source = in.where(node["args"]);
  } else {
    stage.args_source = stage.source;
  }
  if (!node["budget"])
    in.fail(node, detail::join_path(path, "budget"),
            "missing: every stage is bounded (e.g. 90s, 5m)");
  const std::string budget = in.string(node["budget"], detail::join_path(path, "budget"));
  try {
    stage.budget_s = parse_duration_seconds(budget, "budget");
  } catch (const UsageError& error) {
    in.fail(node["budget"], detail::join_path(path, "budget"), error.what());
  }
  if (!(stage.budget_s > 0))
    in.fail(node["budget"], detail::join_path(path, "budget"), "must be longer than 0 s");
  if (node["required"])
    stage.required = in.boolean(node["required"], detail::join_path(path, "required"));
  if (node["localize"]) {
    stage.localize = in.string(node["localize"], detail::join_path(path, "localize"));
    if (*stage.localize != "pairs" && *stage.localize != "bisect") {
      in.fail(node["localize"], detail::join_path(path, "localize"),
              "'pairs' or 'bisect' (docs/localization.md)");
    }
    if (stage.command != "sweep") {
      in.fail(node["localize"], detail::join_path(path, "localize"),
              "only a sweep stage localizes");
    }
  }
  return stage;
}

// "all_reduce_perf", "all_reduce" and "allreduce" name the same collective (as `sweep` reads them).
std::string collective_name(std::string_view token) {
  std::string name(token);
  if (name.ends_with("_perf")) name.resize(name.size() - 5);
  std::erase(name, '_');
  return name;
}

void add_unique(std::vector<std::string>& list, std::string_view id) {
  if (std::find(list.begin(), list.end(), id) == list.end()) list.emplace_back(id);
}

}  // namespace

Suite parse_suite(std::string_view text, std::string_view origin) {
  const detail::YamlInput in{std::string(origin)};
  const YAML::Node root = in.load(text);
  if (!root.IsDefined() || root.IsNull())
    throw UsageError(fmt::format("{}: the suite is empty", origin));
  in.expect_map(root, "(document)");
  in.allow_keys(root, "", {"schema", "name", "description", "baseline", "required", "stages"});
  if (!root["schema"] || in.integer(root["schema"], "schema") != 1) {
    in.fail(root["schema"] ? root["schema"] : root, "schema", "this commcert reads suite schema 1");
  }
  Suite suite;
  suite.path = std::string(origin);
  if (!root["name"]) in.fail(root, "name", "missing");
  suite.name = in.string(root["name"], "name");
  if (root["description"]) suite.description = in.string(root["description"], "description");
  if (root["baseline"]) suite.baseline = in.string(root["baseline"], "baseline");
  if (root["required"]) {
    suite.required = in.strings(root["required"], "required");
    for (std::size_t i = 0; i < suite.required.size(); ++i) {
      if (!find_check(suite.required[i])) {
        in.fail(root["required"][i], fmt::format("required[{}]", i),
                fmt::format("unknown check '{}'", suite.required[i]));
      }
    }
  }
  if (root["stages"]) {
    const YAML::Node stages = root["stages"];
    if (!stages.IsSequence()) in.fail(stages, "stages", "expected a list of stages");
    if (stages.size() > kMaxSuiteStages) {
      in.fail(stages, "stages",
              fmt::format("{} stages, more than the {} a suite may have", stages.size(),
                          kMaxSuiteStages));
    }
    // A set, not a scan of the earlier stages: the check stays linear in the number of stages.
    std::unordered_set<std::string> names;
    std::optional<std::string> bisecting;  // the stage that bisects, at most one
    for (std::size_t i = 0; i < stages.size(); ++i) {
      SuiteStage stage = parse_stage(in, stages[i], fmt::format("stages[{}]", i));
      if (!names.insert(stage.name).second) {
        in.fail(stages[i], fmt::format("stages[{}].name", i),
                fmt::format("'{}' names two stages (give each a name)", stage.name));
      }
      // A run's bisection is replayed from all of its group records: a second bisecting stage
      // would be judged on the first one's groups too.
      if (stage.localize == "bisect" && bisecting) {
        in.fail(stages[i]["localize"], fmt::format("stages[{}].localize", i),
                fmt::format("a run bisects once, and stage '{}' already does: use `localize: "
                            "pairs` here, or another run",
                            *bisecting));
      }
      if (stage.localize == "bisect") bisecting = stage.name;
      suite.stages.push_back(std::move(stage));
    }
  }
  if (suite.required.empty() && std::none_of(suite.stages.begin(), suite.stages.end(),
                                             [](const SuiteStage& s) { return s.required; })) {
    in.fail(root, "required",
            "the suite requires nothing: list checks under `required` or mark a stage required "
            "(an empty list certifies nothing)");
  }
  return suite;
}

Suite load_suite(const std::filesystem::path& path) {
  return parse_suite(read_bounded_file(path, kMaxYamlFileBytes, "suite"), path.string());
}

std::string stage_option_value(const std::vector<std::string>& args, std::string_view name) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) return args[i + 1];
    if (args[i].starts_with(std::string(name) + "=")) return args[i].substr(name.size() + 1);
  }
  return {};
}

std::optional<std::string> stage_skip_reason(const SuiteStage& stage, const Baseline& baseline) {
  const bool gpu_memory =
      stage.command == "links" && stage_option_value(stage.args, "--mem") == "gpu";
  if ((stage.needs_gpu || gpu_memory) && baseline.gpus_per_node == 0)
    return fmt::format("baseline {} has no GPUs per node", baseline.sku);
  if (stage.command == "links" && stage_option_value(stage.args, "--transport") == "verbs" &&
      baseline.ib_ports_per_node == 0) {
    return fmt::format("baseline {} has no RDMA ports per node (links --transport verbs)",
                       baseline.sku);
  }
  return std::nullopt;
}

std::vector<std::string> stage_checks(const SuiteStage& stage, const Baseline& baseline) {
  const bool no_gpus = baseline.gpus_per_node == 0;
  const bool no_ib = baseline.ib_ports_per_node == 0;
  std::vector<std::string> checks;
  if (stage_skip_reason(stage, baseline)) return checks;  // a skipped stage requires nothing
  if (stage.command == "health") {
    checks.emplace_back("health.node");
    if (!no_gpus) checks.emplace_back("health.gpu");
    if (!no_ib) checks.emplace_back("health.ib");
  } else if (stage.command == "burn" || stage.command == "membw" || stage.command == "p2p") {
    if (!no_gpus) checks.push_back(stage.command);
  } else if (stage.command == "links") {
    checks.emplace_back("links");
  } else if (stage.command == "sweep") {
    for (const auto& token : stage.args) {
      if (token.starts_with('-')) continue;
      if (token == "all") {
        for (const auto& check : all_checks()) {
          if (check.kind == CheckKind::kCollective) add_unique(checks, check.id);
        }
        continue;
      }
      const std::string id = "collective." + collective_name(token);
      if (find_check(id)) add_unique(checks, id);
    }
  }
  return checks;
}

std::vector<std::string> required_checks(const Suite& suite, const Baseline& baseline) {
  std::vector<std::string> required = suite.required;
  for (const auto& stage : suite.stages) {
    if (!stage.required) continue;
    for (const auto& check : stage_checks(stage, baseline))
      add_unique(required, check);
  }
  std::stable_sort(required.begin(), required.end(),
                   [](const auto& a, const auto& b) { return check_order(a) < check_order(b); });
  return required;
}

}  // namespace commcert
