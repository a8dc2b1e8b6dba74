#include "cli/sweep_table.hpp"

#include "bench/datatypes.hpp"

namespace commcert {
namespace {

NcclTablePlacement table_placement(const Measurement& m,
                                   const std::optional<MeasurementFigures>& figures) {
  NcclTablePlacement placement;
  placement.in_place = m.in_place;
  placement.iterations = m.iteration_seconds.size();
  if (!figures) return placement;
  placement.figures =
      NcclTablePlacement::Figures{figures->time_seconds, figures->algbw_bytes_per_second,
                                  figures->busbw_bytes_per_second, figures->wrong_elements};
  for (const int rank : figures->wrong_ranks) {
    const RankMeasurement& r = rank_entry(m, rank);
    placement.wrong_ranks.push_back({rank, r.wrong_elements, r.wrong_iterations});
  }
  return placement;
}

}  // namespace

std::optional<MeasurementFigures> placement_figures(const Measurement& m,
                                                    RankAggregation aggregation) {
  if (m.unsupported || m.ranks.empty()) return std::nullopt;
  return derive_figures(m, aggregation);
}

NcclTableSweep nccl_table_sweep(const SweepOptions& options) {
  NcclTableSweep sweep;
  sweep.min_bytes = options.min_bytes;
  sweep.max_bytes = options.max_bytes;
  sweep.step_bytes = options.step_bytes;
  sweep.step_factor = options.step_factor;
  sweep.warmup_iterations = options.warmup_iterations;
  sweep.iterations = options.iterations;
  sweep.check = options.check;
  sweep.graph_launches = options.graph_launches;
  return sweep;
}

NcclTableRow nccl_table_row(const Measurement& out_of_place, const Measurement& in_place,
                            const std::optional<MeasurementFigures>& out_of_place_figures,
                            const std::optional<MeasurementFigures>& in_place_figures) {
  const Measurement& m = out_of_place;
  NcclTableRow row;
  row.bytes = m.bytes;
  row.count = m.count;
  row.type = std::string(name_of(m.type));
  if (m.op) row.redop = std::string(name_of(*m.op));
  row.root = m.root.value_or(-1);
  row.scope = m.scope;
  row.group = m.group;
  row.group_nodes = m.group_nodes;
  row.out_of_place = table_placement(out_of_place, out_of_place_figures);
  row.in_place = table_placement(in_place, in_place_figures);
  return row;
}

}  // namespace commcert
