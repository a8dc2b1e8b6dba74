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

// A node name a record gives (its host, a straggler's or wrong rank's host, a group's or link's
// nodes, the run's rank map). A name that is no valid node name (records.md: what Slurm and file
// names take) refuses the record, naming the field and the name escaped to one line, so no
// verdict, report or Slurm command carries it as a node.
void check_node_name(std::string_view name, const Where& field);
inline std::string_view node_name(od::value& value, const Where& field) {
  const std::string_view name = string(value, field);
  check_node_name(name, field);
  return name;
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
  std::optional<int> rank;  // the writing rank; nullopt when absent or not a rank

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
        if (key != F::kRank) return false;
        read_rank(value);
        return true;
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
  // Read only to name the node of a fault through the run's rank map: a value that is no rank
  // leaves the record as readable as before (its host still names the node).
  void read_rank(od::value& value);
};

[[nodiscard]] inline bool is_fault(RecordStatus status) {
  return status == RecordStatus::kFail || status == RecordStatus::kError ||
         status == RecordStatus::kTimeout;
}

// A global rank, read only to name the node of a fault through its run's rank map: nullopt for
// anything that is not one (the record stays as readable as it was without this field).
[[nodiscard]] std::optional<int> lenient_rank(od::value& value);
// The ranks among an array's elements (nothing when it is no array).
void lenient_ranks(od::value& value, std::vector<int>& out);

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

  // Keeps a record of a fault (is_fault(status)), named by its host and rank; the caller adds
  // whom else it names. Called once the record has been read whole: a record refused after
  // this would be lost input, not a fault.
  FaultRecord& add_fault(const CommonFields& c, EvidenceRef ref, std::string_view kind,
                         std::string check) {
    FaultRecord& f = evidence.faults.emplace_back();
    f.ref = ref;
    f.run = evidence.run_index(*c.run_id);
    f.status = *c.status;
    f.kind = evidence.strings.intern(kind);
    f.check = std::move(check);
    f.gpu.index = c.gpu_index;
    if (!c.gpu_uuid.empty()) f.gpu.uuid = evidence.strings.intern(c.gpu_uuid);
    f.host = evidence.nodes.intern(*c.host);
    f.named.push_back(f.host);
    if (c.rank) f.ranks.push_back(*c.rank);
    f.reason = c.reason;
    return f;
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
