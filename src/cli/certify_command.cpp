#include "cli/certify_command.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "cli/history_options.hpp"
#include "cli/topology_option.hpp"
#include "core/errors.hpp"
#include "core/printable.hpp"
#include "core/records_file.hpp"
#include "pool/slurm_actions.hpp"
#include "pool/slurm_client.hpp"
#include "report/verdict_outputs.hpp"
#include "validate/baseline.hpp"
#include "validate/inputs.hpp"
#include "validate/suite.hpp"
#include "validate/suite_baseline_lookup.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

// The verdict restricted to the nodes asked about. A node asked about that has no evidence at
// all is inconclusive, not certified and not an error: it is how a node whose stages never ran
// looks from the inside (NHC mode).
FleetVerdict restrict_to(const FleetVerdict& verdict, const std::vector<std::string>& names) {
  if (names.empty()) return verdict;
  FleetVerdict shown = verdict;
  shown.nodes.clear();
  for (const auto& name : names) {
    const auto it = std::find_if(verdict.nodes.begin(), verdict.nodes.end(),
                                 [&](const NodeVerdict& n) { return n.node == name; });
    if (it != verdict.nodes.end()) {
      shown.nodes.push_back(*it);
      continue;
    }
    NodeVerdict absent;
    absent.node = name;
    Reason reason;
    const ReasonSpec& spec = reason_spec("evidence.missing");
    reason.code = std::string(spec.code);
    reason.effect = spec.effect;
    reason.severity = spec.severity;
    reason.check = "all";
    reason.rule = "rule.required_evidence";
    reason.message = render_template(
        spec.message, {{"check", "all checks"}, {"detail", " (no record names this node)"}});
    reason.action = std::string(spec.action);
    absent.reasons.push_back(std::move(reason));
    for (const auto& check : verdict.required)
      absent.checks.emplace_back(check, "inconclusive");
    shown.nodes.push_back(std::move(absent));
  }
  return shown;
}

NodeDecisionState decision_state(NodeState state) {
  switch (state) {
    case NodeState::kCertified:
      return NodeDecisionState::kCertified;
    case NodeState::kQuarantined:
      return NodeDecisionState::kQuarantined;
    case NodeState::kInconclusive:
      break;
  }
  return NodeDecisionState::kInconclusive;
}

// --apply slurm: drains the quarantined nodes of `shown` and resumes the certified ones commcert
// drained (pool/slurm_actions.hpp decides; pure). Runs after verdict.json is written, so a
// scheduler that cannot be reached loses nothing. Returns the exit status: the verdict's, or at
// least kError when Slurm could not be asked or an action failed.
int apply_to_slurm(const FleetVerdict& shown, bool dry_run, std::FILE* out, int status) {
  std::vector<NodeDecision> decisions;
  decisions.reserve(shown.nodes.size());
  for (const auto& node : shown.nodes) {
    NodeDecision decision{node.node, decision_state(node.state), {}};
    if (const Reason* first = node.first_reason()) decision.reason = first->message;
    decisions.push_back(std::move(decision));
  }
  std::map<std::string, SlurmNodeStatus> current;
  try {
    current = query_slurm_nodes();
  } catch (const RuntimeFailure& error) {
    fmt::print(stderr,
               "commcert certify: error: --apply slurm: {}; no node drained or resumed (the "
               "verdict is written)\n",
               error.what());
    return std::max(status, to_int(ExitCode::kError));
  }
  const auto applied = apply_slurm_actions(plan_slurm_actions(decisions, current), dry_run, out);
  const bool failed =
      std::any_of(applied.begin(), applied.end(), [](const AppliedAction& a) { return !a.ok; });
  return failed ? std::max(status, to_int(ExitCode::kError)) : status;
}

}  // namespace

