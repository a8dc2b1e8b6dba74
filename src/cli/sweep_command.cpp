#include "cli/sweep_command.hpp"

#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "bench/collective_record.hpp"
#include "bench/collectives.hpp"
#include "bench/datatypes.hpp"
#include "bench/groups.hpp"
#include "bench/sweep_engine.hpp"
#include "bench/sweep_sizes.hpp"
#include "cli/backend.hpp"
#include "cli/number_checks.hpp"
#include "cli/stage_session.hpp"
#include "cli/sweep_table.hpp"
#include "comm/fault_injection.hpp"
#include "comm/watchdog.hpp"
#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "core/rank_identity.hpp"
#include "core/stop_request.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {

// Process 0's view of the sweep: a record per measurement, a table row per size.
class SweepReporter final : public SweepObserver {
 public:
  SweepReporter(RunOutput& output, CollectiveRecordContext context, NcclTestsTable& table)
      : output_(output), context_(std::move(context)), table_(table) {}

  void collective_started(const CollectiveInfo& collective, int /*cycle*/) override {
    table_.begin(collective.nccl_tests_name);
  }
  void row_finished(const Measurement& out_of_place, const Measurement& in_place) override {
    // Figures derived once per measurement; the record and the table row show the same ones.
    const auto out_of_place_figures = placement_figures(out_of_place, context_.aggregation);
    const auto in_place_figures = placement_figures(in_place, context_.aggregation);
    output_.append_record(collective_record(context_, out_of_place, out_of_place_figures));
    output_.append_record(collective_record(context_, in_place, in_place_figures));
    table_.row(nccl_table_row(out_of_place, in_place, out_of_place_figures, in_place_figures));
  }
  void collective_finished(const CollectiveInfo& collective, int /*cycle*/) override {
    table_.end(collective.nccl_tests_name);
  }
  void note(const std::string& message) override { table_.note(message); }

 private:
  RunOutput& output_;
  CollectiveRecordContext context_;
  NcclTestsTable& table_;
};

// How long the watchdog waits for the main thread to abort its communicators before it ends
// the job anyway (ncclCommAbort itself may take seconds on a network transport).
constexpr double kAbortWaitSeconds = 10;
// How long a process that does not write the timeout record gives the one that does.
constexpr double kReporterHeadStartSeconds = 2;

// The nccl-tests table's banner and settings.
NcclTestsTable::Context table_context(const SweepOptions& options, const BackendChoice& backend,
                                      int size, const std::vector<RankIdentity>& ranks,
                                      int gpus_per_process,
                                      const std::vector<std::string>& warnings) {
  NcclTestsTable::Context context;
  context.banner =
      fmt::format("commcert {} ({}) backend {} ({}), {} rank(s), {} node(s)", build_info::kVersion,
                  build_info::kGitDescribe, backend.name,
                  backend.selection == "auto" ? "auto: " + backend.reason : "requested", size,
                  distinct_nodes(ranks).size());
  context.sweep = nccl_table_sweep(options);
  context.gpus_per_process = gpus_per_process;
  context.ranks = ranks;
  context.warnings = warnings;
  return context;
}

}  // namespace

void SweepTimeoutHandler::set_communicator(Communicator* communicator) {
  std::lock_guard lock(mutex_);
  communicator_ = communicator;
}

void SweepTimeoutHandler::arm(RunOutput* output, const CollectiveRecordContext& context,
                              const std::vector<RankIdentity>* ranks) {
  std::lock_guard lock(mutex_);
  output_ = output;
  context_ = context;
  ranks_ = ranks;
}

