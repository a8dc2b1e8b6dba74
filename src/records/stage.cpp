#include "records/stage.hpp"

#include "core/record_fields.hpp"

namespace commcert {

Json to_json(const RunRecord& record) {
  Json out = make_record(record.origin, RunRecord::kKind, RecordStatus::kOk);
  out[RunRecord::kCommand] = record.command;
  out[RunRecord::kBackend] = record.backend;
  out[RunRecord::kRanks] = to_json(record.ranks);
  return out;
}

Json to_json(const StageErrorRecord& record) {
  Json out = make_record(record.origin, record.kind, RecordStatus::kError);
  if (record.backend) out[StageErrorRecord::kBackend] = *record.backend;
  out[RecordFields::kReason] = record.reason;
  if (record.component) out[StageErrorRecord::kComponent] = *record.component;
  if (record.api_error) out[StageErrorRecord::kApiError] = to_json(*record.api_error);
  return out;
}

Json to_json(const StageTimeoutRecord& record) {
  Json out = make_record(record.origin, record.kind, RecordStatus::kTimeout);
  out[RecordFields::kReason] = record.reason;
  if (record.component) out[StageTimeoutRecord::kComponent] = *record.component;
  if (!record.nodes.empty()) out[StageTimeoutRecord::kNodes] = record.nodes;
  out[StageTimeoutRecord::kOperation] = record.operation;
  out[StageTimeoutRecord::kTimeoutS] = record.timeout_s;
  return out;
}

StageErrorRecord stage_error_record(RecordOrigin origin, std::string kind,
                                    const std::exception& error) {
  StageErrorRecord record;
  record.origin = std::move(origin);
  record.kind = std::move(kind);
  record.reason = error.what();
  if (const auto* failure = dynamic_cast<const ApiFailure*>(&error)) {
    record.api_error = failure->error();
  }
  return record;
}

}  // namespace commcert
