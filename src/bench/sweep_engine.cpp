#include "bench/sweep_engine.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "bench/datatypes.hpp"
#include "bench/sweep_sizes.hpp"
#include "comm/watchdog.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {

// Per-size work for the ETA: bytes moved plus a fixed cost per operation for latency-bound sizes.
double work_units(std::uint64_t bytes, int iterations) {
  constexpr double kFixedCostBytes = 64.0 * 1024.0;
  return (static_cast<double>(bytes) + kFixedCostBytes) * (iterations + 1) * 2.0;
}

std::string describe(const CollectiveInfo& collective, DataType type, std::optional<ReduceOp> op,
                     std::optional<int> root, std::uint64_t bytes, bool in_place) {
  std::string text = fmt::format("{} {}", collective.name, name_of(type));
  if (op) text += fmt::format(" {}", name_of(*op));
  if (root) text += fmt::format(" root {}", *root);
  return text + fmt::format(" {} {}", format_bytes(bytes), in_place ? "in-place" : "out-of-place");
}

// Per local rank running totals across the batches of one measurement.
struct RankTotals {
  int rank = 0;
  double seconds = 0;
  std::size_t samples = 0;
  std::uint64_t wrong_elements = 0;
  int wrong_iterations = 0;
  bool checked = false;
};

}  // namespace

std::atomic<bool>& SweepEngine::stop_requested() {
  static std::atomic<bool> requested{false};
  return requested;
}

SweepEngine::SweepEngine(const SweepOptions& options, Communicator& communicator,
                         ControlPlane& control, Watchdog* watchdog, const FaultPlan& faults,
                         SweepObserver* observer, bool show_progress)
    : options_(options),
      communicator_(communicator),
      control_(control),
      watchdog_(watchdog),
      faults_(faults),
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

bool SweepEngine::buffers_fit(const Point& point, std::uint64_t count, std::uint64_t cap) const {
  const int n = communicator_.size();
  const auto element = static_cast<std::uint64_t>(element_size(point.type));
  std::uint64_t largest = 0;
  for (int rank = 0; rank < n; rank = rank == 0 && n > 1 ? n - 1 : n) {
    const RankLayout layout =
        rank_layout(point.collective->kind, count, n, rank, point.root.value_or(0));
    largest = std::max({largest, layout.input_elements, layout.output_elements,
                        layout.in_place_buffer_elements()});
  }
  return largest * element <= cap;
}

Measurement SweepEngine::measure(const Point& point, std::uint64_t count, std::uint64_t bytes,
                                 bool in_place, int cycle, bool& stop) {
  Measurement m;
  m.collective = point.collective->kind;
  m.type = point.type;
  m.op = point.op;
  m.root = point.root;
  m.bytes = bytes;
  m.count = count;
  m.nranks = communicator_.size();
  m.in_place = in_place;
  m.cycle = cycle;
  m.check_requested = options_.check;
  m.unsupported =
      communicator_.unsupported(m.collective, m.type, m.op.value_or(ReduceOp::kSum), in_place);
  if (m.unsupported) return m;

  if (watchdog_) {
    watchdog_->set_context(describe(*point.collective, m.type, m.op, m.root, bytes, in_place));
  }
  LoopPlan plan;
  plan.pattern.collective = m.collective;
  plan.pattern.type = m.type;
  plan.pattern.op = m.op.value_or(ReduceOp::kSum);
  plan.pattern.nranks = m.nranks;
  plan.pattern.root = m.root.value_or(0);
  plan.pattern.count = count;
  plan.pattern.seed = options_.seed ^ (bytes * 0x9e3779b97f4a7c15ULL) ^ (in_place ? 1 : 0);
  plan.in_place = in_place;
  plan.blocking = options_.blocking;
  plan.graph_launches = options_.graph_launches;
  plan.faults = &faults_;

  if (options_.warmup_iterations > 0) {
    plan.timed = false;
    plan.check = false;
    plan.iterations = options_.warmup_iterations;
    communicator_.run(plan);
    m.warmup_iterations = options_.warmup_iterations;
  }

  plan.timed = true;
  plan.check = options_.check;
  std::map<int, RankTotals> totals;
  const auto run_batch = [&](int iterations) {
    plan.iterations = iterations;
    const auto results = communicator_.run(plan);
    // Per iteration, the slowest local rank; then the slowest across processes, plus the stop
    // flag, in one exchange so every rank sees the same samples and takes the same decisions.
    std::vector<double> exchange(static_cast<std::size_t>(iterations) + 1, 0.0);
    for (const auto& result : results) {
      auto& total = totals[result.rank];
      total.rank = result.rank;
      total.checked = result.checked;
      total.wrong_elements += result.wrong_elements;
      total.wrong_iterations += result.wrong_iterations;
      for (std::size_t i = 0; i < result.operation_seconds.size(); ++i) {
        total.seconds += result.operation_seconds[i];
        exchange[i] = std::max(exchange[i], result.operation_seconds[i]);
      }
      total.samples += result.operation_seconds.size();
    }
    exchange.back() = stop_requested().load() ? 1.0 : 0.0;
    {
      WatchedSection section(watchdog_);
      control_.all_reduce_max(exchange);
    }
    stop = stop || exchange.back() > 0;
    m.iteration_seconds.insert(m.iteration_seconds.end(), exchange.begin(), exchange.end() - 1);
  };

  run_batch(std::max(1, options_.iterations));
  if (options_.target_ci_percent) {
    AdaptiveOutcome adaptive;
    adaptive.target_ci_percent = *options_.target_ci_percent;
    while (true) {
      const auto summary = summarize(m.iteration_seconds);
      const auto half_width = ci95_half_width(summary);
      if (half_width && summary.mean > 0)
        adaptive.achieved_ci_percent = 100.0 * *half_width / summary.mean;
      double spent = 0;
      for (double s : m.iteration_seconds)
        spent += s;
      if (adaptive.achieved_ci_percent &&
          *adaptive.achieved_ci_percent <= adaptive.target_ci_percent) {
        adaptive.stopped_by = "ci";
        break;
      }
      if (spent >= options_.size_budget_seconds) {
        adaptive.stopped_by = "budget";
        break;
      }
      const int done = static_cast<int>(m.iteration_seconds.size());
      if (done >= options_.max_iterations || stop) {
        adaptive.stopped_by = "max_iterations";
        break;
      }
      run_batch(std::clamp(done / 2, 5, options_.max_iterations - done));
    }
    m.adaptive = adaptive;
  }

  // Rank-level results go to process 0 only: it writes the record and the table.
  std::vector<double> mine;
  for (const auto& [rank, total] : totals) {
    const double mean = total.samples ? total.seconds / static_cast<double>(total.samples) : 0.0;
    mine.insert(mine.end(),
                {static_cast<double>(rank), mean, static_cast<double>(total.wrong_elements),
                 static_cast<double>(total.wrong_iterations), total.checked ? 1.0 : 0.0});
  }
  std::vector<std::vector<double>> gathered;
  {
    WatchedSection section(watchdog_);
    gathered = control_.gather_to_root(mine);
  }
  for (const auto& process : gathered) {
    for (std::size_t at = 0; at + 4 < process.size(); at += 5) {
      RankMeasurement rank;
      rank.rank = static_cast<int>(process[at]);
      rank.mean_seconds = process[at + 1];
      rank.wrong_elements = static_cast<std::uint64_t>(process[at + 2]);
      rank.wrong_iterations = static_cast<int>(process[at + 3]);
      rank.checked = process[at + 4] > 0;
      m.ranks.push_back(rank);
    }
  }
  std::sort(m.ranks.begin(), m.ranks.end(),
            [](const RankMeasurement& a, const RankMeasurement& b) { return a.rank < b.rank; });
  return m;
}

