#include <algorithm>

#include "records/link.hpp"
#include "validate/detail/record_common.hpp"

namespace commcert::detail {
namespace {

using R = LinkRecord;
using M = LinkMeasurement;
using C = LinkCounterDeltas;

void read_counter_end(od::value& element, LinkEvidence& record, Evidence& evidence) {
  const Where where{R::kCounterDeltas, "", true};
  NodeId node = kNoString;
  StringId device = kNoString;
  int port = 0;
  std::vector<std::pair<StringId, std::int64_t>> grown;
  std::vector<StringId> saturated;
  for_each_field(object_of(element), where, [&](std::string_view k, od::value& v) {
    if (k == C::kNode) {
      node = evidence.nodes.intern(node_name(v, {R::kCounterDeltas, C::kNode, true}));
    } else if (k == C::kDevice) {
      device = evidence.strings.intern(string(v, {R::kCounterDeltas, C::kDevice, true}));
    } else if (k == C::kPort) {
      port = small_int(v, {R::kCounterDeltas, C::kPort, true});
    } else if (k == C::kDeltas) {
      for_each_field(object(v, {R::kCounterDeltas, C::kDeltas, true}), where,
                     [&](std::string_view name, od::value& count) {
                       const std::int64_t delta = integer(count, {C::kDeltas, name});
                       if (delta < 0) record_error({C::kDeltas, name}, "negative delta");
                       if (delta > 0) grown.emplace_back(evidence.strings.intern(name), delta);
                     });
    } else if (k == C::kSaturated) {
      for_each_element(
          array(v, {R::kCounterDeltas, C::kSaturated, true}), C::kSaturated, [&](od::value& name) {
            saturated.push_back(
                evidence.strings.intern(string(name, {R::kCounterDeltas, C::kSaturated, true})));
          });
    }
  });
  if (node == kNoString) record_error(where, "counter deltas without a node");
  for (const auto& [counter, delta] : grown) {
    const bool stuck = std::find(saturated.begin(), saturated.end(), counter) != saturated.end();
    record.counters.push_back({node, device, port, counter, delta, stuck});
  }
  // A counter at its maximum that did not grow may still have counted errors: it is evidence too.
  for (const StringId counter : saturated) {
    const bool listed =
        std::any_of(grown.begin(), grown.end(), [&](const auto& g) { return g.first == counter; });
    if (!listed) record.counters.push_back({node, device, port, counter, 0, true});
  }
}

}  // namespace

void parse_link(ParseState& state, od::object& object, EvidenceRef ref) {
  Evidence& evidence = state.evidence;
  LinkEvidence record;
  std::vector<NodeId> nodes;
  std::vector<int> ranks;
  bool has_bytes = false;
  const CommonFields c = state.read(object, [&](std::string_view key, od::value& value) {
    if (key == R::kTransport) {
      record.transport = evidence.strings.intern(string(value, key));
    } else if (key == R::kMemory) {
      record.memory = evidence.strings.intern(string(value, key));
    } else if (key == R::kTest) {
      if (const auto test = optional_string(value, key))
        record.test = evidence.strings.intern(*test);
    } else if (key == R::kRail) {
      record.rail = optional_small_int(value, key).value_or(-1);
    } else if (key == R::kNodes) {
      for_each_element(array(value, key), key, [&](od::value& element) {
        nodes.push_back(evidence.nodes.intern(node_name(element, {R::kNodes, "", true})));
      });
    } else if (key == R::kRanks) {
      lenient_ranks(value, ranks);
    } else if (key == M::kBytes) {
      const std::int64_t bytes = integer(value, key);
      if (bytes <= 0) record_error(key, "must be positive");
      record.bytes = static_cast<std::uint64_t>(bytes);
      has_bytes = true;
    } else if (key == M::kBytesPerS) {
      record.bytes_per_s = optional_number(value, key);
    } else if (key == M::kLatencyS) {
      record.latency_s = optional_number(value, key);
    } else if (key == R::kCounterDeltas) {
      if (is_null(value, key)) return;
      for_each_element(array(value, key), key,
                       [&](od::value& element) { read_counter_end(element, record, evidence); });
    }
  });
  // A timeout record (written by the stage session) names only its writer.
  if (nodes.empty()) nodes.push_back(evidence.nodes.intern(*c.host));
  if (nodes.size() > 2) record_error(R::kNodes, "must name one or two nodes");
  if (nodes.size() == 2 && nodes[0] == nodes[1])
    record_error(R::kNodes, "a node paired with itself");
  record.ref = ref;
  record.run = evidence.run_index(*c.run_id);
  record.writer = evidence.nodes.intern(*c.host);
  record.status = *c.status;
  record.reason = c.reason;
  record.from = nodes.front();
  if (nodes.size() == 2) record.to = nodes[1];
  if (record.status == RecordStatus::kOk || record.status == RecordStatus::kFail) {
    // A measurement the validator cannot judge is lost input, never a pass.
    if (record.transport == kNoString) record_error(R::kTransport, "missing for a measurement");
    if (record.test == kNoString) record_error(R::kTest, "missing for a measurement");
    if (record.to == kNoString) record_error(R::kNodes, "a measurement names two nodes");
    if (!has_bytes) record_error(M::kBytes, "missing for a measurement");
    const bool latency = evidence.text(record.test) == "write_lat";
    if (latency && !record.latency_s) record_error(M::kLatencyS, "missing for a latency test");
    if (!latency && !record.bytes_per_s) {
      record_error(M::kBytesPerS, "missing for a bandwidth test");
    }
  }
  if (is_fault(record.status)) {
    // A link's fault names its ends, by node and by rank, and its writer.
    FaultRecord& fault = state.add_fault(c, ref, R::kKind, "links");
    fault.named.insert(fault.named.end(), nodes.begin(), nodes.end());
    fault.ranks.insert(fault.ranks.end(), ranks.begin(), ranks.end());
  }
  evidence.links.push_back(std::move(record));
}

}  // namespace commcert::detail
