#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// kind "membw" (docs/records.md, docs/gpu-stages.md): one definition of the record, filled by
// cli/membw_command.cpp (bench/membw.cpp computes the measurement) and matched field by field by
// the validator's reader (validate/detail/membw_parser.cpp). Every field name is spelled once, as
// the `k...` constant beside its member. Bandwidths count bytes read plus bytes written.

struct MembwBandwidth {
  static constexpr const char* kRead = "read_bytes_per_s";
  static constexpr const char* kWrite = "write_bytes_per_s";
  static constexpr const char* kCopy = "copy_bytes_per_s";
  static constexpr const char* kMemcpyD2d = "memcpy_d2d_bytes_per_s";
  static constexpr const char* kDatasheetPeak = "datasheet_peak_bytes_per_s";
  std::optional<double> read_bytes_per_s;
  std::optional<double> write_bytes_per_s;
  std::optional<double> copy_bytes_per_s;
  std::optional<double> memcpy_d2d_bytes_per_s;
  std::optional<double> datasheet_peak_bytes_per_s;
};

struct MembwHostTransfer {
  static constexpr const char* kH2d = "h2d_bytes_per_s";
  static constexpr const char* kD2h = "d2h_bytes_per_s";
  static constexpr const char* kNumaNode = "numa_node";
  static constexpr const char* kPinned = "pinned";
  std::optional<double> h2d_bytes_per_s;
  std::optional<double> d2h_bytes_per_s;
  std::optional<int> numa_node;
  bool pinned = true;
};

struct MembwFirstError {
  static constexpr const char* kOffset = "offset";
  static constexpr const char* kExpected = "expected";
  static constexpr const char* kActual = "actual";
  static constexpr const char* kPattern = "pattern";
  std::uint64_t offset = 0;
  std::uint64_t expected = 0;
  std::uint64_t actual = 0;
  std::string pattern;
};

struct MembwIntegrity {
  static constexpr const char* kBytesTested = "bytes_tested";
  static constexpr const char* kPatterns = "patterns";
  static constexpr const char* kErrors = "errors";
  static constexpr const char* kFirstErrors = "first_errors";
  std::uint64_t bytes_tested = 0;
  std::vector<std::string> patterns;
  std::uint64_t errors = 0;
  std::vector<MembwFirstError> first_errors;  // at most 16
};

// What a GPU's memory measurement found.
struct MembwMeasurement {
  static constexpr const char* kBandwidth = "bandwidth";
  static constexpr const char* kFractionOfPeak = "fraction_of_peak";
  static constexpr const char* kFractionOfMemcpy = "fraction_of_memcpy";
  static constexpr const char* kHostTransfer = "host_transfer";
  static constexpr const char* kIntegrity = "integrity";
  static constexpr const char* kBufferBytes = "buffer_bytes";
  std::optional<MembwBandwidth> bandwidth;  // nullopt: no bandwidth was measured
  std::optional<double> fraction_of_peak;
  std::optional<double> fraction_of_memcpy;
  std::optional<MembwHostTransfer> host_transfer;
  std::optional<MembwIntegrity> integrity;
  std::uint64_t buffer_bytes = 0;  // as used (may be smaller than asked on a small GPU)
};

// One GPU's memory stage; without a measurement when there was no GPU to measure.
struct MembwRecord : RecordHead {
  static constexpr const char* kKind = "membw";
  std::optional<MembwMeasurement> measurement;
};

// The record as written: the common fields, `reason`, then the measurement's fields in schema
// order.
[[nodiscard]] Json to_json(const MembwRecord& record);

}  // namespace commcert
