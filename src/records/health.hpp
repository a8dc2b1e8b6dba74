#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// kind "health" (docs/records.md): one definition of the record, read by the health stage's
// writer (health/node_health.cpp) and the validator's reader (validate/detail/health_parser.cpp).
// Every field name is spelled once, as the `k...` constant beside its member: to_json writes it
// and the reader matches it.

struct XidEvent {
  static constexpr const char* kXid = "xid";
  static constexpr const char* kTime = "time";
  unsigned long long xid = 0;  // 999: NVML could not tell which Xid
  std::string time;            // UTC, when we received it
};

struct EccCounts {
  static constexpr const char* kCorrected = "corrected";
  static constexpr const char* kUncorrected = "uncorrected";
  std::optional<std::uint64_t> corrected;
  std::optional<std::uint64_t> uncorrected;
};

struct GpuEcc {
  static constexpr const char* kEnabled = "enabled";
  static constexpr const char* kVolatile = "volatile";
  static constexpr const char* kAggregate = "aggregate";
  bool enabled = false;
  EccCounts volatile_counts;  // since the driver loaded
  EccCounts aggregate;        // over the board's life
};

// Ampere and later.
struct GpuRemappedRows {
  static constexpr const char* kCorrectable = "correctable";
  static constexpr const char* kUncorrectable = "uncorrectable";
  static constexpr const char* kPending = "pending";
  static constexpr const char* kFailure = "failure";
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  bool pending = false;
  bool failure = false;
};

// Before Ampere.
struct GpuRetiredPages {
  static constexpr const char* kSingleBit = "single_bit";
  static constexpr const char* kDoubleBit = "double_bit";
  static constexpr const char* kPending = "pending";
  std::optional<unsigned> single_bit;
  std::optional<unsigned> double_bit;
  std::optional<bool> pending;
};

struct GpuPcie {
  static constexpr const char* kGenCurrent = "gen_current";
  static constexpr const char* kGenMax = "gen_max";
  static constexpr const char* kWidthCurrent = "width_current";
  static constexpr const char* kWidthMax = "width_max";
  static constexpr const char* kReplayCount = "replay_count";
  std::optional<unsigned> gen_current;
  std::optional<unsigned> gen_max;
  std::optional<unsigned> width_current;
  std::optional<unsigned> width_max;
  std::optional<unsigned> replay_count;
};

struct GpuNvLink {
  static constexpr const char* kLink = "link";
  static constexpr const char* kActive = "active";
  static constexpr const char* kReplayErrors = "replay_errors";
  static constexpr const char* kRecoveryErrors = "recovery_errors";
  static constexpr const char* kCrcFlitErrors = "crc_flit_errors";
  static constexpr const char* kCrcDataErrors = "crc_data_errors";
  unsigned link = 0;
  bool active = false;
  std::optional<std::uint64_t> replay_errors;
  std::optional<std::uint64_t> recovery_errors;
  std::optional<std::uint64_t> crc_flit_errors;
  std::optional<std::uint64_t> crc_data_errors;
};

struct GpuClocks {
  static constexpr const char* kSm = "sm";
  static constexpr const char* kMem = "mem";
  static constexpr const char* kSmMax = "sm_max";
  static constexpr const char* kMemMax = "mem_max";
  std::optional<unsigned> sm;
  std::optional<unsigned> mem;
  std::optional<unsigned> sm_max;
  std::optional<unsigned> mem_max;
};

// A query NVML failed for a reason other than "not supported": evidence a technician can use
// (no permission, corrupted InfoROM, GPU lost).
struct HealthQueryError {
  static constexpr const char* kQuery = "query";
  static constexpr const char* kError = "error";
  std::string query;
  std::string error;
};

