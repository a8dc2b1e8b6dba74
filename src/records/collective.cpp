#include "records/collective.hpp"

#include "core/record_fields.hpp"
#include "records/json_values.hpp"

namespace commcert {
namespace {

using R = CollectiveRecord;

void add_result(Json& out, const CollectiveResult& r) {
  using F = CollectiveResult;
  out[F::kCheck] = r.check;
  out[F::kIterations] = r.iterations;
  out[F::kWarmupIterations] = r.warmup_iterations;
  out[F::kAggregation] = r.aggregation;
  out[F::kTimeS] = r.time_s;
  out[F::kTiming] = r.timing;
  out[F::kAlgbw] = r.algbw_bytes_per_s;
  out[F::kBusbw] = r.busbw_bytes_per_s;
  out[F::kBusFactor] = r.bus_factor;
  out[F::kGroupRanks] = r.group_ranks;
  out[F::kRankTimeS] = r.rank_time_s;
  out[F::kRankTime] = {{RankTimeSpread::kMinS, r.rank_time.min_s},
                       {RankTimeSpread::kMedianS, r.rank_time.median_s},
                       {RankTimeSpread::kMaxS, r.rank_time.max_s}};
  out[F::kStraggler] = {{CollectiveStraggler::kRank, r.straggler.rank},
                        {CollectiveStraggler::kHost, r.straggler.host},
                        {CollectiveStraggler::kTimeS, r.straggler.time_s},
                        {CollectiveStraggler::kLeadS, r.straggler.lead_s}};
  const IterationTimes& it = r.iteration_time;
  out[F::kIterationTime] = {{IterationTimes::kCount, it.count}, {IterationTimes::kMinS, it.min_s},
                            {IterationTimes::kP50S, it.p50_s},  {IterationTimes::kP99S, it.p99_s},
                            {IterationTimes::kMaxS, it.max_s},  {IterationTimes::kMeanS, it.mean_s},
                            {IterationTimes::kCv, it.cv}};
  if (!it.samples_s.empty()) out[F::kIterationTime][IterationTimes::kSamplesS] = it.samples_s;
  out[F::kWrongElements] = or_null(r.wrong_elements);
  Json wrong_ranks = Json::array();
  for (const auto& w : r.wrong_ranks) {
    wrong_ranks.push_back({{WrongRankEntry::kRank, w.rank},
                           {WrongRankEntry::kHost, w.host},
                           {WrongRankEntry::kWrongElements, w.wrong_elements},
                           {WrongRankEntry::kWrongIterations, w.wrong_iterations}});
  }
  out[F::kWrongRanks] = std::move(wrong_ranks);
  if (r.adaptive) {
    out[F::kAdaptive] = {{AdaptiveStop::kTargetCiPct, r.adaptive->target_ci_pct},
                         {AdaptiveStop::kAchievedCiPct, or_null(r.adaptive->achieved_ci_pct)},
                         {AdaptiveStop::kStoppedBy, r.adaptive->stopped_by}};
  } else {
    out[F::kAdaptive] = nullptr;
  }
}

}  // namespace

Json to_json(const CollectiveRecord& r) {
  Json out = make_record(r.origin, R::kKind, r.status);
  out[R::kBackend] = r.backend;
  out[R::kCollective] = r.collective;
  out[R::kDtype] = r.dtype;
  out[R::kRedop] = or_null(r.redop);
  out[R::kRoot] = or_null(r.root);
  out[R::kBytes] = r.bytes;
  out[R::kCount] = r.count;
  out[R::kNranks] = r.nranks;
  out[R::kNodes] = r.nodes;
  out[R::kScope] = r.scope;
  out[R::kRound] = or_null(r.round);
  if (r.pair_list) out[R::kPairList] = true;
  out[R::kGroup] = r.group;
  out[R::kGroupNodes] = r.group_nodes;
  out[R::kInPlace] = r.in_place;
  out[R::kCycle] = r.cycle;
  if (r.result) add_result(out, *r.result);
  if (r.reason) out[RecordFields::kReason] = *r.reason;
  return out;
}

Json to_json(const CollectiveTimeoutRecord& r) {
  using F = CollectiveTimeoutRecord;
  Json out = make_record(r.origin, R::kKind, RecordStatus::kTimeout);
  out[R::kBackend] = r.backend;
  out[R::kScope] = r.scope;
  out[F::kOperation] = r.operation;
  out[F::kTimeoutS] = r.timeout_s;
  out[R::kNranks] = r.nranks;
  Json not_arrived = Json::array();
  for (const auto& n : r.not_arrived)
    not_arrived.push_back({{NotArrivedEntry::kRank, n.rank}, {NotArrivedEntry::kHost, n.host}});
  out[F::kNotArrived] = std::move(not_arrived);
  out[F::kAttributed] = r.attributed;
  Json states = Json::array();
  for (const auto& s : r.rank_states) {
    states.push_back({{RankStateEntry::kRank, s.rank},
                      {RankStateEntry::kHost, s.host},
                      {RankStateEntry::kResponded, s.responded},
                      {RankStateEntry::kOperationsBegun, s.operations_begun},
                      {RankStateEntry::kInsideOperation, s.inside_operation},
                      {RankStateEntry::kIdleS, or_null(s.idle_s)}});
  }
  out[F::kRankStates] = std::move(states);
  out[RecordFields::kReason] = r.reason;
  return out;
}

}  // namespace commcert