void SweepTimeoutHandler::report(const TimeoutReport& report) {
  std::lock_guard lock(mutex_);
  static const std::vector<RankIdentity> kNoRanks;
  const auto& ranks = ranks_ ? *ranks_ : kNoRanks;
  if (report.this_process_reports) {
    fmt::print(stderr, "commcert sweep: timeout: {}\n", describe_timeout(report, ranks));
    if (output_) {
      try {
        // The reporter is the lowest process that answered: rank 0 may be the one that hung.
        CollectiveRecordContext context = context_;
        context.origin.rank = communicator_ ? communicator_->global_ranks()[0] : 0;
        if (ranks_ && static_cast<std::size_t>(context.origin.rank) < ranks_->size()) {
          context.origin.host = (*ranks_)[static_cast<std::size_t>(context.origin.rank)].node;
        }
        output_->append_record(timeout_record(context, report));
        output_->update_meta({{"status", "timeout"},
                              {"exit_code", to_int(ExitCode::kTimeout)},
                              {"end_time", utc_timestamp_now()}});
      } catch (const std::exception& error) {
        // The abort below must happen all the same.
        fmt::print(stderr, "commcert sweep: could not write the timeout record: {}\n",
                   error.what());
      }
    }
  } else if (reporter_head_start_seconds_ > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(reporter_head_start_seconds_));
  }
  if (communicator_ && !communicator_->request_abort(abort_wait_seconds_)) {
    fmt::print(stderr,
               "commcert sweep: the communicators were not aborted within {} s (the main thread "
               "is blocked elsewhere); ending the job anyway\n",
               abort_wait_seconds_);
  }
}

