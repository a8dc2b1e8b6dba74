#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "comm/link_transport.hpp"
#include "links/link_schedule.hpp"
#include "records/link.hpp"

namespace commcert {

// The record's figures from the initiator's per-iteration seconds: the median time, and from it
// bytes/s (bandwidth tests, both directions counted for bidirectional) or the one-way latency.
// Throws std::invalid_argument for no samples.
[[nodiscard]] LinkMeasurement link_measurement(LinkTest test, std::uint64_t bytes, int window,
                                               int warmup, std::vector<double> samples_s);

// What one link test's record says, as `links` writes it on the initiating end: `from` (0 or 1)
// is the end of `pair` that initiated; `nodes` and `ranks` start with it.
[[nodiscard]] LinkRecord link_test_record(RecordOrigin origin, std::string_view transport,
                                          std::string_view memory, LinkTest test, int round,
                                          const LinkPair& pair, int from,
                                          LinkMeasurement measurement);

// The one record of a node that tested nothing (one node in the job, no transport): skipped.
[[nodiscard]] LinkRecord lone_link_record(RecordOrigin origin, std::string_view transport,
                                          std::string_view memory, int rank, std::string reason);

// How much each error counter grew between two reads of one port: counters read both times,
// after - before; a counter that went down was reset in between, and its after value is what it
// counted since (a lower bound). Counters read only once are left out.
[[nodiscard]] std::map<std::string, std::int64_t> counter_deltas(
    const std::map<std::string, std::uint64_t>& before,
    const std::map<std::string, std::uint64_t>& after);

}  // namespace commcert
