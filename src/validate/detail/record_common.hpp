#pragma once

// What the per-kind record parsers (run_parser.cpp, collective_parser.cpp, burn_parser.cpp,
// membw_parser.cpp, health_parser.cpp) share: the fields every record carries, small readers
// and the state kept between records. Field names come from the record definitions
// (core/record.hpp, records/*.hpp).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/record.hpp"
#include "core/record_fields.hpp"
#include "records/health.hpp"
#include "validate/detail/ondemand.hpp"
#include "validate/evidence.hpp"

namespace commcert::detail {

inline int small_int(od::value& value, const Where& field) {
  const std::int64_t v = integer(value, field);
  if (v < -1 || v > 1'000'000'000) record_error(field, fmt::format("out of range ({})", v));
  return static_cast<int>(v);
}

inline std::optional<int> optional_small_int(od::value& value, const Where& field) {
  if (is_null(value, field)) return std::nullopt;
  return small_int(value, field);
}

inline od::object object_of(od::value& value) {
  return object(value, "element");
}

// The fields every record carries (docs/records.md).
struct CommonFields {
  std::optional<std::int64_t> schema;
  std::optional<std::string_view> run_id;
  std::optional<RecordStatus> status;
  std::optional<std::string_view> host;
  int gpu_index = -1;
  std::string_view gpu_uuid;
  std::string_view reason;

  // Returns false for a field that is not common.
  bool field(std::string_view key, od::value& value) {
    using F = RecordFields;
    switch (key_id(key)) {
      case key_id(F::kSchema):
        if (key != F::kSchema) return false;
        schema = integer(value, key);
        return true;
      case key_id(F::kRunId):
        if (key != F::kRunId) return false;
        run_id = string(value, key);
        return true;
      case key_id(F::kStatus):
        if (key != F::kStatus) return false;
        status = parse_status(string(value, key));
        return true;
      case key_id(F::kHost):
        if (key != F::kHost) return false;
        host = string(value, key);
        return true;
      case key_id(F::kGpu):
        if (key != F::kGpu) return false;
        if (is_null(value, key)) return true;
        read_gpu(value);
        return true;
      case key_id(F::kReason):
        if (key != F::kReason) return false;
        reason = string(value, key);
        return true;
      case key_id(F::kKind):
        return key == F::kKind;
      case key_id(F::kTime):
        return key == F::kTime;
      case key_id(F::kRank):
        return key == F::kRank;
      case key_id(F::kLocalRank):
        return key == F::kLocalRank;
      default:
        return false;
    }
  }

  // Throws RecordError or UnsupportedSchema for a record that cannot be judged.
  void require() const;

 private:
  static RecordStatus parse_status(std::string_view text);
  void read_gpu(od::value& value);
};

// A GPU's Xid events (health `xid_events`, burn `telemetry.xid_events`); empty for null.
[[nodiscard]] std::vector<XidEvidence> read_xids(od::value& value, const Where& where,
                                                 StringPool& strings);

// The evidence the parsers add to, and buffers reused between records.
struct ParseState {
  explicit ParseState(Evidence& e) : evidence(e) {}

  Evidence& evidence;
  od::parser parser;
  std::vector<WrongRank> wrong;     // a collective record's wrong ranks
  std::vector<NodeId> group_nodes;  // a collective record's group
  std::vector<NodeId> last_group_nodes;
  std::uint32_t last_group = kNoString;

  // Reads every field: common ones into the result, the others through handler(key, value).
  template <typename Handler>
  CommonFields read(od::object& object, Handler&& handler) {
    CommonFields common;
    for_each_field(object, "record", [&](std::string_view key, od::value& value) {
      if (!common.field(key, value)) handler(key, value);
    });
    common.require();
    return common;
  }

  // The common fields of a record about one GPU (burn, membw, health component gpu).
  template <typename Record>
  void fill_gpu_record(Record& record, const CommonFields& c, EvidenceRef ref) {
    record.ref = ref;
    record.node = evidence.nodes.intern(*c.host);
    record.gpu.index = c.gpu_index;
    if (!c.gpu_uuid.empty()) record.gpu.uuid = evidence.strings.intern(c.gpu_uuid);
    record.status = *c.status;
    record.reason = c.reason;
  }
};

// One parser per record kind: each reads the rest of `object` into state.evidence.
void parse_run(ParseState& state, od::object& object, EvidenceRef ref);
void parse_collective(ParseState& state, od::object& object, EvidenceRef ref);
void parse_burn(ParseState& state, od::object& object, EvidenceRef ref);
void parse_membw(ParseState& state, od::object& object, EvidenceRef ref);
void parse_health(ParseState& state, od::object& object, EvidenceRef ref);
void parse_link(ParseState& state, od::object& object, EvidenceRef ref);
void parse_p2p(ParseState& state, od::object& object, EvidenceRef ref);

}  // namespace commcert::detail
