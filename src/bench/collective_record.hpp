#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "bench/measurement.hpp"
#include "comm/watchdog.hpp"
#include "core/json.hpp"
#include "core/rank_identity.hpp"
#include "core/record.hpp"
#include "records/collective.hpp"

namespace commcert {

// Record fields shared by every collective record of a run.
struct CollectiveRecordContext {
  RecordOrigin origin;       // the writing rank
  std::string_view backend;  // "mpi" or "nccl"
  std::string_view scope = "cluster";
  RankAggregation aggregation = RankAggregation::kMean;
  const std::vector<RankIdentity>* ranks = nullptr;  // global rank -> node
};

// kind "collective": one size and placement (docs/records.md, records/collective.hpp).
// `figures`: the measurement's figures when already derived, so the record and the table beside
// it show one derivation (derived here when nullopt).
[[nodiscard]] CollectiveRecord collective_record_of(
    const CollectiveRecordContext& context, const Measurement& measurement,
    const std::optional<MeasurementFigures>& figures = std::nullopt);
[[nodiscard]] Json collective_record(const CollectiveRecordContext& context,
                                     const Measurement& measurement);
// The same with the measurement's figures already derived, so the record and the table beside
// it show one derivation (derived here when nullopt).
[[nodiscard]] Json collective_record(const CollectiveRecordContext& context,
                                     const Measurement& measurement,
                                     const std::optional<MeasurementFigures>& figures);

// kind "collective", status "timeout": who did not arrive at which operation.
[[nodiscard]] CollectiveTimeoutRecord timeout_record_of(const CollectiveRecordContext& context,
                                                        const TimeoutReport& report);
[[nodiscard]] Json timeout_record(const CollectiveRecordContext& context,
                                  const TimeoutReport& report);

// One line for stderr and the record's reason: "ranks 2 (node2) did not arrive at ...".
[[nodiscard]] std::string describe_timeout(const TimeoutReport& report,
                                           const std::vector<RankIdentity>& ranks);

[[nodiscard]] std::string_view name_of(RankAggregation aggregation);

}  // namespace commcert
