#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "history/run_summary.hpp"

struct sqlite3;

namespace commcert {

struct StoredRun {
  std::int64_t id = 0;
  std::string fingerprint;
  std::string run_id;
  std::string started;
  std::string added;
  std::string source;
  std::string path;
};

// One run of a node's trend: the run, the node's state in it ("" without a verdict) and the
// node's figures.
struct NodeRun {
  StoredRun run;
  std::string state;
  std::vector<RunFigure> metrics;
};

// The run history in SQLite (docs/history.md). Safe for several processes writing at once: the
// database is in WAL mode, every writer waits up to `busy_timeout_ms` for the lock, and a run is
// added in one IMMEDIATE transaction, so a reader sees all of a run or none of it.
class HistoryDb {
 public:
  // The schema version this build writes; PRAGMA user_version of the file.
  static constexpr int kSchemaVersion = 2;

  // Opens or creates the database (and its folder) and migrates it to kSchemaVersion. Throws
  // UsageError for a file that is not a commcert history, or one written by a newer commcert.
  explicit HistoryDb(const std::filesystem::path& path, int busy_timeout_ms = 60000);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  // Stores the run. Returns false, changing nothing, when a run with the same fingerprint is
  // already stored.
  bool add(const RunSummary& run);

  // Runs started at or after `since` (ISO 8601 UTC; all when empty), oldest first.
  [[nodiscard]] std::vector<StoredRun> runs(const std::string& since = {}) const;
  [[nodiscard]] std::vector<RunFigure> metrics(std::int64_t run) const;
  // The node's runs, oldest first, with its own figures and those of the groups it was in; the
  // node appears in a run through a figure or a verdict.
  [[nodiscard]] std::vector<NodeRun> node_history(const std::string& node) const;
  [[nodiscard]] int schema_version() const;

 private:
  void migrate();
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace commcert
