#include "core/record.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "core/record_fields.hpp"

namespace commcert {

std::string_view to_string(RecordStatus status) {
  switch (status) {
    case RecordStatus::kOk:
      return "ok";
    case RecordStatus::kFail:
      return "fail";
    case RecordStatus::kError:
      return "error";
    case RecordStatus::kTimeout:
      return "timeout";
    case RecordStatus::kSkipped:
      return "skipped";
  }
  return "error";
}

Json to_json(const std::optional<GpuIdentity>& gpu) {
  if (!gpu) return nullptr;
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? Json(nullptr) : Json(text);
  };
  Json out;
  out[GpuIdentityFields::kIndex] = gpu->index;
  out[GpuIdentityFields::kUuid] = text_or_null(gpu->uuid);
  out[GpuIdentityFields::kPciBusId] = text_or_null(gpu->pci_bus_id);
  out[GpuIdentityFields::kName] = text_or_null(gpu->name);
  return out;
}

Json make_record(const RecordOrigin& origin, std::string_view kind, RecordStatus status) {
  Json record;
  record[RecordFields::kSchema] = kRecordSchemaVersion;
  record[RecordFields::kRunId] = origin.run_id;
  record[RecordFields::kKind] = kind;
  record[RecordFields::kStatus] = to_string(status);
  record[RecordFields::kTime] = utc_timestamp_now();
  record[RecordFields::kHost] = origin.host;
  record[RecordFields::kRank] = origin.rank;
  record[RecordFields::kLocalRank] = origin.local_rank;
  record[RecordFields::kGpu] = to_json(origin.gpu);
  return record;
}

Json make_record(const RecordHead& head, std::string_view kind) {
  Json record = make_record(head.origin, kind, head.status);
  if (head.reason) record[RecordFields::kReason] = *head.reason;
  return record;
}

std::string utc_timestamp_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
}

}  // namespace commcert