SweepOutcome SweepEngine::run() {
  const auto sizes = sweep_sizes(options_);
  const auto all_points = points();
  const std::uint64_t cap = agreed_buffer_cap();
  const int n = communicator_.size();
  const bool reporting = control_.process_index() == 0;

  double total_work = 0;
  for (const auto size : sizes)
    total_work += work_units(size, options_.iterations);
  total_work *= static_cast<double>(all_points.size());
  const int cycles = options_.cycles > 0 ? options_.cycles : 1;
  ProgressReporter progress(show_progress_ && reporting, "sweep", total_work * cycles);

  SweepOutcome outcome;
  bool stop = false;
  for (int cycle = 0; !stop && (options_.cycles == 0 || cycle < options_.cycles); ++cycle) {
    const CollectiveInfo* current = nullptr;
    for (const auto& point : all_points) {
      if (stop) break;
      if (current != point.collective) {
        if (current && observer_) observer_->collective_finished(*current, cycle);
        current = point.collective;
        if (observer_) observer_->collective_started(*current, cycle);
      }
      const int element = element_size(point.type);
      bool noted_too_small = false;
      bool noted_too_large = false;
      for (const auto size : sizes) {
        const std::uint64_t count = point.collective->count_for_bytes(size, element, n);
        if (count == 0) {
          if (!noted_too_small && observer_) {
            observer_->note(fmt::format(
                "{} {}: sizes below {} B hold no element per rank; skipped", point.collective->name,
                name_of(point.type), point.collective->bytes_for_count(16 / element, element, n)));
          }
          noted_too_small = true;
          progress.advance(work_units(size, options_.iterations), "skipping");
          continue;
        }
        if (!buffers_fit(point, count, cap)) {
          if (!noted_too_large && observer_) {
            observer_->note(
                fmt::format("{} {}: sizes from {} need more than {} per buffer; skipped",
                            point.collective->name, name_of(point.type), format_bytes(size),
                            format_bytes(cap)));
          }
          noted_too_large = true;
          progress.advance(work_units(size, options_.iterations), "skipping");
          continue;
        }
        const std::uint64_t bytes = point.collective->bytes_for_count(count, element, n);
        Measurement out_of_place = measure(point, count, bytes, false, cycle, stop);
        Measurement in_place = measure(point, count, bytes, true, cycle, stop);
        ++outcome.rows;
        for (const Measurement* m : {&out_of_place, &in_place}) {
          for (const auto& rank : m->ranks)
            outcome.wrong_elements += rank.wrong_elements;
          const bool failed =
              std::any_of(m->ranks.begin(), m->ranks.end(),
                          [](const RankMeasurement& r) { return r.wrong_elements > 0; });
          outcome.failed_measurements += failed ? 1 : 0;
        }
        if (observer_) observer_->row_finished(out_of_place, in_place);
        progress.advance(work_units(size, options_.iterations),
                         describe(*point.collective, point.type, point.op, point.root, bytes, false)
                             .append(fmt::format(" (cycle {})", cycle + 1)));
        if (stop) break;
      }
    }
    if (current && observer_) observer_->collective_finished(*current, cycle);
  }
  outcome.interrupted = stop;
  progress.finish(fmt::format("{} rows", outcome.rows));
  return outcome;
}

}  // namespace commcert
