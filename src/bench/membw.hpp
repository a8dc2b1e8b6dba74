#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"
#include "records/membw.hpp"

namespace commcert {

struct MembwSettings {
  std::uint64_t buffer_bytes = 1ULL << 30;  // each of source and destination
  int iterations = 20;                      // timed samples per measurement (median reported)
  int warmup = 3;
  double memtest_fraction = 0.9;            // of free memory; 0 skips the integrity test
  std::uint64_t host_bytes = 256ULL << 20;  // 0 skips host<->device
  int host_iterations = 10;
  std::uint64_t seed = 0x6d656d62ULL;
  double timeout_s = 300;                     // bound on any one wait for a GPU
  std::filesystem::path sysfs_root = "/sys";  // where the GPU's NUMA node is read
};

// What the engines measure is what the record holds (records/membw.hpp).
using MemoryError = MembwFirstError;
using MemoryIntegrity = MembwIntegrity;
using HostTransfer = MembwHostTransfer;

// What one GPU measured. Bandwidths count bytes read plus bytes written (a copy of N bytes
// moves 2N), the memcpy reference included, so the two compare like for like.
struct MembwOutcome {
  RecordStatus status = RecordStatus::kOk;
  std::string reason;
  GpuIdentity gpu;
  std::optional<double> read_bytes_per_s;
  std::optional<double> write_bytes_per_s;
  std::optional<double> copy_bytes_per_s;
  std::optional<double> memcpy_d2d_bytes_per_s;
  std::optional<MemoryIntegrity> integrity;
  std::optional<HostTransfer> host_transfer;
  std::uint64_t buffer_bytes = 0;  // as used (may be smaller than asked on a small GPU)
};

// What a measured GPU puts in its record (records/membw.hpp).
[[nodiscard]] MembwMeasurement membw_measurement(const MembwOutcome& outcome,
                                                 std::optional<double> datasheet_peak_bytes_per_s);

// ok; fail when the integrity test found errors; or the outcome's own status.
[[nodiscard]] RecordStatus membw_status(const MembwOutcome& outcome);
[[nodiscard]] std::string membw_reason(const MembwOutcome& outcome);

}  // namespace commcert
