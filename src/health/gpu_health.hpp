#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"
#include "health/nvml_library.hpp"
#include "health/xid_watcher.hpp"

namespace commcert {

struct EccCounts {
  std::optional<std::uint64_t> corrected;
  std::optional<std::uint64_t> uncorrected;
};

struct GpuEcc {
  bool enabled = false;
  EccCounts volatile_counts;  // since the driver loaded
  EccCounts aggregate;        // over the board's life
};

struct GpuRetiredPages {
  std::optional<unsigned> single_bit;
  std::optional<unsigned> double_bit;
  std::optional<bool> pending;
};

struct GpuPcie {
  std::optional<unsigned> gen_current;
  std::optional<unsigned> gen_max;
  std::optional<unsigned> width_current;
  std::optional<unsigned> width_max;
  std::optional<unsigned> replay_count;
};

struct GpuNvLink {
  unsigned link = 0;
  bool active = false;
  std::optional<std::uint64_t> replay_errors;
  std::optional<std::uint64_t> recovery_errors;
  std::optional<std::uint64_t> crc_flit_errors;
  std::optional<std::uint64_t> crc_data_errors;
};

struct GpuClocks {
  std::optional<unsigned> sm;
  std::optional<unsigned> mem;
  std::optional<unsigned> sm_max;
  std::optional<unsigned> mem_max;
};

// A query NVML failed for a reason other than "not supported": evidence a technician can use
// (no permission, corrupted InfoROM, GPU lost).
struct HealthQueryError {
  std::string query;
  std::string error;
};

// What NVML says about one GPU at rest (docs/records.md, kind health, component gpu). Whatever
// the GPU or this NVML cannot report stays nullopt.
struct GpuHealth {
  unsigned index = 0;
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;  // normalised, e.g. 0000:3b:00.0
  std::optional<std::string> serial;
  std::optional<std::string> vbios;
  std::optional<std::string> driver_version;
  std::optional<GpuEcc> ecc;
  std::optional<NvmlRemappedRows> remapped_rows;  // Ampere and later
  std::optional<GpuRetiredPages> retired_pages;   // before Ampere
  std::optional<GpuPcie> pcie;
  std::optional<std::vector<GpuNvLink>> nvlink;  // links NVML reports; nullopt without NVLink
  std::optional<unsigned> temperature_c;
  std::optional<double> power_w;
  std::optional<GpuClocks> clocks;
  std::optional<std::vector<std::string>> clock_event_reasons;
  std::optional<bool> persistence_mode;
  std::optional<std::vector<XidEvent>> xid_events;  // nullopt: events could not be watched
  std::vector<HealthQueryError> query_errors;
  bool lost = false;                       // some query answered "GPU is lost"
  std::optional<std::string> unreachable;  // NVML gave no handle for this index: why
};

// Reads everything but the Xid events, which a watcher collects over the tool's run.
[[nodiscard]] GpuHealth probe_gpu_health(const NvmlLibrary& nvml, nvml::Device device,
                                         unsigned index);

// The record's `gpu` field for this GPU.
[[nodiscard]] GpuIdentity gpu_identity_of(const GpuHealth& health);

// The kind-specific fields of a health record with component "gpu", in schema order.
[[nodiscard]] Json gpu_health_fields(const GpuHealth& health);

}  // namespace commcert
