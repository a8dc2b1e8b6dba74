#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "core/json.hpp"
#include "core/records_file.hpp"

namespace commcert {

// results/<run-id>/: meta.json and records.jsonl. Thread-safe, because the watchdog thread
// writes the timeout record while the main thread may be writing too. Only the process that
// owns the run writes meta.json; any process may append a record (an error it alone saw).
// meta.json describes the latest command that wrote to the directory; earlier ones are kept
// in its `earlier` list.
class RunOutput {
 public:
  RunOutput(std::filesystem::path directory, std::string run_id, bool owns_meta);

  [[nodiscard]] const std::filesystem::path& directory() const { return directory_; }
  [[nodiscard]] const std::string& run_id() const { return run_id_; }
  [[nodiscard]] std::filesystem::path records_path() const { return directory_ / "records.jsonl"; }
  [[nodiscard]] std::filesystem::path meta_path() const { return directory_ / "meta.json"; }

  void append_record(const Json& record);
  // Sets (or merges) meta.json fields and rewrites the file atomically.
  void update_meta(const Json& fields);

 private:
  // A run directory written to again (`commcert run` stages, a reused --run-id): the meta.json
  // already there moves into `earlier`, in order, instead of being overwritten.
  void keep_earlier_meta();

  std::filesystem::path directory_;
  std::string run_id_;
  bool owns_meta_;
  std::mutex mutex_;
  Json meta_ = Json::object();
  Json earlier_;  // the metas of earlier commands in this directory; null when none
  std::unique_ptr<RecordsFile> records_;
};

}  // namespace commcert
