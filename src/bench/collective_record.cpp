#include "bench/collective_record.hpp"

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

Json common_fields(const CollectiveRecordContext& context, const Measurement& m,
                   RecordStatus status) {
  Json record = make_record(context.origin, "collective", status);
  record["backend"] = context.backend;
  record["collective"] = collective_info(m.collective).name;
  record["dtype"] = name_of(m.type);
  record["redop"] = m.op ? Json(name_of(*m.op)) : Json(nullptr);
  record["root"] = m.root ? Json(*m.root) : Json(nullptr);
  record["bytes"] = m.bytes;
  record["count"] = m.count;
  record["nranks"] = m.nranks;
  record["nodes"] = m.group_nodes.size();
  record["scope"] = m.scope;
  record["round"] = m.scope == "pairs" ? Json(m.round) : Json(nullptr);
  if (m.pair_list) record["pair_list"] = true;
  record["group"] = m.group;
  record["group_nodes"] = m.group_nodes;
  record["in_place"] = m.in_place;
  record["cycle"] = m.cycle;
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

Json collective_record(const CollectiveRecordContext& context, const Measurement& m) {
  return collective_record(context, m, std::nullopt);
}

Json collective_record(const CollectiveRecordContext& context, const Measurement& m,
                       const std::optional<MeasurementFigures>& figures) {
  const auto& ranks = *context.ranks;
  if (m.unsupported) {
    Json record = common_fields(context, m, RecordStatus::kSkipped);
    record["reason"] = *m.unsupported;
    return record;
  }
  const MeasurementFigures f = figures ? *figures : derive_figures(m, context.aggregation);
  const bool wrong = f.wrong_elements && *f.wrong_elements > 0;
  Json record = common_fields(context, m, wrong ? RecordStatus::kFail : RecordStatus::kOk);
  record["check"] = f.wrong_elements.has_value();
  record["iterations"] = m.iteration_seconds.size();
  record["warmup_iterations"] = m.warmup_iterations;
  record["aggregation"] = name_of(context.aggregation);
  record["time_s"] = f.time_seconds;
  record["timing"] = name_of(f.timing);
  record["algbw_bytes_per_s"] = f.algbw_bytes_per_second;
  record["busbw_bytes_per_s"] = f.busbw_bytes_per_second;
  record["bus_factor"] = collective_info(m.collective).bus_factor(m.nranks);

  Json rank_times = Json::array();
  Json group_ranks = Json::array();
  for (const auto& rank : m.ranks) {
    rank_times.push_back(rank.mean_seconds);
    group_ranks.push_back(rank.rank);
  }
  record["group_ranks"] = std::move(group_ranks);
  record["rank_time_s"] = std::move(rank_times);
  record["rank_time"] = {{"min_s", f.rank_min_seconds},
                         {"median_s", f.rank_median_seconds},
                         {"max_s", f.rank_max_seconds}};
  record["straggler"] = {{"rank", f.straggler_rank},
                         {"host", node_of(ranks, f.straggler_rank)},
                         {"time_s", m.ranks[f.straggler_index].mean_seconds},
                         {"lead_s", f.straggler_lead_seconds}};
  record["iteration_time"] = {{"count", f.iterations.count},  {"min_s", f.iterations.min},
                              {"p50_s", f.iterations.median}, {"p99_s", f.iterations.p99},
                              {"max_s", f.iterations.max},    {"mean_s", f.iterations.mean},
                              {"cv", f.iterations.cv}};
  record["wrong_elements"] = f.wrong_elements ? Json(*f.wrong_elements) : Json(nullptr);
  Json wrong_ranks = Json::array();
  for (const int rank : f.wrong_ranks) {
    const auto& r = rank_entry(m, rank);
    wrong_ranks.push_back({{"rank", rank},
                           {"host", node_of(ranks, rank)},
                           {"wrong_elements", r.wrong_elements},
                           {"wrong_iterations", r.wrong_iterations}});
  }
  record["wrong_ranks"] = std::move(wrong_ranks);
  if (m.adaptive) {
    record["adaptive"] = {
        {"target_ci_pct", m.adaptive->target_ci_percent},
        {"achieved_ci_pct",
         m.adaptive->achieved_ci_percent ? Json(*m.adaptive->achieved_ci_percent) : Json(nullptr)},
        {"stopped_by", m.adaptive->stopped_by}};
  } else {
    record["adaptive"] = nullptr;
  }
  if (wrong) {
    record["reason"] = fmt::format("{} wrong elements on {} rank(s), first rank {} ({})",
                                   *f.wrong_elements, f.wrong_ranks.size(), f.wrong_ranks.front(),
                                   node_of(ranks, f.wrong_ranks.front()));
  }
  return record;
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

Json timeout_record(const CollectiveRecordContext& context, const TimeoutReport& report) {
  const auto& ranks = *context.ranks;
  Json record = make_record(context.origin, "collective", RecordStatus::kTimeout);
  record["backend"] = context.backend;
  record["scope"] = context.scope;
  record["operation"] = report.context;
  record["timeout_s"] = report.timeout_seconds;
  record["nranks"] = report.ranks.size();
  Json not_arrived = Json::array();
  for (const int rank : report.culprit_ranks) {
    not_arrived.push_back({{"rank", rank}, {"host", node_of(ranks, rank)}});
  }
  record["not_arrived"] = std::move(not_arrived);
  record["attributed"] = report.attributed;
  Json states = Json::array();
  for (const auto& state : report.ranks) {
    states.push_back({{"rank", state.rank},
                      {"host", node_of(ranks, state.rank)},
                      {"responded", state.responded},
                      {"operations_begun", state.operations_begun},
                      {"inside_operation", state.inside_operation},
                      {"idle_s", state.responded ? Json(state.idle_seconds) : Json(nullptr)}});
  }
  record["rank_states"] = std::move(states);
  record["reason"] = describe_timeout(report, ranks);
  return record;
}

}  // namespace commcert
