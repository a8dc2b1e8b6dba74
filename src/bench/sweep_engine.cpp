#include "bench/sweep_engine.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "bench/datatypes.hpp"
#include "bench/rank_result_wire.hpp"
#include "bench/sweep_sizes.hpp"
#include "comm/watchdog.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/stop_request.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {

// Per-size work for the ETA: bytes moved plus a fixed cost per operation for latency-bound sizes.
double work_units(std::uint64_t bytes, int iterations) {
  constexpr double kFixedCostBytes = 64.0 * 1024.0;
  return (static_cast<double>(bytes) + kFixedCostBytes) * (iterations + 1) * 2.0;
}

std::string describe(const CollectiveInfo& collective, DataType type, std::optional<ReduceOp> op,
                     std::optional<int> root, std::uint64_t bytes) {
  std::string text = fmt::format("{} {}", collective.name, name_of(type));
  if (op) text += fmt::format(" {}", name_of(*op));
  if (root) text += fmt::format(" root {}", *root);
  return text + fmt::format(" {}", format_bytes(bytes));
}

// Per local rank running totals across the batches of one measurement.
struct RankTotals {
  double seconds = 0;
  std::size_t samples = 0;
  // Spans of batches run back to back, and their operations; `back_to_back` turns false as soon
  // as one batch was not (the figure then comes from the windows).
  double back_to_back_seconds = 0;
  std::size_t back_to_back_operations = 0;
  bool back_to_back = true;
  std::uint64_t wrong_elements = 0;
  int wrong_iterations = 0;
  bool checked = false;

  void add(const RankLoopResult& batch) {
    checked = batch.checked;
    wrong_elements += batch.wrong_elements;
    wrong_iterations += batch.wrong_iterations;
    for (const double operation : batch.operation_seconds)
      seconds += operation;
    samples += batch.operation_seconds.size();
    if (batch.back_to_back_seconds) {
      back_to_back_seconds += *batch.back_to_back_seconds;
      back_to_back_operations += batch.operation_seconds.size();
    } else {
      back_to_back = false;
    }
  }

  // What global rank `rank` measured over every batch.
  [[nodiscard]] RankMeasurement result(int rank) const {
    RankMeasurement out;
    out.rank = rank;
    out.mean_seconds = samples ? seconds / static_cast<double>(samples) : 0.0;
    if (back_to_back && back_to_back_operations > 0) {
      out.back_to_back_seconds =
          back_to_back_seconds / static_cast<double>(back_to_back_operations);
    }
    out.wrong_elements = wrong_elements;
    out.wrong_iterations = wrong_iterations;
    out.checked = checked;
    return out;
  }
};

// What the adaptive rule says after a batch: stop (and why) or run `next_batch` more.
struct AdaptiveDecision {
  std::vector<std::optional<double>> achieved_ci_percent;  // per group; nullopt if not measured
  std::optional<std::string> stopped_by;                   // "ci", "budget" or "max_iterations"
  int next_batch = 0;
};

// Continue until every measured group is within the target, or the budget or the iteration cap
// is spent; all groups run the same number of iterations. `samples` are the same on every
// process, so every process decides the same.
AdaptiveDecision decide_stop(const SweepOptions& options,
                             const std::vector<std::vector<double>>& samples,
                             const std::vector<std::uint64_t>& counts, int iterations_done,
                             bool stop) {
  AdaptiveDecision decision;
  decision.achieved_ci_percent.resize(samples.size());
  bool all_within = true;
  double spent = 0;
  for (std::size_t g = 0; g < samples.size(); ++g) {
    if (counts[g] == 0) continue;
    const auto summary = summarize(samples[g]);
    const auto half_width = ci95_half_width(summary);
    auto& achieved = decision.achieved_ci_percent[g];
    achieved = half_width && summary.mean > 0
                   ? std::optional<double>(100.0 * *half_width / summary.mean)
                   : std::nullopt;
    all_within = all_within && achieved && *achieved <= *options.target_ci_percent;
    double group_spent = 0;
    for (const double s : samples[g])
      group_spent += s;
    spent = std::max(spent, group_spent);
  }
  if (all_within) {
    decision.stopped_by = "ci";
  } else if (spent >= options.size_budget_seconds) {
    decision.stopped_by = "budget";
  } else if (iterations_done >= options.max_iterations || stop) {
    decision.stopped_by = "max_iterations";
  } else {
    // Half the iterations so far, at least 5, never past the cap.
    decision.next_batch =
        std::min(std::max(iterations_done / 2, 5), options.max_iterations - iterations_done);
  }
  return decision;
}

}  // namespace

