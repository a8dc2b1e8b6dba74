#include "cli/run_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/history_options.hpp"
#include "cli/process_group.hpp"
#include "cli/stage_deadline.hpp"
#include "cli/stage_plan.hpp"
#include "cli/topology_option.hpp"
#include "comm/gpu_runtime.hpp"
#include "comm/mpi_session_loader.hpp"
#include "core/errors.hpp"
#include "core/printable.hpp"
#include "core/records_file.hpp"
#include "core/run_output.hpp"
#include "core/units.hpp"
#include "runtime/library_search.hpp"
#include "validate/bisect_localization.hpp"
#include "validate/inputs.hpp"
#include "validate/pair_localization.hpp"
#include "validate/suite_baseline_lookup.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using Clock = std::chrono::steady_clock;

// Re-test stages after a sweep of every pair: suspects against known-good nodes, then the slow
// pairs of the suspects that passed.
constexpr int kRetestPasses = 2;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The more serious of two stage exit statuses: ok < fail < error < timeout < usage.
int worse(int a, int b) {
  const auto rank = [](int code) {
    switch (code) {
      case 0:
        return 0;
      case 1:
        return 1;
      case 3:
        return 2;
      case 4:
        return 3;
      default:
        return 4;  // usage, or anything unknown
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

// suite.json: what `commcert run` did, stage by stage, kept current on disk by process 0 so a
// job that dies mid-suite still says how far it got (docs/suites.md).
class SuiteLog {
 public:
  SuiteLog(const Suite& suite, const Baseline& baseline, const RunOutput& output, bool writes)
      : path_(output.directory() / "suite.json"), writes_(writes) {
    doc_ = {{"suite", suite.name},       {"source", suite.path},
            {"baseline", baseline.sku},  {"baseline_source", baseline.path},
            {"run_id", output.run_id()}, {"status", "running"},
            {"stages", Json::array()}};
  }
  void stage(const SuiteStage& stage, const std::vector<std::string>& argv, std::string status,
             std::optional<int> exit_code, double elapsed_s, const std::string& note = {}) {
    std::lock_guard lock(mutex_);
    Json entry = {{"name", stage.name},
                  {"command", stage.command},
                  {"argv", argv},
                  {"budget_s", stage.budget_s},
                  {"required", stage.required},
                  {"status", std::move(status)},
                  {"exit_code", exit_code ? Json(*exit_code) : Json(nullptr)},
                  {"elapsed_s", elapsed_s}};
    if (!note.empty()) entry["note"] = note;
    Json& stages = doc_["stages"];
    if (!stages.empty() && stages.back()["name"] == stage.name) {
      stages.back() = std::move(entry);
    } else {
      stages.push_back(std::move(entry));
    }
    write_locked();
  }
  // What a localization did, for the record of the run (rounds, groups, outcome).
  void localization(Json entry) {
    std::lock_guard lock(mutex_);
    if (!doc_.contains("localization")) doc_["localization"] = Json::array();
    doc_["localization"].push_back(std::move(entry));
    write_locked();
  }
  // `reports`: what became of each --report file (docs/suites.md); null when none was asked for.
  void finish(std::string status, int exit_code, Json reports = nullptr) {
    std::lock_guard lock(mutex_);
    doc_["status"] = std::move(status);
    doc_["exit_code"] = exit_code;
    if (!reports.is_null()) doc_["reports"] = std::move(reports);
    write_locked();
  }

 private:
  void write_locked() {
    if (!writes_) return;
    try {
      write_json_file_atomically(path_, doc_);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "commcert run: %s\n", error.what());
    }
  }
  std::filesystem::path path_;
  bool writes_;
  std::mutex mutex_;
  Json doc_;
};

class SuiteRunner {
 public:
  SuiteRunner(const Suite& suite, const Baseline& baseline, const StageOptions& shared,
              ProcessGroup& group, RunOutput& output, std::vector<VerdictOutput> reports)
      : suite_(suite),
        baseline_(baseline),
        shared_(shared),
        group_(group),
        output_(output),
        reports_(std::move(reports)),
        log_(suite, baseline, output, group.process_index() == 0),
        start_(Clock::now()) {}

  // The topology read from --topology before anything ran; the verdict names switches with it.
  void use_topology(std::optional<Topology> topology) { topology_ = std::move(topology); }

  // Runs a stage on every process; returns the worst exit status any process had.
  int run_stage(const SuiteStage& stage, std::size_t index, std::size_t count,
                double remaining_budget_s) {
    const std::vector<std::string> argv = stage_argv(stage, shared_, output_.run_id());
    if (reporting()) {
      fmt::print(stderr,
                 "commcert run: [{}/{}] {}: {} (budget {}) · elapsed {} · at most {} left\n",
                 index + 1, count, printable(stage.name),
                 fmt::join(argv.begin() + 1, argv.end(), " "), format_duration(stage.budget_s),
                 format_duration(seconds_since(start_)), format_duration(remaining_budget_s));
    }
    log_.stage(stage, argv, "running", std::nullopt, 0);
    const auto stage_start = Clock::now();
    int status = 0;
    {
      StageDeadline deadline(stage.budget_s, [&] { budget_spent(stage, argv, stage_start); });
      status = execute(stage, argv);
      // Every process learns the worst outcome, inside the budget: a process stuck in the
      // stage's last operation cannot leave the others waiting here for ever.
      for (const auto& theirs : group_.control().all_gather(std::to_string(status))) {
        status = worse(status, std::stoi(theirs));
      }
    }
    const double elapsed = seconds_since(stage_start);
    log_.stage(stage, argv, status_word(status), status, elapsed);
    if (reporting()) {
      fmt::print(stderr, "commcert run: [{}/{}] {}: {} in {} (exit {})\n", index + 1, count,
                 printable(stage.name), status_word(status), format_duration(elapsed), status);
    }
    return status;
  }

  void skip_stage(const PlannedStage& planned, std::size_t index, std::size_t count) {
    log_.stage(planned.stage, planned.argv, "skipped", std::nullopt, 0, planned.skip_reason);
    if (reporting()) {
      fmt::print(stderr, "commcert run: [{}/{}] {}: skipped ({})\n", index + 1, count,
                 printable(planned.stage.name), planned.skip_reason);
    }
  }

  // After a cluster-scope sweep: does a figure fall short without naming a node? Process 0
  // judges what the run holds so far and every process learns the answer.
  bool needs_localization() {
    std::string answer = "no";
    if (reporting()) {
      try {
        LoadedInputs inputs = load_own_run();
        const FleetVerdict verdict =
            judge(inputs.evidence, baseline_, &suite_, std::move(inputs.notes));
        for (const auto& node : verdict.nodes) {
          for (const auto& reason : node.reasons) {
            if (reason.code == "perf.unattributed") answer = "yes";
          }
        }
      } catch (const std::exception& error) {
        fmt::print(stderr, "commcert run: cannot judge the cluster scope yet: {}\n", error.what());
      }
    }
    return group_.control().broadcast_from_root(answer) == "yes";
  }

  // After the pairs scope: the re-tests that suspects still need before they can be blamed,
  // "a:good,b:good" (empty: none), the same on every process.
  std::string retest_pairs() {
    std::string answer;
    if (reporting()) {
      try {
        const LoadedInputs inputs = load_own_run();
        for (const auto& [suspect, good] : localize_pairs(inputs.evidence, baseline_).retest_plan) {
          answer += fmt::format("{}{}:{}", answer.empty() ? "" : ",", suspect, good);
        }
      } catch (const std::exception& error) {
        fmt::print(stderr, "commcert run: cannot read the pairs: {}\n", error.what());
      }
    }
    return group_.control().broadcast_from_root(answer);
  }

  // Bisection after a cluster-scope shortfall (docs/localization.md): process 0 replays the
  // run's group records through the validator's bisection and names the next round of groups;
  // every process runs that round as a sweep stage, until the bisection has finished. Returns
  // true when it settled the shortfall (every culprit confirmed, the rest verified), false when
  // the pairs scope must decide.
  bool bisect(const SuiteStage& sweep, std::size_t index, std::size_t count,
              double remaining_budget_s) {
    int measured = -1;  // the last round run
    while (true) {
      const std::string next = next_bisection_step(measured);
      if (next == "conclusive") return true;
      if (!next.starts_with("round ")) return false;
      const std::size_t space = next.find(' ', 6);
      const int round = std::stoi(next.substr(6, space - 6));
      const std::string groups = next.substr(space + 1);
      const SuiteStage stage = bisection_stage_of(sweep, groups, round);
      if (reporting()) {
        fmt::print(stderr, "commcert run: bisection round {}: {}\n", round + 1, groups);
      }
      (void)run_stage(stage, index, count, remaining_budget_s + stage.budget_s);
      measured = round;
    }
  }

  // After a sweep of every pair: a suspect is re-tested against a node that passed every pair,
  // and a slow pair is measured once more, before anything is blamed (docs/localization.md). A
  // second pass measures again the slow pairs of a node the first pass cleared.
  void retest_suspects(const SuiteStage& pairs, std::size_t index, std::size_t count,
                       double remaining_budget_s) {
    std::string previous;
    for (int pass = 1; pass <= kRetestPasses; ++pass) {
      const std::string retests = retest_pairs();
      if (retests.empty() || retests == previous) return;
      previous = retests;
      SuiteStage retest = retest_stage_of(pairs, retests);
      if (pass > 1) retest.name += std::to_string(pass);
      if (reporting()) {
        fmt::print(stderr,
                   "commcert run: re-testing before blaming (suspects against known-good nodes, "
                   "slow pairs once more): {}\n",
                   retests);
      }
      (void)run_stage(retest, index, count, remaining_budget_s + retest.budget_s);
    }
  }

  // "round R a,b;c,d" (measure it next), "conclusive" or "inconclusive", the same on every
  // process. A round that was run and still is the next one gave no figures: stop there.
  std::string next_bisection_step(int measured) {
    std::string answer = "inconclusive";
    if (reporting()) {
      try {
        const LoadedInputs inputs = load_own_run();
        const Evidence& evidence = inputs.evidence;
        const auto run = std::find_if(evidence.runs.begin(), evidence.runs.end(), [&](auto& r) {
          return evidence.text(r.run_id) == output_.run_id();
        });
        if (run == evidence.runs.end()) throw std::runtime_error("the run has no records yet");
        const RunBisection bisection = replay_bisection(
            evidence, baseline_, static_cast<std::uint32_t>(run - evidence.runs.begin()));
        const int n = static_cast<int>(bisection.nodes.size());
        const int max_rounds = 4 * static_cast<int>(std::ceil(std::log2(std::max(n, 2)))) + 8;
        const int next = bisection.result.rounds;
        if (!bisection.problem.empty() || n < 2) {
          // Nothing to bisect; the summary says why.
        } else if (!bisection.result.finished() && next > measured && next < max_rounds) {
          answer = fmt::format("round {} {}", next, bisection.pending_spec());
        } else if (bisection.result.finished() && bisection.result.conclusive()) {
          answer = "conclusive";
        }
        if (!answer.starts_with("round ")) {
          const std::string summary = bisection.summary(evidence);
          fmt::print(stderr, "commcert run: {}\n", summary);
          Json groups = Json::array();
          for (const auto& round : bisection.result.history) {
            Json outcomes = Json::array();
            for (const auto& outcome : round) {
              std::vector<std::string> names;
              for (const int node : outcome.nodes)
                names.push_back(bisection.nodes.at(static_cast<std::size_t>(node)));
              outcomes.push_back({{"nodes", names}, {"passed", outcome.passed}});
            }
            groups.push_back(std::move(outcomes));
          }
          log_.localization({{"method", "bisect"},
                             {"rounds", bisection.result.rounds},
                             {"groups", std::move(groups)},
                             {"conclusive", answer == "conclusive"},
                             {"summary", summary}});
        }
      } catch (const std::exception& error) {
        fmt::print(stderr, "commcert run: cannot bisect: {}\n", error.what());
      }
    }
    return group_.control().broadcast_from_root(answer);
  }

  // Judges the whole run on process 0; every process returns the verdict's exit status.
  int certify(int worst_stage_status) {
    group_.control().barrier();
    int exit_code = 0;
    if (reporting()) {
      Judged judged = judge_run(worst_stage_status);
      exit_code = judged.exit_code;
      log_.finish(suite_outcome(exit_code), exit_code, std::move(judged.reports));
    }
    return std::stoi(group_.control().broadcast_from_root(std::to_string(exit_code)));
  }

  [[nodiscard]] bool reporting() const { return group_.process_index() == 0; }
  // suite.json's final status for the verdict's exit status.
  [[nodiscard]] static std::string suite_outcome(int exit_code) {
    return exit_code == 0 ? "certified" : status_word(exit_code);
  }
  [[nodiscard]] double elapsed_s() const { return seconds_since(start_); }

 private:
  // The results of this run so far: its suite.json says running until the verdict is written.
  // `on_record`: shown each record read (InputOptions::on_record).
  LoadedInputs load_own_run(RecordReader::RecordObserver on_record = {}) const {
    InputOptions options;
    options.own_run = true;
    options.on_record = std::move(on_record);
    return load_inputs({output_.directory().string()}, options);
  }

  int execute(const SuiteStage& stage, const std::vector<std::string>& argv) {
    try {
      ParsedStage parsed = parse_stage(stage, argv);
      std::vector<std::string> storage = argv;
      std::vector<char*> pointers;
      pointers.reserve(storage.size() + 1);
      for (auto& arg : storage)
        pointers.push_back(arg.data());
      pointers.push_back(nullptr);
      int argc = static_cast<int>(storage.size());
      char** argv_pointer = pointers.data();
      Invocation invocation{&argc, &argv_pointer, argv};
      return parsed.command->run(invocation);
    } catch (const UsageError& error) {
      if (reporting()) {
        fmt::print(stderr, "commcert run: stage '{}': error: {}\n", printable(stage.name),
                   printable(error.what()));
      }
      return exit_code_for_error(error);
    } catch (const ReportedFailure& error) {
      return exit_code_for_error(error);  // the failing rank said it and recorded it
    } catch (const std::exception& error) {
      fmt::print(stderr, "commcert run: stage '{}' on process {}: error: {}\n",
                 printable(stage.name), group_.process_index(), error.what());
      return exit_code_for_error(error);
    }
  }

  void budget_spent(const SuiteStage& stage, const std::vector<std::string>& argv,
                    Clock::time_point stage_start) {
    if (reporting()) {
      fmt::print(stderr,
                 "commcert run: stage '{}' used its budget of {}; ending the job. The records "
                 "written so far are in {}; judge them with `commcert certify`.\n",
                 printable(stage.name), format_duration(stage.budget_s),
                 output_.directory().string());
      log_.stage(stage, argv, "over_budget", to_int(ExitCode::kTimeout),
                 seconds_since(stage_start));
      log_.finish("over_budget", to_int(ExitCode::kTimeout));
    } else {
      // Let process 0 write before the job ends.
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    group_.control().abort_job(to_int(ExitCode::kTimeout));
  }

  // The verdict's exit status, and what became of each --report file.
  struct Judged {
    int exit_code = 0;
    Json reports = nullptr;  // null: no --report file was asked for
  };

  // suite.json's `reports`: each --report file with `status` ok, or error and the `reason`.
  [[nodiscard]] Json report_entries(const std::vector<VerdictOutputFailure>& failures) const {
    Json entries = Json::array();
    for (const auto& output : reports_) {
      if (!output.file) continue;
      Json entry = {{"format", output.format->name}, {"path", output.file->string()}};
      const auto failed = std::find_if(failures.begin(), failures.end(),
                                       [&](const auto& f) { return f.file == *output.file; });
      entry["status"] = failed == failures.end() ? "ok" : "error";
      if (failed != failures.end()) entry["reason"] = failed->message;
      entries.push_back(std::move(entry));
    }
    return entries.empty() ? Json(nullptr) : entries;
  }

  Judged judge_run(int worst_stage_status) {
    if (worst_stage_status == to_int(ExitCode::kUsage)) return {worst_stage_status};
    try {
      GpuRecordLines gpu_lines;
      LoadedInputs inputs = load_own_run(
          outputs_read_run(reports_) ? gpu_lines.observer() : RecordReader::RecordObserver());
      complete_topology_from_slurm(topology_, inputs.notes);
      const FleetVerdict verdict =
          judge(inputs.evidence, baseline_, &suite_, std::move(inputs.notes),
                topology_ ? &*topology_ : nullptr);
      const auto path = output_.directory() / "verdict.json";
      write_json_file_atomically(path, to_json(verdict));
      std::optional<RunDetails> details;
      if (outputs_read_run(reports_)) {
        details = collect_run_details(inputs.evidence, baseline_, verdict, gpu_lines);
        // suite.json says running until this verdict is out; the reports are read later, when
        // it says what the verdict made of the run.
        for (RunDescription& run : details->runs) {
          if (std::filesystem::path(run.directory) == output_.directory())
            run.status = suite_outcome(verdict.exit_status());
        }
      }
      const auto failures = write_reports_listing_failures(
          Report(verdict, details ? &*details : nullptr), reports_, "commcert run");
      fmt::print(stderr, "commcert run: verdict written to {} after {}\n", printable(path.string()),
                 format_duration(elapsed_s()));
      // The verdict is on disk and is the run's outcome: a report file that could not be written
      // is said on stderr and in suite.json's `reports`, and changes neither.
      return {verdict.exit_status(), report_entries(failures)};
    } catch (const std::exception& error) {
      fmt::print(stderr, "commcert run: no verdict: {}\n", error.what());
      return {to_int(ExitCode::kInconclusive)};
    }
  }

  const Suite& suite_;
  const Baseline& baseline_;
  const StageOptions& shared_;
  ProcessGroup& group_;
  RunOutput& output_;
  std::vector<VerdictOutput> reports_;
  SuiteLog log_;
  Clock::time_point start_;
  std::optional<Topology> topology_;  // --topology, or scontrol's when the verdict is judged
};

std::filesystem::path suite_directory(const Suite& suite) {
  const std::filesystem::path path(suite.path);
  return std::filesystem::exists(path) ? path.parent_path() : std::filesystem::path();
}

void print_plan(const Suite& suite, const Baseline& baseline,
                const std::vector<PlannedStage>& plan) {
  fmt::print("suite {} ({}), judged against {} ({})\n", printable(suite.name),
             printable(suite.path), printable(baseline.sku), baseline.path);
  double total = 0;
  for (const auto& planned : plan) {
    fmt::print("  {:<22} {:>8}  {}{}\n", printable(planned.stage.name),
               planned.skipped ? "-" : format_duration(planned.stage.budget_s),
               fmt::join(planned.argv.begin() + 1, planned.argv.end(), " "),
               planned.skipped ? fmt::format("  [skipped: {}]", planned.skip_reason) : "");
    // Localization adds the pairs scope and, when a suspect needs it, a re-test; a sweep of
    // every pair may add a re-test.
    const int times =
        (planned.stage.localize ? 2 : 1) +
        (planned.stage.localize || measures_all_pairs(planned.stage) ? kRetestPasses : 0);
    if (!planned.skipped) total += planned.stage.budget_s * times;
  }
  fmt::print("required checks: {}\n", fmt::join(required_checks(suite, baseline), ", "));
  fmt::print("at most {} (budgets, with localization where a stage has it)\n",
             format_duration(total));
  if (std::any_of(plan.begin(), plan.end(), [](const PlannedStage& planned) {
        return !planned.skipped && planned.stage.localize == "bisect";
      })) {
    fmt::print(
        "bisection adds up to about 2 log2 N rounds for N nodes, each within its stage's "
        "budget\n");
  }
}

// A stage that fell short without naming a node: bisect (when the suite says so), else or when
// that does not settle it, measure every node pair, then retest the suspects.
void localize(SuiteRunner& runner, const PlannedStage& planned, std::size_t index,
              std::size_t stages, double remaining) {
  if (*planned.stage.localize == "bisect") {
    if (runner.reporting()) {
      fmt::print(stderr,
                 "commcert run: '{}' fell short without naming a node: bisecting the nodes "
                 "in disjoint groups (about 2 log2 N rounds)\n",
                 printable(planned.stage.name));
    }
    if (runner.bisect(planned.stage, index, stages, remaining)) return;
    if (runner.reporting()) {
      fmt::print(stderr, "commcert run: the bisection did not settle it: the pairs decide\n");
    }
  }
  const SuiteStage pairs = pairs_stage_of(planned.stage);
  if (runner.reporting()) {
    fmt::print(stderr,
               "commcert run: '{}' fell short without naming a node: measuring every node "
               "pair (N-1 rounds for N nodes)\n",
               printable(planned.stage.name));
  }
  (void)runner.run_stage(pairs, index, stages, remaining + pairs.budget_s);
  runner.retest_suspects(pairs, index, stages, remaining);
}

// Every stage of the plan in order, localizing where a stage asks for it; the worst status.
int run_plan(SuiteRunner& runner, const std::vector<PlannedStage>& plan) {
  double remaining = 0;
  for (const auto& planned : plan) {
    if (!planned.skipped) remaining += planned.stage.budget_s;
  }
  int worst = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedStage& planned = plan[i];
    if (planned.skipped) {
      runner.skip_stage(planned, i, plan.size());
      continue;
    }
    const int status = runner.run_stage(planned.stage, i, plan.size(), remaining);
    remaining -= planned.stage.budget_s;
    worst = worse(worst, status);
    if (status == to_int(ExitCode::kUsage)) break;  // a stage refused its arguments: stop here
    if (planned.stage.localize && runner.needs_localization()) {
      localize(runner, planned, i, plan.size(), remaining);
    } else if (measures_all_pairs(planned.stage)) {
      runner.retest_suspects(planned.stage, i, plan.size(), remaining);
    }
  }
  return worst;
}

}  // namespace

void RunCommand::configure(CLI::App& app) {
  app.add_option("suite", flags_.suite,
                 fmt::format("Suite file or built-in suite ({})", embedded_suite_names()))
      ->required();
  add_baseline_option(app, flags_.baseline,
                      "Baseline file or built-in baseline ({}); default: the suite's");
  app.add_flag("--plan", flags_.plan_only, "Print the stages, budgets and checks; run nothing");
  add_report_options(app, flags_.report, "text");
  add_history_option(app, flags_.history,
                     "Add the run to this history database once it is judged (process 0)");
  add_stage_options(app, stage_);
  add_topology_option(app, flags_.topology);
}

int RunCommand::run(Invocation& invocation) {
  // Everything a suite or baseline can get wrong is found before any process starts work.
  Suite suite = load_suite_ref(flags_.suite);
  if (suite.stages.empty()) {
    throw UsageError(fmt::format("{}: the suite has no stages to run", suite.path));
  }
  // The only process on its node (one process per node on several nodes too) checks the whole
  // node; with several on a node, the launcher has given each its GPUs.
  if (launcher_local_process_count(process_environment()) == 1) {
    const int gpus = probe_gpu_runtime().device_count;
    for (auto& stage : suite.stages)
      stage = with_every_local_gpu(std::move(stage), 1, gpus);
  }
  const std::string baseline_ref = flags_.baseline.value_or(suite.baseline.value_or(""));
  if (baseline_ref.empty()) {
    throw UsageError(fmt::format(
        "suite '{}' names no baseline: pass --baseline with the nodes' SKU (built in: {})",
        suite.name, embedded_baseline_names()));
  }
  const Baseline baseline = load_baseline_ref(
      baseline_ref, flags_.baseline ? std::filesystem::path() : suite_directory(suite));
  validate_stage_options(stage_);
  // Checked on every process, as the suite is: a bad --report ends the job before any stage.
  std::vector<VerdictOutput> reports =
      plan_verdict_outputs(flags_.report.format, flags_.report.reports, "text");
  const std::vector<PlannedStage> plan = plan_stages(suite, baseline, stage_);
  std::optional<Topology> topology = read_topology_option(flags_.topology);
  if (flags_.plan_only) {
    if (launcher_rank_hint() == 0) print_plan(suite, baseline, plan);
    return to_int(ExitCode::kOk);
  }

  ProcessGroup group(invocation);
  const std::unique_ptr<RunOutput> output = [&] {
    const auto start_up = group.guard_start_up("agreeing on the run directory");
    return open_run_output(group.control(), stage_, "run");
  }();
  StageOptions shared = stage_;
  shared.run_id = output->run_id();
  SuiteRunner runner(suite, baseline, shared, group, *output, std::move(reports));
  runner.use_topology(std::move(topology));

  const int worst = run_plan(runner, plan);
  const int status = runner.certify(worst);
  if (!runner.reporting()) return status;
  return add_run_to_history(flags_.history, output->directory(), "commcert run", status);
}

}  // namespace commcert
