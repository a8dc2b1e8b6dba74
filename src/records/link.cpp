#include "records/link.hpp"

#include "records/json_values.hpp"

namespace commcert {
namespace {

void measurement_json(Json& out, const LinkMeasurement& m) {
  using M = LinkMeasurement;
  out[M::kBytes] = m.bytes;
  out[M::kWindow] = m.window;
  out[M::kIterations] = m.iterations;
  out[M::kWarmup] = m.warmup;
  out[M::kSamples] = m.samples_s;
  out[M::kMinS] = m.min_s;
  out[M::kMedianS] = m.median_s;
  out[M::kMaxS] = m.max_s;
  out[M::kBytesPerS] = or_null(m.bytes_per_s);
  out[M::kLatencyS] = or_null(m.latency_s);
}

Json counters_json(const std::optional<std::vector<LinkCounterDeltas>>& counters) {
  if (!counters) return nullptr;
  using C = LinkCounterDeltas;
  Json out = Json::array();
  for (const auto& end : *counters) {
    out.push_back({{C::kNode, end.node},
                   {C::kDevice, end.device},
                   {C::kPort, end.port},
                   {C::kDeltas, end.deltas},
                   {C::kSaturated, end.saturated}});
  }
  return out;
}

}  // namespace

Json to_json(const LinkRecord& record) {
  using R = LinkRecord;
  Json out = make_record(record, R::kKind);
  out[R::kTransport] = record.transport;
  out[R::kMemory] = record.memory;
  out[R::kTest] = or_null(record.test);
  out[R::kRound] = or_null(record.round);
  out[R::kRail] = or_null(record.rail);
  out[R::kNodes] = record.nodes;
  out[R::kRanks] = record.ranks;
  Json devices = Json::array();
  for (const auto& device : record.devices)
    devices.push_back(or_null(device));
  out[R::kDevices] = std::move(devices);
  Json registrations = Json::array();
  for (const auto& registration : record.registrations)
    registrations.push_back(or_null(registration));
  out[R::kRegistrations] = std::move(registrations);
  if (record.measurement) measurement_json(out, *record.measurement);
  out[R::kCounterDeltas] = counters_json(record.counter_deltas);
  return out;
}

}  // namespace commcert