// One measurement's timed batches so far.
struct SweepEngine::TimedSeries {
  explicit TimedSeries(std::size_t groups) : samples(groups) {}
  std::map<int, RankTotals> totals;  // this process's ranks, by global rank
  // Per group and iteration, the slowest rank's time; every process sees the same samples after
  // each batch's exchange, so every process takes the same adaptive decisions.
  std::vector<std::vector<double>> samples;
  int iterations_done = 0;
};

SweepEngine::SweepEngine(const SweepOptions& options, Communicator& communicator,
                         ControlPlane& control, Watchdog* watchdog, const FaultPlan& faults,
                         const std::vector<RankIdentity>& ranks, SweepObserver* observer,
                         bool show_progress)
    : options_(options),
      communicator_(communicator),
      control_(control),
      watchdog_(watchdog),
      faults_(faults),
      ranks_(ranks),
      observer_(observer),
      show_progress_(show_progress) {}

std::vector<SweepEngine::Point> SweepEngine::points() const {
  std::vector<Point> out;
  for (const CollectiveKind kind : options_.collectives) {
    const CollectiveInfo& info = collective_info(kind);
    for (const DataType type : options_.types) {
      std::vector<std::optional<ReduceOp>> ops{std::nullopt};
      if (is_reduction(kind)) ops.assign(options_.ops.begin(), options_.ops.end());
      std::vector<std::optional<int>> roots{std::nullopt};
      if (is_rooted(kind)) {
        roots.clear();
        if (options_.root < 0) {
          for (int r = 0; r < communicator_.size(); ++r)
            roots.emplace_back(r);
        } else {
          roots.emplace_back(options_.root);
        }
      }
      for (const auto& op : ops) {
        for (const auto& root : roots)
          out.push_back({&info, type, op, root});
      }
    }
  }
  return out;
}

std::uint64_t SweepEngine::agreed_buffer_cap() {
  // Every rank must skip the same sizes, so the smallest cap in the job applies to all.
  double negative_cap = -static_cast<double>(communicator_.max_buffer_bytes());
  WatchedSection section(watchdog_);
  control_.all_reduce_max({&negative_cap, 1});
  return static_cast<std::uint64_t>(-negative_cap);
}

std::uint64_t SweepEngine::largest_buffer_bytes(const std::vector<Point>& points,
                                                const std::vector<std::uint64_t>& sizes,
                                                const GroupRound& round, std::uint64_t cap) const {
  const int mine = my_group(round);
  if (mine < 0) return 0;
  const auto& group = round.groups[static_cast<std::size_t>(mine)];
  const int n = static_cast<int>(group.ranks.size());
  std::uint64_t largest = 0;
  for (const auto& point : points) {
    const auto element = static_cast<std::uint64_t>(element_size(point.type));
    const int root = point.root && *point.root < n ? *point.root : 0;
    for (const auto size : sizes) {
      const std::uint64_t count =
          size_in_round(point, round, size, cap).counts[static_cast<std::size_t>(mine)];
      for (int rank = 0; rank < n; ++rank) {
        const RankLayout layout = rank_layout(point.collective->kind, count, n, rank, root);
        largest =
            std::max({largest, layout.input_elements * element, layout.output_elements * element,
                      layout.in_place_buffer_elements() * element});
      }
    }
  }
  return largest;
}

int SweepEngine::my_group(const GroupRound& round) const {
  int group = -1;
  for (const int rank : communicator_.global_ranks()) {
    group = std::max(group, round.group_of_rank[static_cast<std::size_t>(rank)]);
  }
  return group;
}

