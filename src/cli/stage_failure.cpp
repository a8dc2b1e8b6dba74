#include "cli/stage_failure.hpp"

#include <fstream>
#include <sstream>

#include "core/record.hpp"
#include "core/records_file.hpp"

namespace commcert {
namespace {

constexpr const char* kExitCode = "exit_code";
constexpr const char* kStatus = "status";
constexpr const char* kRunning = "running";

// The file as JSON, or null when it is absent or not a JSON object.
Json read_object(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::ostringstream text;
  text << in.rdbuf();
  Json json = Json::parse(text.str(), nullptr, false);
  return json.is_object() ? json : Json(nullptr);
}

bool says_running(const Json& json) {
  const auto status = json.find(kStatus);
  return status != json.end() && status->is_string() && *status == kRunning;
}

void mark_file(const std::filesystem::path& path, const StageFailure& failure, bool stages) {
  Json json = read_object(path);
  if (!json.is_object() || !says_running(json)) return;
  const Json error = to_json(failure);
  if (stages) {
    // suite.json: the stage under way is the last one still running.
    if (auto list = json.find("stages"); list != json.end() && list->is_array()) {
      for (auto stage = list->rbegin(); stage != list->rend(); ++stage) {
        if (!stage->is_object() || !says_running(*stage)) continue;
        (*stage)[kStatus] = "error";
        (*stage)[kExitCode] = failure.exit_code;
        (*stage)[StageFailure::kError] = error;
        break;
      }
    }
    json[kStatus] = "error";
    json[kExitCode] = failure.exit_code;
    json[StageFailure::kError] = error;
  } else {
    const Json fields = failed_meta_fields(failure);
    for (const auto& [key, value] : fields.items())
      json[key] = value;
  }
  write_json_file_atomically(path, json);
}

}  // namespace

Json to_json(const StageFailure& failure) {
  return {{StageFailure::kCommand, failure.command},
          {StageFailure::kProcess, failure.process},
          {StageFailure::kRank, failure.rank},
          {StageFailure::kNode, failure.node},
          {StageFailure::kReason, failure.reason}};
}

std::string failure_wire_text(const StageFailure& failure) {
  Json wire = to_json(failure);
  wire[kExitCode] = failure.exit_code;
  return wire.dump();
}

std::optional<StageFailure> failure_from_wire_text(std::string_view text) {
  const Json wire = Json::parse(std::string(text), nullptr, false);
  if (!wire.is_object()) return std::nullopt;
  try {
    StageFailure failure;
    failure.command = wire.at(StageFailure::kCommand).get<std::string>();
    failure.process = wire.at(StageFailure::kProcess).get<int>();
    failure.rank = wire.at(StageFailure::kRank).get<int>();
    failure.node = wire.at(StageFailure::kNode).get<std::string>();
    failure.reason = wire.at(StageFailure::kReason).get<std::string>();
    failure.exit_code = wire.at(kExitCode).get<int>();
    return failure;
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

Json failed_meta_fields(const StageFailure& failure) {
  return {{kStatus, "error"},
          {kExitCode, failure.exit_code},
          {"end_time", utc_timestamp_now()},
          {StageFailure::kError, to_json(failure)}};
}

void mark_run_failed_on_disk(const std::filesystem::path& directory, const StageFailure& failure,
                             bool meta_too) {
  try {
    if (meta_too) mark_file(directory / "meta.json", failure, false);
    mark_file(directory / "suite.json", failure, true);
  } catch (const std::exception&) {
    // Already failing: the stderr line and the error record are what is left.
  }
}

}  // namespace commcert
