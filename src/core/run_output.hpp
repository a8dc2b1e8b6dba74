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
  std::filesystem::path directory_;
  std::string run_id_;
  bool owns_meta_;
  std::mutex mutex_;
  Json meta_ = Json::object();
  std::unique_ptr<RecordsFile> records_;
};

}  // namespace commcert