SweepEngine::SizeInRound SweepEngine::size_in_round(const Point& point, const GroupRound& round,
                                                    std::uint64_t size, std::uint64_t cap) const {
  SizeInRound out;
  const int element = element_size(point.type);
  for (const auto& group : round.groups) {
    const int n = static_cast<int>(group.ranks.size());
    // Rooted collectives in a group use the group's rank 0 when the root is outside it.
    const int root = point.root && *point.root < n ? *point.root : 0;
    std::uint64_t count = point.collective->count_for_bytes(size, element, n);
    std::uint64_t largest = 0;
    for (int rank = 0; rank < n; ++rank) {
      const RankLayout layout = rank_layout(point.collective->kind, count, n, rank, root);
      largest = std::max({largest, layout.input_elements, layout.output_elements,
                          layout.in_place_buffer_elements()});
    }
    if (largest * static_cast<std::uint64_t>(element) > cap) count = 0;
    out.counts.push_back(count);
    out.bytes.push_back(point.collective->bytes_for_count(count, element, n));
  }
  return out;
}

std::vector<Measurement> SweepEngine::describe_measurements(const Point& point,
                                                            const GroupRound& round,
                                                            const SizeInRound& size, bool in_place,
                                                            int cycle) const {
  std::vector<Measurement> out(round.groups.size());
  for (std::size_t g = 0; g < out.size(); ++g) {
    Measurement& m = out[g];
    m.collective = point.collective->kind;
    m.type = point.type;
    m.op = point.op;
    const int n = static_cast<int>(round.groups[g].ranks.size());
    if (point.root) m.root = *point.root < n ? *point.root : 0;
    m.bytes = size.bytes[g];
    m.count = size.counts[g];
    m.nranks = n;
    m.in_place = in_place;
    m.cycle = cycle;
    m.scope = std::string(name_of(options_.scope));
    m.round = round.round;
    m.pair_list = !options_.pair_list.empty();
    m.group = static_cast<int>(g);
    m.group_nodes = round.groups[g].nodes;
    m.check_requested = options_.check;
  }
  return out;
}

std::optional<std::string> SweepEngine::agreed_unsupported(const Point& point,
                                                           const Communicator* active,
                                                           bool in_place) {
  // Ranks on different GPU generations may disagree (fp8 needs Hopper); all must skip together.
  std::optional<std::string> unsupported;
  if (active) {
    unsupported = active->unsupported(point.collective->kind, point.type,
                                      point.op.value_or(ReduceOp::kSum), in_place);
  }
  double any_unsupported = unsupported ? 1.0 : 0.0;
  {
    WatchedSection section(watchdog_);
    control_.all_reduce_max({&any_unsupported, 1});
  }
  if (any_unsupported > 0) return unsupported.value_or("not supported on some of the ranks");
  return std::nullopt;
}

LoopPlan SweepEngine::loop_plan(const Point& point, const Measurement* mine,
                                const Communicator* active, bool in_place) const {
  LoopPlan plan;
  if (mine && active) {
    plan.pattern.collective = point.collective->kind;
    plan.pattern.type = point.type;
    plan.pattern.op = point.op.value_or(ReduceOp::kSum);
    plan.pattern.nranks = active->size();
    plan.pattern.root = mine->root.value_or(0);
    plan.pattern.count = mine->count;
    // Both placements use the same data, so a backend computes the expected output once per
    // size; stale output still cannot pass, as every checked iteration starts from poison.
    plan.pattern.seed = options_.seed ^ (mine->bytes * 0x9e3779b97f4a7c15ULL);
  }
  plan.in_place = in_place;
  plan.blocking = options_.blocking;
  plan.graph_launches = options_.graph_launches;
  plan.faults = &round_faults_;
  return plan;
}

void SweepEngine::warm_up(Communicator& active, LoopPlan plan) const {
  if (options_.warmup_iterations <= 0) return;
  plan.timed = false;
  plan.check = false;
  plan.iterations = options_.warmup_iterations;
  active.run(plan);
}