void SweepCommand::configure(CLI::App& app) {
  app.add_option("collectives", flags_.collectives, collective_names() + ", or all")->required();
  app.add_option("-b,--minbytes", flags_.min_bytes, "Smallest size (K/M/G suffixes)")
      ->capture_default_str();
  app.add_option("-e,--maxbytes", flags_.max_bytes, "Largest size")->capture_default_str();
  app.add_option("-i,--stepbytes", flags_.step_bytes, "Additive step when -f is not given")
      ->capture_default_str();
  app.add_option("-f,--stepfactor", flags_.step_factor, "Multiplicative step")
      ->check(finite_positive());
  iterations_option_ = app.add_option("-n,--iters", flags_.iterations, "Timed iterations per size")
                           ->check(CLI::Range(1, 1000000))
                           ->capture_default_str();
  app.add_option("-w,--warmup_iters,--warmup-iters", flags_.warmup, "Warm-up iterations per size")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("-c,--check", flags_.check, "Check every timed iteration's output (0 = off)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("-o,--op", flags_.op, "sum prod min max avg all")->capture_default_str();
  app.add_option(
         "-d,--datatype", flags_.datatype,
         "int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double f8e4m3 f8e5m2 all")
      ->capture_default_str();
  app.add_option("-r,--root", flags_.root, "Root of rooted collectives; -1 = every rank in turn")
      ->check(CLI::Range(-1, 1 << 30))
      ->capture_default_str();
  app.add_option("-z,--blocking", flags_.blocking, "1 = barrier after every operation")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  app.add_option("-a,--average", flags_.average,
                 "Rank-time aggregation: 0 rank 0, 1 mean, 2 min, 3 max")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  app.add_option("-N,--run_cycles,--run-cycles", flags_.cycles,
                 "Repeat the sweep; 0 = until interrupted")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("-T,--timeout", flags_.timeout,
                 "Per-operation timeout (90, 90s, 10m); 0 disables it")
      ->envname("COMMCERT_TIMEOUT")
      ->capture_default_str();
  app.add_option("-G,--cudagraph", flags_.graph_launches, "Replay a CUDA graph this often (nccl)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("-g,--ngpus", flags_.gpus_per_process, "GPUs per process (nccl)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("-t,--nthreads", flags_.threads, "Threads per process (only 1; use -g)")
      ->check(CLI::Range(1, 1))
      ->capture_default_str();
  app.add_option("--target-ci", flags_.target_ci,
                 "Adaptive iterations: measure until the 95% CI of the mean is within PCT")
      ->check(finite_range(0.01, 100.0));
  app.add_option("--size-budget", flags_.size_budget,
                 "Adaptive iterations: operation time allowed per size")
      ->capture_default_str();
  app.add_option("--max-iters", flags_.max_iterations, "Adaptive iterations: at most this many")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  add_placement_options(app);
  add_stage_options(app, stage_);
}

void SweepCommand::add_placement_options(CLI::App& app) {
  app.add_option("--backend", flags_.backend, "auto, mpi or nccl")
      ->check(CLI::IsMember({"auto", "mpi", "nccl"}))
      ->envname("COMMCERT_BACKEND")
      ->capture_default_str();
  app.add_option("--seed", flags_.seed, "Seed of the data patterns");
  scope_option_ =
      app.add_option("--scope", flags_.scope,
                     "cluster (all ranks), node (one communicator per node) or pairs (every node "
                     "pair, round by round)")
          ->capture_default_str();
  app.add_option("--pair-list", flags_.pair_list,
                 "Pairs scope on these node pairs only (NODE:NODE[,NODE:NODE...]): a re-test of "
                 "suspects against known-good nodes");
  app.add_option("--pair-ranks", flags_.pair_ranks,
                 "Ranks per node in a pair: one (the node's first) or all")
      ->check(CLI::IsMember({"one", "all"}))
      ->capture_default_str();
  app.add_option("--groups", flags_.groups,
                 "Groups scope: these disjoint node groups at once, every rank of a node in its "
                 "node's group (NODE,NODE[;NODE,NODE...], or @FILE with a group per line); nodes "
                 "in no group sit it out");
  app.add_option("--groups-round", flags_.groups_round,
                 "The round number the --groups records carry (a caller running one round per "
                 "sweep)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
}

SweepOptions SweepCommand::resolve_options() const {
  SweepOptions o;
  o.collectives = parse_collectives(flags_.collectives);
  o.min_bytes = parse_size(flags_.min_bytes, "-b/--minbytes");
  o.max_bytes = parse_size(flags_.max_bytes, "-e/--maxbytes");
  o.step_bytes = parse_size(flags_.step_bytes, "-i/--stepbytes");
  o.step_factor = flags_.step_factor;
  o.iterations = flags_.iterations;
  o.warmup_iterations = flags_.warmup;
  o.check = flags_.check > 0;
  o.ops = parse_reduce_ops(flags_.op, "-o/--op");
  o.types = parse_data_types(flags_.datatype, "-d/--datatype");
  o.root = flags_.root;
  o.blocking = flags_.blocking;
  o.aggregation = static_cast<RankAggregation>(flags_.average);
  o.cycles = flags_.cycles;
  o.timeout_seconds = parse_duration_seconds(flags_.timeout, "-T/--timeout");
  o.graph_launches = flags_.graph_launches;
  o.target_ci_percent = flags_.target_ci;
  o.size_budget_seconds = parse_duration_seconds(flags_.size_budget, "--size-budget");
  o.max_iterations = flags_.max_iterations;
  if (o.target_ci_percent && iterations_option_->count() == 0) {
    o.iterations = 5;  // adaptive: start small and let the confidence interval decide
  }
  if (flags_.seed) o.seed = *flags_.seed;
  o.scope = parse_scope(flags_.scope, "--scope");
  o.pair_ranks = flags_.pair_ranks == "all" ? PairRanks::kAll : PairRanks::kOne;
  if (!flags_.pair_list.empty()) {
    if (scope_option_->count() > 0 && o.scope != Scope::kPairs) {
      throw UsageError("--pair-list measures pairs: it needs --scope pairs (or no --scope)");
    }
    o.scope = Scope::kPairs;
    o.pair_list = parse_pair_list(flags_.pair_list, "--pair-list");
  }
  if (!flags_.groups.empty()) {
    if (!flags_.pair_list.empty()) {
      throw UsageError("--groups: measures node groups, --pair-list node pairs: use one of them");
    }
    if (scope_option_->count() > 0 && o.scope != Scope::kGroups) {
      throw UsageError(
          "--groups: it measures node groups: it needs --scope groups (or no --scope)");
    }
    o.scope = Scope::kGroups;
    o.node_groups = {parse_node_groups(flags_.groups, "--groups"), flags_.groups_round};
  } else if (o.scope == Scope::kGroups) {
    throw UsageError("--scope groups: name the groups with --groups");
  }
  (void)sweep_sizes(o);  // reject an empty or unbounded size range before anything starts
  if (o.graph_launches > 0 && flags_.backend == "mpi") {
    throw UsageError("-G/--cudagraph needs the nccl backend");
  }
  return o;
}

Json SweepCommand::parameters_json(const SweepOptions& options) const {
  return {{"collectives", flags_.collectives},
          {"min_bytes", options.min_bytes},
          {"max_bytes", options.max_bytes},
          {"step_bytes", options.step_bytes},
          {"step_factor", options.step_factor},
          {"iterations", options.iterations},
          {"warmup_iterations", options.warmup_iterations},
          {"check", options.check},
          {"datatypes", flags_.datatype},
          {"ops", flags_.op},
          {"root", options.root},
          {"blocking", options.blocking},
          {"aggregation", name_of(options.aggregation)},
          {"cycles", options.cycles},
          {"timeout_s", options.timeout_seconds},
          {"graph_launches", options.graph_launches},
          {"gpus_per_process", flags_.gpus_per_process},
          {"target_ci_pct",
           options.target_ci_percent ? Json(*options.target_ci_percent) : Json(nullptr)},
          {"size_budget_s", options.size_budget_seconds},
          {"max_iterations", options.max_iterations},
          {"seed", options.seed},
          {"scope", name_of(options.scope)},
          {"pair_ranks", flags_.pair_ranks},
          {"pair_list", flags_.pair_list.empty() ? Json(nullptr) : Json(flags_.pair_list)},
          {"groups", flags_.groups.empty() ? Json(nullptr) : Json(options.node_groups.groups)}};
}

int SweepCommand::run(Invocation& invocation) {
  const SweepOptions options = resolve_options();
  validate_stage_options(stage_);
  const FaultPlan faults = fault_plan_from_environment();
  const GpuRuntimeInfo gpu = probe_gpu_runtime();
  const BackendChoice backend = choose_backend(flags_.backend, gpu);

  // The watchdog guards set-up too (communicator creation, identity exchange), so a peer that
  // never starts cannot hang the others. Until the run directory is open a timeout is only said.
  SweepTimeoutHandler timeouts(kAbortWaitSeconds, kReporterHeadStartSeconds);
  StageWatch watch;
  watch.timeout_s = options.timeout_seconds;
  watch.ranks_per_process = backend.name == "nccl" ? flags_.gpus_per_process : 1;
  watch.on_timeout = [&timeouts](const TimeoutReport& report) { timeouts.report(report); };
  StageSession session(invocation, name(), CollectiveRecord::kKind, stage_, std::move(watch));
  if (!session.guard() && session.reporting()) {
    fmt::print(stderr,
               "commcert sweep: warning: -T 0 disables the timeout; a hung rank hangs the run\n");
  }
  std::unique_ptr<Communicator> communicator;
  return session.run([&] {
    session.watchdog().set_context("set-up");
    {
      WatchedSection section(session.guard());
      communicator = make_communicator(backend, gpu, session.group(), flags_.gpus_per_process);
    }
    session.set_data_plane(communicator.get());
    timeouts.set_communicator(communicator.get());
    faults.validate_ranks(communicator->size());
    if (options.root >= communicator->size()) {
      throw UsageError(fmt::format("-r/--root {} is not a rank of this {}-rank job", options.root,
                                   communicator->size()));
    }
    session.identify(communicator_slots(*communicator));
    const auto& ranks = session.ranks();
    // The rounds are planned here as well as in the engine so that a --pair-list node no rank
    // runs on is a usage error (exit 2, nothing written), found by every process alike, not a
    // run failure after the results directory exists.
    if (!options.pair_list.empty() || options.scope == Scope::kGroups) {
      (void)plan_rounds(options.scope, ranks, options.pair_ranks, options.pair_list,
                        options.node_groups);
    }
    session.open(gpu, parameters_json(options), {}, backend);
    RunOutput& output = session.output();
    if (!faults.empty()) session.update_meta({{"fault_injection", faults.describe()}});
    if (session.show_progress()) {
      fmt::print(stderr,
                 "commcert sweep: backend {} ({}: {}), {} rank(s) on {} node(s), results in {}\n",
                 backend.name, backend.selection, backend.reason, communicator->size(),
                 distinct_nodes(ranks).size(), output.directory().string());
    }

    const CollectiveRecordContext record_context{
        session.origin(0), backend.name, name_of(options.scope), options.aggregation, &ranks};
    timeouts.arm(&output, record_context, &ranks);
    communicator->attach_watchdog(session.guard());

    NcclTestsTable table(stdout, table_context(options, backend, communicator->size(), ranks,
                                               flags_.gpus_per_process, session.warnings()));
    SweepReporter reporter(output, record_context, table);

    const InterruptsRequestStop interrupts;
    SweepEngine engine(options, *communicator, session.group().control(), session.guard(), faults,
                       ranks, session.reporting() ? &reporter : nullptr, !stage_.quiet);
    const SweepOutcome outcome = engine.run();
    // Process 0 saw every rank's result; every process exits with the same status.
    const int exit_code = session.finish_with_status(
        to_int(outcome.failed_measurements > 0 ? ExitCode::kFailed : ExitCode::kOk),
        outcome.interrupted);
    communicator->attach_watchdog(nullptr);
    return exit_code;
  });
}

}  // namespace commcert
