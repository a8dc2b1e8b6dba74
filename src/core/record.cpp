#include "core/record.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

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
  Json out;
  out["index"] = gpu->index;
  out["uuid"] = gpu->uuid.empty() ? Json(nullptr) : Json(gpu->uuid);
  out["pci_bus_id"] = gpu->pci_bus_id.empty() ? Json(nullptr) : Json(gpu->pci_bus_id);
  out["name"] = gpu->name.empty() ? Json(nullptr) : Json(gpu->name);
  return out;
}

Json make_record(const RecordOrigin& origin, std::string_view kind, RecordStatus status) {
  Json record;
  record["schema"] = kRecordSchemaVersion;
  record["run_id"] = origin.run_id;
  record["kind"] = kind;
  record["status"] = to_string(status);
  record["time"] = utc_timestamp_now();
  record["host"] = origin.host;
  record["rank"] = origin.rank;
  record["local_rank"] = origin.local_rank;
  record["gpu"] = to_json(origin.gpu);
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
