#include "bench/collective_record.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bench/collectives.hpp"
#include "bench/datatypes.hpp"

namespace commcert {
namespace {

const std::string& node_of(const std::vector<RankIdentity>& ranks, int rank) {
  static const std::string kUnknown = "unknown";
  const auto index = static_cast<std::size_t>(rank);
  return index < ranks.size() ? ranks[index].node : kUnknown;
}

// The measurement's identity: what every collective record of it says, measured or not.
CollectiveRecord identity_of(const CollectiveRecordContext& context, const Measurement& m,
                             RecordStatus status) {
  CollectiveRecord record;
  record.origin = context.origin;
  record.status = status;
  record.backend = context.backend;
  record.collective = collective_info(m.collective).name;
  record.dtype = name_of(m.type);
  if (m.op) record.redop = std::string(name_of(*m.op));
  record.root = m.root;
  record.bytes = m.bytes;
  record.count = m.count;
  record.nranks = m.nranks;
  record.nodes = m.group_nodes.size();
  record.scope = m.scope;
  if (m.scope == CollectiveRecord::kScopePairs || m.scope == CollectiveRecord::kScopeGroups) {
    record.round = m.round;
  }
  record.pair_list = m.pair_list;
  record.group = m.group;
  record.group_nodes = m.group_nodes;
  record.in_place = m.in_place;
  record.cycle = m.cycle;
  return record;
}

}  // namespace

std::string_view name_of(RankAggregation aggregation) {
  switch (aggregation) {
    case RankAggregation::kRankZero:
      return "rank0";
    case RankAggregation::kMin:
      return "min";
    case RankAggregation::kMax:
      return "max";
    case RankAggregation::kMean:
      return "mean";
  }
  return "mean";
}

CollectiveRecord collective_record_of(const CollectiveRecordContext& context, const Measurement& m,
                                      const std::optional<MeasurementFigures>& figures) {
  const auto& ranks = *context.ranks;
  if (m.unsupported) {
    CollectiveRecord record = identity_of(context, m, RecordStatus::kSkipped);
    record.reason = *m.unsupported;
    return record;
  }
  const MeasurementFigures f = figures ? *figures : derive_figures(m, context.aggregation);
  const bool wrong = f.wrong_elements && *f.wrong_elements > 0;
  CollectiveRecord record =
      identity_of(context, m, wrong ? RecordStatus::kFail : RecordStatus::kOk);
  CollectiveResult& r = record.result.emplace();
  r.check = f.wrong_elements.has_value();
  r.iterations = m.iteration_seconds.size();
  r.warmup_iterations = m.warmup_iterations;
  r.aggregation = name_of(context.aggregation);
  r.time_s = f.time_seconds;
  r.timing = name_of(f.timing);
  r.algbw_bytes_per_s = f.algbw_bytes_per_second;
  r.busbw_bytes_per_s = f.busbw_bytes_per_second;
  r.bus_factor = collective_info(m.collective).bus_factor(m.nranks);
  for (const auto& rank : m.ranks) {
    r.rank_time_s.push_back(rank.mean_seconds);
    r.group_ranks.push_back(rank.rank);
  }
  r.rank_time = {f.rank_min_seconds, f.rank_median_seconds, f.rank_max_seconds};
  r.straggler = {f.straggler_rank, node_of(ranks, f.straggler_rank),
                 m.ranks[f.straggler_index].mean_seconds, f.straggler_lead_seconds};
  r.iteration_time = {f.iterations.count, f.iterations.min,  f.iterations.median, f.iterations.p99,
                      f.iterations.max,   f.iterations.mean, f.iterations.cv,     {}};
  // The samples themselves, so `compare` tests with them rather than with their moments.
  const std::size_t every =
      (m.iteration_seconds.size() + IterationTimes::kMaxSamples - 1) / IterationTimes::kMaxSamples;
  for (std::size_t i = 0; i < m.iteration_seconds.size(); i += std::max<std::size_t>(every, 1))
    r.iteration_time.samples_s.push_back(m.iteration_seconds[i]);
  r.wrong_elements = f.wrong_elements;
  for (const int rank : f.wrong_ranks) {
    const auto& entry = rank_entry(m, rank);
    r.wrong_ranks.push_back(
        {rank, node_of(ranks, rank), entry.wrong_elements, entry.wrong_iterations});
  }
  if (m.adaptive) {
    r.adaptive = AdaptiveStop{m.adaptive->target_ci_percent, m.adaptive->achieved_ci_percent,
                              m.adaptive->stopped_by};
  }
  if (wrong) {
    record.reason = fmt::format("{} wrong elements on {} rank(s), first rank {} ({})",
                                *f.wrong_elements, f.wrong_ranks.size(), f.wrong_ranks.front(),
                                node_of(ranks, f.wrong_ranks.front()));
  }
  return record;
}

Json collective_record(const CollectiveRecordContext& context, const Measurement& m) {
  return to_json(collective_record_of(context, m, std::nullopt));
}

Json collective_record(const CollectiveRecordContext& context, const Measurement& m,
                       const std::optional<MeasurementFigures>& figures) {
  return to_json(collective_record_of(context, m, figures));
}

std::string describe_timeout(const TimeoutReport& report, const std::vector<RankIdentity>& ranks) {
  const std::string operation = report.context.empty() ? "setup" : report.context;
  if (!report.attributed) {
    return fmt::format(
        "{} did not complete within {} s (peers could not be asked: MPI without "
        "MPI_THREAD_MULTIPLE)",
        operation, report.timeout_seconds);
  }
  if (report.culprit_ranks.empty()) {
    return fmt::format(
        "{} did not complete within {} s; every rank arrived and is waiting inside "
        "it (suspect the interconnect, not a rank)",
        operation, report.timeout_seconds);
  }
  std::string who;
  for (const int rank : report.culprit_ranks) {
    if (!who.empty()) who += ", ";
    who += fmt::format("{} ({})", rank, node_of(ranks, rank));
  }
  return fmt::format("rank{} {} did not arrive at {} within {} s",
                     report.culprit_ranks.size() > 1 ? "s" : "", who, operation,
                     report.timeout_seconds);
}

CollectiveTimeoutRecord timeout_record_of(const CollectiveRecordContext& context,
                                          const TimeoutReport& report) {
  const auto& ranks = *context.ranks;
  CollectiveTimeoutRecord record;
  record.origin = context.origin;
  record.backend = context.backend;
  record.scope = context.scope;
  record.operation = report.context;
  record.timeout_s = report.timeout_seconds;
  record.nranks = report.ranks.size();
  for (const int rank : report.culprit_ranks)
    record.not_arrived.push_back({rank, node_of(ranks, rank)});
  record.attributed = report.attributed;
  for (const auto& state : report.ranks) {
    record.rank_states.push_back(
        {state.rank, node_of(ranks, state.rank), state.responded, state.operations_begun,
         state.inside_operation,
         state.responded ? std::optional<double>(state.idle_seconds) : std::nullopt});
  }
  record.reason = describe_timeout(report, ranks);
  return record;
}

Json timeout_record(const CollectiveRecordContext& context, const TimeoutReport& report) {
  return to_json(timeout_record_of(context, report));
}

}  // namespace commcert
