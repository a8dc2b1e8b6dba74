#pragma once

#include <optional>

#include "bench/measurement.hpp"
#include "bench/sweep_options.hpp"
#include "report/nccl_table.hpp"

namespace commcert {

// The sweep's side of the nccl-tests table: its options and measurements as the table's header
// and rows. The table (src/report) knows nothing of the sweep engine; this is the one place that
// knows both.

// A placement's figures, derived once for every output (the record and the table row);
// nullopt when it was not measured (unsupported by the backend, or no rank's results).
[[nodiscard]] std::optional<MeasurementFigures> placement_figures(const Measurement& measurement,
                                                                  RankAggregation aggregation);

[[nodiscard]] NcclTableSweep nccl_table_sweep(const SweepOptions& options);

// Both placements of one size as a row, showing the figures given (placement_figures).
[[nodiscard]] NcclTableRow nccl_table_row(
    const Measurement& out_of_place, const Measurement& in_place,
    const std::optional<MeasurementFigures>& out_of_place_figures,
    const std::optional<MeasurementFigures>& in_place_figures);

}  // namespace commcert
