#include "validate/inputs.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "records/run_meta.hpp"
#include "validate/record_reader.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRecordsFile = "records.jsonl";

struct RunFiles {
  fs::path records;
  fs::path meta;   // empty when absent
  fs::path suite;  // suite.json of `commcert run`; empty when absent
};

std::vector<RunFiles> resolve(const std::string& argument) {
  const fs::path path(argument);
  std::error_code error;
  const auto status = fs::status(path, error);
  if (error || !fs::exists(status))
    throw UsageError(fmt::format("{}: no such file or directory", argument));
  if (!fs::is_directory(status)) return {{path, {}, {}}};
  const auto in = [](const fs::path& dir, const char* name) {
    return fs::exists(dir / name) ? dir / name : fs::path();
  };
  if (fs::exists(path / kRecordsFile)) {
    return {{path / kRecordsFile, in(path, "meta.json"), in(path, "suite.json")}};
  }
  std::vector<RunFiles> runs;
  for (const auto& entry : fs::directory_iterator(path)) {
    if (entry.is_directory() && fs::exists(entry.path() / kRecordsFile)) {
      runs.push_back({entry.path() / kRecordsFile, in(entry.path(), "meta.json"),
                      in(entry.path(), "suite.json")});
    }
  }
  if (runs.empty()) {
    throw UsageError(
        fmt::format("{}: no {} in it or in its run directories", argument, kRecordsFile));
  }
  std::sort(runs.begin(), runs.end(),
            [](const auto& a, const auto& b) { return a.records < b.records; });
  return runs;
}

// A string field of suite.json; a value of another type is an input error naming the file and
// the field (never a library exception).
std::optional<std::string> string_field(const Json& json, const fs::path& file, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    throw UsageError(fmt::format("{}: {}: expected a string, found {} {}", file.string(), key,
                                 it->type_name(), it->dump()));
  }
  return it->get<std::string>();
}

std::string unfinished_note(const std::string& run, const fs::path& file,
                            std::vector<InputNote>& notes) {
  std::string unfinished =
      fmt::format("run {} never finished ({} still says running)", run, file.filename().string());
  notes.push_back({"input.run_unfinished", file.string(), 0,
                   fmt::format("{}: it was killed or is still going; its evidence certifies no "
                               "node (certify --allow-partial judges it anyway)",
                               unfinished)});
  return unfinished;
}

// meta.json tells whether the run finished and whether faults were injected on purpose (read
// through the typed RunMeta: a field of the wrong type, or a schema newer than this reader, is
// a UsageError naming the file and the field). Returns why the run is unfinished, empty when
// nothing says so; `statuses` gets what the file says of the run (RunMeta::statuses).
std::string read_meta(const fs::path& path, std::vector<InputNote>& notes,
                      std::vector<std::string>& statuses) {
  RunMeta meta;
  try {
    meta = read_run_meta(path);
  } catch (const RunMetaError& error) {
    if (error.problem() != RunMetaError::Problem::kUnreadable) throw UsageError(error.what());
    notes.push_back({"input.meta_unreadable", path.string(), 0,
                     fmt::format("{} is not valid JSON", path.filename().string())});
    return {};
  }
  const std::string run = meta.run_id.value_or("?");
  statuses = meta.statuses();
  std::string unfinished;
  if (meta.status == "running") unfinished = unfinished_note(run, path, notes);
  if (const std::string plan = meta.fault_plan(); !plan.empty()) {
    notes.push_back({"input.fault_injection", path.string(), 0,
                     fmt::format("run {} injected faults on purpose: {}", run, Json(plan).dump())});
  }
  return unfinished;
}

// suite.json of `commcert run`: whether the suite finished, and the status it gives the run
// and each of its stages.
std::string read_suite(const fs::path& path, std::vector<InputNote>& notes,
                       std::vector<std::string>& statuses) {
  const Json json = Json::parse(read_bounded_file(path, kMaxRunMetaBytes, path.filename().string()),
                                nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    notes.push_back({"input.meta_unreadable", path.string(), 0,
                     fmt::format("{} is not valid JSON", path.filename().string())});
    return {};
  }
  const std::string run = string_field(json, path, "run_id").value_or("?");
  const std::optional<std::string> status = string_field(json, path, "status");
  if (status) statuses.push_back(*status);
  if (status != "running") return {};
  return unfinished_note(run, path, notes);
}

}  // namespace

LoadedInputs load_inputs(const std::vector<std::string>& paths, const InputOptions& options) {
  if (paths.empty())
    throw UsageError("no results given: name results directories or records files");
  LoadedInputs loaded;
  RecordReader reader(loaded.evidence);
  if (options.on_record) reader.observe(options.on_record);
  std::vector<fs::path> seen;
  for (const auto& argument : paths) {
    for (const auto& run : resolve(argument)) {
      std::error_code error;
      const fs::path canonical = fs::weakly_canonical(run.records, error);
      if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) {
        loaded.notes.push_back({"input.duplicate_file", run.records.string(), 0,
                                "this file was given twice; it is read once"});
        continue;
      }
      seen.push_back(canonical);
      if (loaded.first_directory.empty()) loaded.first_directory = run.records.parent_path();
      reader.read_file(run.records);
      std::string unfinished;
      std::vector<std::string> statuses;
      std::string meta_path;
      if (!run.meta.empty()) {
        unfinished = read_meta(run.meta, loaded.notes, statuses);
        meta_path = run.meta.string();
      }
      const auto fault_status = std::find_if(statuses.begin(), statuses.end(), [](const auto& s) {
        return s == "fail" || s == "error" || s == "timeout";
      });
      std::string meta_fault_status = fault_status == statuses.end() ? "" : *fault_status;
      if (unfinished.empty() && !run.suite.empty() && !options.own_run) {
        // Both files speak for the run: it went well only if neither says otherwise.
        std::vector<std::string> suite_statuses;
        unfinished = read_suite(run.suite, loaded.notes, suite_statuses);
        statuses.insert(statuses.end(), suite_statuses.begin(), suite_statuses.end());
        if (meta_path.empty()) meta_path = run.suite.string();
      }
      auto& summary = loaded.evidence.files.back();
      summary.unfinished = std::move(unfinished);
      summary.meta_path = std::move(meta_path);
      summary.meta_statuses = std::move(statuses);
      summary.meta_fault_status = std::move(meta_fault_status);
      summary.partial_allowed = options.allow_partial;
    }
  }
  loaded.evidence.finish();
  if (loaded.evidence.nodes.size() == 0) {
    std::size_t lines = 0;
    for (const auto& file : loaded.evidence.files)
      lines += file.lines;
    throw UsageError(fmt::format("no node evidence in {} ({} line(s) read): nothing to certify",
                                 fmt::join(paths, ", "), lines));
  }
  if (loaded.first_directory.empty()) loaded.first_directory = ".";
  return loaded;
}

}  // namespace commcert
