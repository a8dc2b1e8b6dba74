#include "bench/membw.hpp"

#include <fmt/format.h>

#include "bench/throughput.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {}  // namespace

MembwMeasurement membw_measurement(const MembwOutcome& o, std::optional<double> peak) {
  MembwMeasurement m;
  if (o.read_bytes_per_s || o.write_bytes_per_s || o.copy_bytes_per_s || o.memcpy_d2d_bytes_per_s) {
    m.bandwidth = MembwBandwidth{o.read_bytes_per_s, o.write_bytes_per_s, o.copy_bytes_per_s,
                                 o.memcpy_d2d_bytes_per_s, peak};
  }
  const auto best = best_of({o.read_bytes_per_s, o.write_bytes_per_s, o.copy_bytes_per_s});
  m.fraction_of_peak = ratio(best, peak);
  m.fraction_of_memcpy = ratio(o.copy_bytes_per_s, o.memcpy_d2d_bytes_per_s);
  m.host_transfer = o.host_transfer;
  m.integrity = o.integrity;
  m.buffer_bytes = o.buffer_bytes;
  return m;
}

RecordStatus membw_status(const MembwOutcome& outcome) {
  if (outcome.status != RecordStatus::kOk) return outcome.status;
  if (outcome.integrity && outcome.integrity->errors > 0) return RecordStatus::kFail;
  return RecordStatus::kOk;
}

std::string membw_reason(const MembwOutcome& outcome) {
  if (outcome.status != RecordStatus::kOk) return outcome.reason;
  if (outcome.integrity && outcome.integrity->errors > 0) {
    const auto& first = outcome.integrity->first_errors;
    return fmt::format("GPU {}: {} memory word(s) read back wrong in {} tested{}",
                       outcome.gpu.index, outcome.integrity->errors,
                       format_bytes(outcome.integrity->bytes_tested),
                       first.empty() ? std::string()
                                     : fmt::format(" (first at offset {:#x}, pattern {})",
                                                   first.front().offset, first.front().pattern));
  }
  return {};
}

}  // namespace commcert