void CertifyCommand::configure(CLI::App& app) {
  add_results_argument(app, flags_.inputs);
  add_baseline_option(app, flags_.baseline,
                      "Baseline YAML of the nodes' SKU, or a built-in one ({})")
      ->required();
  add_suite_option(app, flags_.suite,
                   "Suite YAML naming the required checks, or a built-in one ({}); default: the "
                   "baseline's");
  app.add_option("--verdict", flags_.verdict,
                 "Where to write verdict.json (default: in the first results directory)");
  add_report_options(app, flags_.report, "text");
  app.add_option("--node", flags_.nodes,
                 "Report (and set the exit status) for this node only; repeatable");
  CLI::Option* apply =
      app.add_option("--apply", flags_.apply,
                     "Act on the scheduler's pool: slurm = drain quarantined nodes, resume "
                     "certified nodes commcert drained (only the --node nodes when given)")
          ->check(CLI::IsMember({"slurm"}));
  app.add_flag("--dry-run", flags_.dry_run,
               "With --apply: print what would be drained or resumed, change nothing")
      ->needs(apply);
  app.add_flag("--allow-partial", flags_.allow_partial,
               "Judge runs that never finished (meta.json or suite.json still says running) "
               "instead of holding their nodes inconclusive; each node says so in its reasons");
  add_history_option(app, flags_.history,
                     "Add the judged run (one results directory) to this history database");
  add_topology_option(app, flags_.topology);
}

int CertifyCommand::run(Invocation& /*invocation*/) {
  // Everything that can be wrong with the command line is found before anything is written.
  const Baseline baseline = load_baseline_ref(flags_.baseline);
  const std::optional<Suite> suite =
      flags_.suite ? std::optional<Suite>(load_suite_ref(*flags_.suite)) : std::nullopt;
  const std::vector<VerdictOutput> outputs =
      plan_verdict_outputs(flags_.report.format, flags_.report.reports, "text");
  std::optional<Topology> topology = read_topology_option(flags_.topology);
  InputOptions input_options;
  input_options.allow_partial = flags_.allow_partial;
  GpuRecordLines gpu_lines;
  if (outputs_read_run(outputs)) input_options.on_record = gpu_lines.observer();
  LoadedInputs inputs = load_inputs(flags_.inputs, input_options);
  complete_topology_from_slurm(topology, inputs.notes);

  const FleetVerdict verdict = judge(inputs.evidence, baseline, suite ? &*suite : nullptr,
                                     std::move(inputs.notes), topology ? &*topology : nullptr);
  const std::filesystem::path verdict_path = flags_.verdict
                                                 ? std::filesystem::path(*flags_.verdict)
                                                 : inputs.first_directory / "verdict.json";
  try {
    write_json_file_atomically(verdict_path, to_json(verdict));
  } catch (const RuntimeFailure& error) {
    throw UsageError(fmt::format("{} (choose another place with --verdict)", error.what()));
  }

  const FleetVerdict shown = restrict_to(verdict, flags_.nodes);
  std::optional<RunDetails> details;
  if (outputs_read_run(outputs))
    details = collect_run_details(inputs.evidence, baseline, verdict, gpu_lines);
  const bool reported =
      write_reports(Report(shown, details ? &*details : nullptr), outputs, "commcert certify");
  // The path is the run directory's, named by whoever made it: escaped to stay one line.
  fmt::print(stderr, "commcert certify: verdict written to {}\n", printable(verdict_path.string()));
  // A report that could not be written is an I/O error, as a pool that could not be acted on.
  int status =
      reported ? shown.exit_status() : std::max(shown.exit_status(), to_int(ExitCode::kError));
  // Each input that is one run (a directory with records.jsonl) goes into the history as one
  // run; a results root or a loose records file is not a run and is left out.
  for (const auto& input : flags_.inputs) {
    if (!flags_.history ||
        !std::filesystem::is_regular_file(std::filesystem::path(input) / "records.jsonl"))
      continue;
    status = add_run_to_history(flags_.history, input, "commcert certify", status);
  }
  if (!flags_.apply) return status;
  // Action lines follow the text summary; other formats keep stdout machine-readable.
  const VerdictFormat* on_stdout = stdout_format(outputs);
  std::FILE* actions_out = on_stdout && on_stdout->name == "text" ? stdout : stderr;
  return apply_to_slurm(shown, flags_.dry_run, actions_out, status);
}

}  // namespace commcert