void SweepEngine::run_timed_batch(TimedSeries& series, LoopPlan plan, Communicator* participant,
                                  int mine, int iterations, bool& stop) {
  const std::size_t groups = series.samples.size();
  // Per group and iteration the slowest local rank's time, then the stop flag; the maximum over
  // every process makes the slowest rank's time every process's sample.
  std::vector<double> exchange(groups * static_cast<std::size_t>(iterations) + 1, 0.0);
  if (participant) {
    plan.timed = true;
    plan.check = options_.check;
    plan.iterations = iterations;
    const auto base = static_cast<std::size_t>(mine) * static_cast<std::size_t>(iterations);
    for (const auto& result : participant->run(plan)) {
      series.totals[result.rank].add(result);
      for (std::size_t i = 0; i < result.operation_seconds.size(); ++i)
        exchange[base + i] = std::max(exchange[base + i], result.operation_seconds[i]);
    }
  }
  exchange.back() = stop_request().load() ? 1.0 : 0.0;
  {
    WatchedSection section(watchdog_);
    control_.all_reduce_max(exchange);
  }
  stop = stop || exchange.back() > 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const auto first =
        exchange.begin() + static_cast<std::ptrdiff_t>(g * static_cast<std::size_t>(iterations));
    series.samples[g].insert(series.samples[g].end(), first, first + iterations);
  }
  series.iterations_done += iterations;
}

std::map<int, RankMeasurement> SweepEngine::gather_rank_results(const TimedSeries& series) {
  std::vector<RankMeasurement> mine;
  for (const auto& [rank, totals] : series.totals)
    mine.push_back(totals.result(rank));
  std::vector<std::vector<double>> gathered;
  {
    WatchedSection section(watchdog_);
    gathered = control_.gather_to_root(encode_rank_results(mine));
  }
  std::map<int, RankMeasurement> by_rank;
  for (const auto& process : gathered) {
    for (const auto& result : decode_rank_results(process))
      by_rank[result.rank] = result;
  }
  return by_rank;
}

std::vector<Measurement> SweepEngine::measure(const Point& point, const GroupRound& round,
                                              Communicator* active, const SizeInRound& size,
                                              bool in_place, int cycle, bool& stop) {
  std::vector<Measurement> out = describe_measurements(point, round, size, in_place, cycle);
  if (const auto reason = agreed_unsupported(point, active, in_place)) {
    for (auto& m : out)
      m.unsupported = *reason;
    return out;
  }
  // Only what runs has a warm-up: an unsupported record says 0.
  for (auto& m : out)
    m.warmup_iterations = options_.warmup_iterations;

  const int mine = my_group(round);
  const bool participating =
      active != nullptr && mine >= 0 && size.counts[static_cast<std::size_t>(mine)] > 0;
  if (watchdog_) {
    watchdog_->set_context(describe(*point.collective, point.type, point.op, point.root,
                                    mine >= 0 ? size.bytes[static_cast<std::size_t>(mine)] : 0) +
                           (in_place ? " in-place" : " out-of-place"));
  }
  const LoopPlan plan = loop_plan(
      point, participating ? &out[static_cast<std::size_t>(mine)] : nullptr, active, in_place);
  Communicator* participant = participating ? active : nullptr;
  if (participant) warm_up(*participant, plan);

  TimedSeries series(out.size());
  run_timed_batch(series, plan, participant, mine, std::max(1, options_.iterations), stop);
  std::optional<AdaptiveDecision> adaptive;
  if (options_.target_ci_percent) {
    while (true) {
      adaptive = decide_stop(options_, series.samples, size.counts, series.iterations_done, stop);
      if (adaptive->stopped_by) break;
      run_timed_batch(series, plan, participant, mine, adaptive->next_batch, stop);
    }
  }

  // Rank-level results go to process 0 only: it writes the records and the table.
  const auto by_rank = gather_rank_results(series);
  for (std::size_t g = 0; g < out.size(); ++g) {
    Measurement& m = out[g];
    m.iteration_seconds = series.samples[g];
    for (const int rank : round.groups[g].ranks) {
      if (const auto found = by_rank.find(rank); found != by_rank.end())
        m.ranks.push_back(found->second);
    }
    if (adaptive) {
      m.adaptive = AdaptiveOutcome{*options_.target_ci_percent, adaptive->achieved_ci_percent[g],
                                   *adaptive->stopped_by};
    }
  }
  return out;
}

Communicator* SweepEngine::round_communicator(const GroupRound& round,
                                              std::unique_ptr<Communicator>& split) {
  // Cluster scope runs on the job's communicator; node and pair scopes on a split of it,
  // created for the round and destroyed (with its buffers) after it.
  if (options_.scope == Scope::kCluster) return &communicator_;
  std::vector<int> colors;
  for (const int rank : communicator_.global_ranks()) {
    colors.push_back(round.group_of_rank[static_cast<std::size_t>(rank)]);
  }
  WatchedSection section(watchdog_);
  split = communicator_.split(colors);
  return split.get();
}

