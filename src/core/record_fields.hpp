#pragma once

// The names of the fields every record carries (docs/records.md, "Fields every record carries"),
// spelled once: make_record writes them, the validator's reader (validate/detail/) matches them.
// The kinds' own fields are named in records/*.hpp.

namespace commcert {

struct RecordFields {
  static constexpr const char* kSchema = "schema";
  static constexpr const char* kRunId = "run_id";
  static constexpr const char* kKind = "kind";
  static constexpr const char* kStatus = "status";
  static constexpr const char* kTime = "time";
  static constexpr const char* kHost = "host";
  static constexpr const char* kRank = "rank";
  static constexpr const char* kLocalRank = "local_rank";
  static constexpr const char* kGpu = "gpu";
  static constexpr const char* kReason = "reason";
};

// Inside `gpu` (GpuIdentity).
struct GpuIdentityFields {
  static constexpr const char* kIndex = "index";
  static constexpr const char* kUuid = "uuid";
  static constexpr const char* kPciBusId = "pci_bus_id";
  static constexpr const char* kName = "name";
};

}  // namespace commcert
