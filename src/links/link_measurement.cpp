#include "links/link_measurement.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "core/stats.hpp"

namespace commcert {

LinkMeasurement link_measurement(LinkTest test, std::uint64_t bytes, int window, int warmup,
                                 std::vector<double> samples_s) {
  if (samples_s.empty()) throw std::invalid_argument("link_measurement: no samples");
  LinkMeasurement m;
  m.bytes = bytes;
  m.window = window;
  m.warmup = warmup;
  m.iterations = static_cast<int>(samples_s.size());
  const SampleSummary summary = summarize(samples_s);
  m.min_s = summary.min;
  m.median_s = summary.median;
  m.max_s = summary.max;
  if (test == LinkTest::kWriteLatency) {
    m.latency_s = summary.median;
  } else if (summary.median > 0) {
    m.bytes_per_s = static_cast<double>(bytes_moved(test, bytes, window)) / summary.median;
  }
  m.samples_s = std::move(samples_s);
  return m;
}

LinkRecord link_test_record(RecordOrigin origin, std::string_view transport,
                            std::string_view memory, LinkTest test, int round, const LinkPair& pair,
                            int from, LinkMeasurement measurement) {
  const auto first = static_cast<std::size_t>(from);
  const auto second = static_cast<std::size_t>(1 - from);
  LinkRecord record;
  record.origin = std::move(origin);
  record.transport = std::string(transport);
  record.memory = std::string(memory);
  record.test = std::string(name_of(test));
  record.round = round;
  record.rail = pair.rail;
  record.nodes = {pair.nodes[first], pair.nodes[second]};
  record.ranks = {pair.ranks[first], pair.ranks[second]};
  record.devices = {std::nullopt, std::nullopt};
  record.registrations = {std::nullopt, std::nullopt};
  record.measurement = std::move(measurement);
  return record;
}

LinkRecord lone_link_record(RecordOrigin origin, std::string_view transport,
                            std::string_view memory, int rank, std::string reason) {
  LinkRecord record;
  record.nodes = {origin.host};
  record.origin = std::move(origin);
  record.status = RecordStatus::kSkipped;
  record.reason = std::move(reason);
  record.transport = std::string(transport);
  record.memory = std::string(memory);
  record.ranks = {rank};
  record.devices = {std::nullopt};
  record.registrations = {std::nullopt};
  return record;
}

std::map<std::string, std::int64_t> counter_deltas(
    const std::map<std::string, std::uint64_t>& before,
    const std::map<std::string, std::uint64_t>& after) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, now] : after) {
    const auto then = before.find(name);
    if (then == before.end()) continue;
    const std::uint64_t grew = now >= then->second ? now - then->second : now;
    out[name] = static_cast<std::int64_t>(std::min(grew, kMax));
  }
  return out;
}

}  // namespace commcert