void SweepEngine::measure_size(const Point& point, const GroupRound& round, Communicator* active,
                               std::uint64_t size, std::uint64_t cap, int cycle, bool& noted_skip,
                               bool& stop, SweepOutcome& outcome) {
  const SizeInRound in_round = size_in_round(point, round, size, cap);
  const bool any_measured =
      std::any_of(in_round.counts.begin(), in_round.counts.end(), [](auto c) { return c > 0; });
  const bool all_measured =
      std::all_of(in_round.counts.begin(), in_round.counts.end(), [](auto c) { return c > 0; });
  if (!all_measured && !noted_skip && observer_) {
    observer_->note(fmt::format(
        "{} {} {}: skipped in some groups (under one element per rank, or more than {} per "
        "buffer)",
        point.collective->name, name_of(point.type), format_bytes(size), format_bytes(cap)));
    noted_skip = true;
  }
  if (any_measured) {
    auto out_of_place = measure(point, round, active, in_round, false, cycle, stop);
    auto in_place = measure(point, round, active, in_round, true, cycle, stop);
    for (std::size_t g = 0; g < round.groups.size(); ++g) {
      if (in_round.counts[g] == 0) continue;
      ++outcome.rows;
      for (const Measurement* m : {&out_of_place[g], &in_place[g]}) {
        bool failed = false;
        for (const auto& rank : m->ranks) {
          outcome.wrong_elements += rank.wrong_elements;
          failed = failed || rank.wrong_elements > 0;
        }
        outcome.failed_measurements += failed ? 1 : 0;
      }
      if (observer_) observer_->row_finished(out_of_place[g], in_place[g]);
    }
  }
}

SweepOutcome SweepEngine::run() {
  const auto sizes = sweep_sizes(options_);
  const auto all_points = points();
  const auto rounds = plan_rounds(options_.scope, ranks_, options_.pair_ranks, options_.pair_list,
                                  options_.node_groups);
  const std::uint64_t cap = agreed_buffer_cap();
  const bool reporting = control_.process_index() == 0;

  double total_work = 0;
  for (const auto size : sizes)
    total_work += work_units(size, options_.iterations);
  total_work *= static_cast<double>(all_points.size() * rounds.size());
  const int cycles = options_.cycles > 0 ? options_.cycles : 1;
  ProgressReporter progress(show_progress_ && reporting, "sweep", total_work * cycles);

  SweepOutcome outcome;
  bool stop = false;
  for (int cycle = 0; !stop && (options_.cycles == 0 || cycle < options_.cycles); ++cycle) {
    for (const auto& round : rounds) {
      if (stop) break;
      round_faults_ = faults_.for_groups(round.group_of_rank);
      std::unique_ptr<Communicator> split;
      Communicator* active = round_communicator(round, split);
      if (active) active->reserve_buffers(largest_buffer_bytes(all_points, sizes, round, cap));
      if (options_.scope == Scope::kGroups && observer_) {
        observer_->note(
            fmt::format("groups round {}: {} group(s)", round.round + 1, round.groups.size()));
      }
      if (options_.scope == Scope::kPairs && observer_) {
        observer_->note(fmt::format("pairs round {} of {}: {} pair(s)", round.round + 1,
                                    rounds.size(), round.groups.size()));
      }
      const CollectiveInfo* current = nullptr;
      for (const auto& point : all_points) {
        if (stop) break;
        if (current != point.collective) {
          if (current && observer_) observer_->collective_finished(*current, cycle);
          current = point.collective;
          if (observer_) observer_->collective_started(*current, cycle);
        }
        bool noted_skip = false;
        for (const auto size : sizes) {
          measure_size(point, round, active, size, cap, cycle, noted_skip, stop, outcome);
          progress.advance(work_units(size, options_.iterations),
                           describe(*point.collective, point.type, point.op, point.root, size) +
                               fmt::format(" (cycle {})", cycle + 1));
          if (stop) break;
        }
      }
      if (current && observer_) observer_->collective_finished(*current, cycle);
    }
  }
  communicator_.release_buffers();
  outcome.interrupted = stop;
  progress.finish(fmt::format("{} rows", outcome.rows));
  return outcome;
}

}  // namespace commcert
