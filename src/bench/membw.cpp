#include "bench/membw.hpp"

#include <fmt/format.h>

#include "bench/throughput.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {

template <typename T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

}  // namespace

Json membw_record_fields(const MembwOutcome& o, std::optional<double> peak) {
  Json out;
  const bool any =
      o.read_bytes_per_s || o.write_bytes_per_s || o.copy_bytes_per_s || o.memcpy_d2d_bytes_per_s;
  if (any) {
    out["bandwidth"] = {{"read_bytes_per_s", or_null(o.read_bytes_per_s)},
                        {"write_bytes_per_s", or_null(o.write_bytes_per_s)},
                        {"copy_bytes_per_s", or_null(o.copy_bytes_per_s)},
                        {"memcpy_d2d_bytes_per_s", or_null(o.memcpy_d2d_bytes_per_s)},
                        {"datasheet_peak_bytes_per_s", or_null(peak)}};
  } else {
    out["bandwidth"] = nullptr;
  }
  const auto best = best_of({o.read_bytes_per_s, o.write_bytes_per_s, o.copy_bytes_per_s});
  out["fraction_of_peak"] = or_null(ratio(best, peak));
  out["fraction_of_memcpy"] = or_null(ratio(o.copy_bytes_per_s, o.memcpy_d2d_bytes_per_s));
  if (o.host_transfer) {
    out["host_transfer"] = {{"h2d_bytes_per_s", or_null(o.host_transfer->h2d_bytes_per_s)},
                            {"d2h_bytes_per_s", or_null(o.host_transfer->d2h_bytes_per_s)},
                            {"numa_node", or_null(o.host_transfer->numa_node)},
                            {"pinned", o.host_transfer->pinned}};
  } else {
    out["host_transfer"] = nullptr;
  }
  if (o.integrity) {
    Json first = Json::array();
    for (const auto& e : o.integrity->first_errors) {
      first.push_back({{"offset", e.offset},
                       {"expected", e.expected},
                       {"actual", e.actual},
                       {"pattern", e.pattern}});
    }
    out["integrity"] = {{"bytes_tested", o.integrity->bytes_tested},
                        {"patterns", o.integrity->patterns},
                        {"errors", o.integrity->errors},
                        {"first_errors", std::move(first)}};
  } else {
    out["integrity"] = nullptr;
  }
  out["buffer_bytes"] = o.buffer_bytes;
  return out;
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