// Component "gpu": what NVML says about one GPU at rest. Whatever the GPU or this NVML cannot
// report stays nullopt (written as null).
struct GpuHealthFields {
  static constexpr const char* kName = "name";
  static constexpr const char* kUuid = "uuid";
  static constexpr const char* kPciBusId = "pci_bus_id";
  static constexpr const char* kSerial = "serial";
  static constexpr const char* kVbios = "vbios";
  static constexpr const char* kDriverVersion = "driver_version";
  static constexpr const char* kEcc = "ecc";
  static constexpr const char* kRemappedRows = "remapped_rows";
  static constexpr const char* kRetiredPages = "retired_pages";
  static constexpr const char* kPcie = "pcie";
  static constexpr const char* kNvlink = "nvlink";
  static constexpr const char* kTemperatureC = "temperature_c";
  static constexpr const char* kPowerW = "power_w";
  static constexpr const char* kClocksMhz = "clocks_mhz";
  static constexpr const char* kClockEventReasons = "clock_event_reasons";
  static constexpr const char* kPersistenceMode = "persistence_mode";
  static constexpr const char* kXidEvents = "xid_events";
  static constexpr const char* kQueryErrors = "query_errors";
  // Written (true) only for a GPU NVML reports as lost; absent otherwise.
  static constexpr const char* kLost = "lost";
  // Records read in from DCGM (`commcert ingest`): `source: "dcgm"` and the run level its tests
  // amount to; commcert's own health stage writes neither.
  static constexpr const char* kSource = "source";
  static constexpr const char* kSourceDcgm = "dcgm";
  static constexpr const char* kDcgmLevel = "dcgm_level";

  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;  // normalised, e.g. 0000:3b:00.0
  std::optional<std::string> serial;
  std::optional<std::string> vbios;
  std::optional<std::string> driver_version;
  std::optional<GpuEcc> ecc;
  std::optional<GpuRemappedRows> remapped_rows;
  std::optional<GpuRetiredPages> retired_pages;
  std::optional<GpuPcie> pcie;
  std::optional<std::vector<GpuNvLink>> nvlink;  // links NVML reports; nullopt without NVLink
  std::optional<unsigned> temperature_c;
  std::optional<double> power_w;
  std::optional<GpuClocks> clocks;
  std::optional<std::vector<std::string>> clock_event_reasons;
  std::optional<bool> persistence_mode;
  std::optional<std::vector<XidEvent>> xid_events;  // nullopt: events could not be watched
  std::vector<HealthQueryError> query_errors;
  bool lost = false;  // some query answered NVML_ERROR_GPU_IS_LOST: it fell off the bus (XID 79)
};

// Component "ib_port": one RDMA port as sysfs shows it.
struct IbPortHealthFields {
  static constexpr const char* kDevice = "device";
  static constexpr const char* kPort = "port";
  static constexpr const char* kState = "state";
  static constexpr const char* kPhysState = "phys_state";
  static constexpr const char* kRateGbps = "rate_gbps";
  static constexpr const char* kLinkLayer = "link_layer";
  static constexpr const char* kCounters = "counters";
  std::string device;  // e.g. mlx5_0
  int port = 0;
  std::optional<std::string> state;
  std::optional<std::string> phys_state;
  std::optional<double> rate_gbps;
  std::optional<std::string> link_layer;
  std::map<std::string, std::uint64_t> counters;  // every readable counter, raw
};

// Component "node": what the node has, one per node.
struct NodeHealthFields {
  static constexpr const char* kGpuCount = "gpu_count";
  static constexpr const char* kIbPortCount = "ib_port_count";
  static constexpr const char* kAffinity = "affinity";
  static constexpr const char* kTopologySource = "topology_source";
  static constexpr const char* kVerbs = "verbs";
  std::optional<unsigned> gpu_count;
  std::size_t ib_port_count = 0;
  Json affinity = nullptr;  // as health/topology.cpp renders it; the validator does not read it
  std::optional<std::string> topology_source;
  Json verbs = nullptr;  // as health/verbs_probe.cpp renders it; the validator does not read it
};

// A health record. Without fields (std::monostate) it names only its component: a component
// that could not be looked at (skipped, error: `reason` says why).
struct HealthRecord : RecordHead {
  static constexpr const char* kKind = "health";
  static constexpr const char* kComponent = "component";
  static constexpr const char* kComponentGpu = "gpu";
  static constexpr const char* kComponentIbPort = "ib_port";
  static constexpr const char* kComponentNode = "node";

  std::string component;  // with fields, the one they belong to
  std::variant<std::monostate, GpuHealthFields, IbPortHealthFields, NodeHealthFields> fields;
};

// A GPU's `xid_events` (health) or its telemetry's (burn): null when they could not be watched.
[[nodiscard]] Json xid_events_json(const std::optional<std::vector<XidEvent>>& events);

// The record as written, fields in schema order: the common fields, `reason`, then `component`
// and the component's fields.
[[nodiscard]] Json to_json(const HealthRecord& record);

}  // namespace commcert
