#include "validate/inputs.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/json.hpp"
#include "validate/record_reader.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRecordsFile = "records.jsonl";

struct RunFiles {
  fs::path records;
  fs::path meta;  // empty when absent
};

std::vector<RunFiles> resolve(const std::string& argument) {
  const fs::path path(argument);
  std::error_code error;
  const auto status = fs::status(path, error);
  if (error || !fs::exists(status))
    throw UsageError(fmt::format("{}: no such file or directory", argument));
  if (!fs::is_directory(status)) return {{path, {}}};
  const auto meta_of = [](const fs::path& dir) {
    return fs::exists(dir / "meta.json") ? dir / "meta.json" : fs::path();
  };
  if (fs::exists(path / kRecordsFile)) return {{path / kRecordsFile, meta_of(path)}};
  std::vector<RunFiles> runs;
  for (const auto& entry : fs::directory_iterator(path)) {
    if (entry.is_directory() && fs::exists(entry.path() / kRecordsFile)) {
      runs.push_back({entry.path() / kRecordsFile, meta_of(entry.path())});
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

// meta.json tells whether the run finished and whether faults were injected on purpose.
void read_meta(const fs::path& meta, std::vector<InputNote>& notes) {
  std::ifstream file(meta);
  const Json json = Json::parse(file, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    notes.push_back({"input.meta_unreadable", meta.string(), 0, "meta.json is not valid JSON"});
    return;
  }
  const std::string run = json.value("run_id", std::string("?"));
  if (json.value("status", std::string()) == "running") {
    notes.push_back({"input.run_unfinished", meta.string(), 0,
                     fmt::format("run {} never finished (meta.json still says running): it was "
                                 "killed or is still going; missing evidence is judged as missing",
                                 run)});
  }
  if (json.contains("fault_injection") && !json["fault_injection"].is_null()) {
    notes.push_back({"input.fault_injection", meta.string(), 0,
                     fmt::format("run {} injected faults on purpose: {}", run,
                                 json["fault_injection"].dump())});
  }
}

}  // namespace

LoadedInputs load_inputs(const std::vector<std::string>& paths) {
  if (paths.empty())
    throw UsageError("no results given: name results directories or records files");
  LoadedInputs loaded;
  RecordReader reader(loaded.evidence);
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
      if (!run.meta.empty()) read_meta(run.meta, loaded.notes);
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
