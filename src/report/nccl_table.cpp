#include "report/nccl_table.hpp"

#include <fmt/format.h>

namespace commcert {
namespace {

// Per placement, nccl-tests 2.19 prints "  %7s  %6s  %6s  %6g" (time, algbw, busbw, #wrong as
// a double), or "  %7s  %6s  %6s    N/A" when nothing was checked.
std::string placement_fields(const NcclTablePlacement& placement) {
  if (!placement.figures) return fmt::format("  {:>7}  {:>6}  {:>6}    N/A", "N/A", "N/A", "N/A");
  const auto& f = *placement.figures;
  const std::string wrong = f.wrong_elements
                                ? fmt::format("  {:>6g}", static_cast<double>(*f.wrong_elements))
                                : std::string("    N/A");
  return fmt::format("  {:>7}  {:>6}  {:>6}{}", NcclTestsTable::fit_number(f.time_seconds * 1e6, 7),
                     NcclTestsTable::fit_number(f.algbw_bytes_per_second / 1e9, 6),
                     NcclTestsTable::fit_number(f.busbw_bytes_per_second / 1e9, 6), wrong);
}

std::string row_text(const NcclTableRow& row) {
  return fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", row.bytes, row.count, row.type,
                     row.redop, row.root) +
         placement_fields(row.out_of_place) + placement_fields(row.in_place);
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

void NcclTestsTable::begin(std::string_view name) {
  const NcclTableSweep& o = context_.sweep;
  out_of_bounds_ = 0;
  busbw_sum_ = 0;
  busbw_count_ = 0;
  fmt::print(out_, "# {}\n", context_.banner);
  for (const auto& warning : context_.warnings)
    fmt::print(out_, "# WARNING: {}\n", warning);
  fmt::print(out_, "# Collective test starting: {}\n", name);
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

void NcclTestsTable::row(const NcclTableRow& row) {
  if (row.scope != "cluster") {
    // Node and pair scopes give one row per group; say whose row follows.
    std::string nodes;
    for (const auto& node : row.group_nodes)
      nodes += (nodes.empty() ? "" : " ") + node;
    fmt::print(out_, "# {} {}: {}\n", row.scope, row.group, nodes);
  }
  fmt::print(out_, "{}\n", row_text(row));
  for (const NcclTablePlacement* placement : {&row.out_of_place, &row.in_place}) {
    if (!placement->figures) continue;
    const auto& f = *placement->figures;
    busbw_sum_ += f.busbw_bytes_per_second / 1e9;
    ++busbw_count_;
    if (f.wrong_elements && *f.wrong_elements > 0) {
      ++out_of_bounds_;
      for (const auto& wrong : placement->wrong_ranks) {
        const auto& node = context_.ranks.at(static_cast<std::size_t>(wrong.rank)).node;
        fmt::print(out_, "#  ^ {}: {} wrong elements on rank {} ({}) in {} of {} iterations\n",
                   placement->in_place ? "in-place" : "out-of-place", wrong.wrong_elements,
                   wrong.rank, node, wrong.wrong_iterations, placement->iterations);
      }
    }
  }
  std::fflush(out_);
}

void NcclTestsTable::note(const std::string& message) {
  fmt::print(out_, "# {}\n", message);
  std::fflush(out_);
}

void NcclTestsTable::end(std::string_view name) {
  fmt::print(out_, "# Out of bounds values : {} {}\n", out_of_bounds_,
             out_of_bounds_ == 0 ? "OK" : "FAILED");
  fmt::print(out_, "# Avg bus bandwidth    : {:g} \n",
             busbw_count_ ? busbw_sum_ / busbw_count_ : 0.0);
  fmt::print(out_, "#\n# Collective test concluded: {}\n#\n\n", name);
  std::fflush(out_);
}

}  // namespace commcert
