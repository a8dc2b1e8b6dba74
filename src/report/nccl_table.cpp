#include "report/nccl_table.hpp"

#include <cmath>

#include <fmt/format.h>

#include "bench/datatypes.hpp"

namespace commcert {
namespace {

// Per placement, nccl-tests 2.19 prints "  %7s  %6s  %6s  %6g" (time, algbw, busbw, #wrong as
// a double), or "  %7s  %6s  %6s    N/A" when nothing was checked.
std::string placement_fields(const Measurement& m, RankAggregation aggregation) {
  if (m.unsupported || m.ranks.empty()) {
    return fmt::format("  {:>7}  {:>6}  {:>6}    N/A", "N/A", "N/A", "N/A");
  }
  const auto figures = derive_figures(m, aggregation);
  const std::string wrong =
      figures.wrong_elements ? fmt::format("  {:>6g}", static_cast<double>(*figures.wrong_elements))
                             : std::string("    N/A");
  return fmt::format("  {:>7}  {:>6}  {:>6}{}",
                     NcclTestsTable::fit_number(figures.time_seconds * 1e6, 7),
                     NcclTestsTable::fit_number(figures.algbw_bytes_per_second / 1e9, 6),
                     NcclTestsTable::fit_number(figures.busbw_bytes_per_second / 1e9, 6), wrong);
}

}  // namespace

NcclTestsTable::NcclTestsTable(std::FILE* out, Context context)
    : out_(out), context_(std::move(context)) {}

std::string NcclTestsTable::fit_number(double value, int width) {
  for (const char* format : {"{:.2f}", "{:.1f}", "{:.0f}"}) {
    std::string text = fmt::format(fmt::runtime(format), value);
    if (static_cast<int>(text.size()) <= width) return text;
  }
  return width >= 7 ? fmt::format("{:.1e}", value) : fmt::format("{:.0e}", value);
}

void NcclTestsTable::begin(const CollectiveInfo& collective) {
  const SweepOptions& o = *context_.options;
  out_of_bounds_ = 0;
  busbw_sum_ = 0;
  busbw_count_ = 0;
  fmt::print(out_, "# {}\n", context_.banner);
  for (const auto& warning : context_.warnings)
    fmt::print(out_, "# WARNING: {}\n", warning);
  fmt::print(out_, "# Collective test starting: {}\n", collective.nccl_tests_name);
  const std::string step = o.step_factor > 1.0 ? fmt::format("{}(factor)", o.step_factor)
                                               : fmt::format("{}(bytes)", o.step_bytes);
  fmt::print(out_,
             "# nThread 1 nGpus {} minBytes {} maxBytes {} step: {} warmup iters: {} iters: {} agg "
             "iters: 1 validation: {} graph: {} unalign: 0\n",
             context_.gpus_per_process, o.min_bytes, o.max_bytes, step, o.warmup_iterations,
             o.iterations, o.check ? 1 : 0, o.graph_launches);
  fmt::print(out_, "#\n# Using devices\n");
  for (const auto& rank : context_.ranks) {
    fmt::print(out_, "#  Rank {:>2} Group  0 Pid {:>6} on {:>10} device {:>2} {}\n", rank.rank,
               rank.pid, rank.node, rank.gpu ? rank.gpu->index : rank.local_rank, rank.device);
  }
  fmt::print(out_, "#\n");
  // nccl-tests 2.19 writeResultHeader, trailing spaces included.
  fmt::print(out_,
             "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       "
             "in-place          \n",
             "", "", "", "", "");
  std::string names =
      fmt::format("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}", "size", "count", "type", "redop", "root");
  std::string units =
      fmt::format("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}", "(B)", "(elements)", "", "", "");
  for (int placement = 0; placement < 2; ++placement) {
    names += fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "time", "algbw", "busbw", "#wrong");
    units += fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "(us)", "(GB/s)", "(GB/s)", "");
  }
  fmt::print(out_, "{} \n{} \n", names, units);
  std::fflush(out_);
}

std::string NcclTestsTable::row_text(const Measurement& out_of_place, const Measurement& in_place,
                                     RankAggregation aggregation,
                                     const std::vector<RankIdentity>& /*ranks*/) {
  const Measurement& m = out_of_place;
  const std::string redop = m.op ? std::string(name_of(*m.op)) : "none";
  const std::string root = m.root ? std::to_string(*m.root) : "-1";
  return fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", m.bytes, m.count, name_of(m.type),
                     redop, root) +
         placement_fields(out_of_place, aggregation) + placement_fields(in_place, aggregation);
}

void NcclTestsTable::row(const Measurement& out_of_place, const Measurement& in_place) {
  const RankAggregation aggregation = context_.options->aggregation;
  if (out_of_place.scope != "cluster") {
    // Node and pair scopes give one row per group; say whose row follows.
    std::string nodes;
    for (const auto& node : out_of_place.group_nodes)
      nodes += (nodes.empty() ? "" : " ") + node;
    fmt::print(out_, "# {} {}: {}\n", out_of_place.scope, out_of_place.group, nodes);
  }
  fmt::print(out_, "{}\n", row_text(out_of_place, in_place, aggregation, context_.ranks));
  for (const Measurement* m : {&out_of_place, &in_place}) {
    if (m->unsupported || m->ranks.empty()) continue;
    const auto figures = derive_figures(*m, aggregation);
    busbw_sum_ += figures.busbw_bytes_per_second / 1e9;
    ++busbw_count_;
    if (figures.wrong_elements && *figures.wrong_elements > 0) {
      ++out_of_bounds_;
      for (const int rank : figures.wrong_ranks) {
        const auto& r = rank_entry(*m, rank);
        const auto& node = context_.ranks.at(static_cast<std::size_t>(rank)).node;
        fmt::print(out_, "#  ^ {}: {} wrong elements on rank {} ({}) in {} of {} iterations\n",
                   m->in_place ? "in-place" : "out-of-place", r.wrong_elements, rank, node,
                   r.wrong_iterations, m->iteration_seconds.size());
      }
    }
  }
  std::fflush(out_);
}

void NcclTestsTable::note(const std::string& message) {
  fmt::print(out_, "# {}\n", message);
  std::fflush(out_);
}

void NcclTestsTable::end(const CollectiveInfo& collective) {
  fmt::print(out_, "# Out of bounds values : {} {}\n", out_of_bounds_,
             out_of_bounds_ == 0 ? "OK" : "FAILED");
  fmt::print(out_, "# Avg bus bandwidth    : {:g} \n",
             busbw_count_ ? busbw_sum_ / busbw_count_ : 0.0);
  fmt::print(out_, "#\n# Collective test concluded: {}\n#\n\n", collective.nccl_tests_name);
  std::fflush(out_);
}

}  // namespace commcert
