#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json.hpp"

namespace commcert {

// Version of the record and meta.json schema (docs/records.md). Compatibility rule: adding a
// field keeps the version; renaming, removing or changing the meaning or unit of a field bumps
// it, and the validator keeps reading every older version (fixtures in tests/fixtures/records).
inline constexpr int kRecordSchemaVersion = 1;

enum class RecordStatus { kOk, kFail, kError, kTimeout, kSkipped };

[[nodiscard]] std::string_view to_string(RecordStatus status);

// Where a GPU-bound record came from. Absent fields are JSON null, never zero.
struct GpuIdentity {
  int index = -1;
  std::string uuid;
  std::string pci_bus_id;
  std::string name;
};

[[nodiscard]] Json to_json(const std::optional<GpuIdentity>& gpu);

// Who writes a record: the fields every record carries.
struct RecordOrigin {
  std::string run_id;
  std::string host;  // node identity (docs/records.md "Node identity"), not always the hostname
  int rank = 0;
  int local_rank = 0;
  std::optional<GpuIdentity> gpu;
};

// A record with the common fields filled in; callers add the kind-specific ones.
[[nodiscard]] Json make_record(const RecordOrigin& origin, std::string_view kind,
                               RecordStatus status);

// What a stage's record of one kind (burn, membw, health, link, p2p) starts with: who wrote it,
// its status and, when there is one, why (`reason`).
struct RecordHead {
  RecordOrigin origin;
  RecordStatus status = RecordStatus::kOk;
  std::optional<std::string> reason;
};

// make_record's fields, then `reason` when the head has one.
[[nodiscard]] Json make_record(const RecordHead& head, std::string_view kind);

// ISO 8601 UTC with milliseconds, e.g. "2026-11-21T23:39:00.123Z".
[[nodiscard]] std::string utc_timestamp_now();

}  // namespace commcert
