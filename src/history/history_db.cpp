#include "history/history_db.hpp"

#include <map>
#include <sqlite3.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/record.hpp"
#include "history/migrations.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;

// One prepared statement, finalized on every path out.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr) !=
        SQLITE_OK)
      throw RuntimeFailure(fmt::format("history: {}", sqlite3_errmsg(db)));
  }
  ~Statement() { sqlite3_finalize(statement_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, const std::string& text) {
    check(sqlite3_bind_text(statement_, index, text.c_str(), static_cast<int>(text.size()),
                            SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind(int index, std::int64_t value) {
    check(sqlite3_bind_int64(statement_, index, value));
    return *this;
  }
  Statement& bind(int index, double value) {
    check(sqlite3_bind_double(statement_, index, value));
    return *this;
  }
  Statement& bind_null(int index) {
    check(sqlite3_bind_null(statement_, index));
    return *this;
  }
  void reset() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }
  // True while there is a row to read.
  bool step() {
    const int status = sqlite3_step(statement_);
    if (status == SQLITE_ROW) return true;
    if (status == SQLITE_DONE) return false;
    throw RuntimeFailure(fmt::format("history: {}", sqlite3_errmsg(db_)));
  }
  [[nodiscard]] std::string text(int column) const {
    const auto* value = sqlite3_column_text(statement_, column);
    return value ? reinterpret_cast<const char*>(value) : std::string{};
  }
  [[nodiscard]] std::int64_t integer(int column) const {
    return sqlite3_column_int64(statement_, column);
  }
  [[nodiscard]] double real(int column) const { return sqlite3_column_double(statement_, column); }
  [[nodiscard]] bool is_null(int column) const {
    return sqlite3_column_type(statement_, column) == SQLITE_NULL;
  }

 private:
  void check(int status) const {
    if (status != SQLITE_OK) throw RuntimeFailure(fmt::format("history: {}", sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

void execute(sqlite3* db, std::string_view sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, std::string(sql).c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : sqlite3_errmsg(db);
    sqlite3_free(error);
    throw RuntimeFailure(fmt::format("history: {}", message));
  }
}

// BEGIN IMMEDIATE takes the write lock at once (waiting out other writers through the busy
// timeout), so two processes never both read a state and then both act on it.
class WriteTransaction {
 public:
  explicit WriteTransaction(sqlite3* db) : db_(db) { execute(db_, "BEGIN IMMEDIATE"); }
  ~WriteTransaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit() {
    execute(db_, "COMMIT");
    done_ = true;
  }

 private:
  sqlite3* db_;
  bool done_ = false;
};

int user_version(sqlite3* db) {
  Statement statement(db, "PRAGMA user_version");
  return statement.step() ? static_cast<int>(statement.integer(0)) : 0;
}

constexpr std::string_view kMetricColumns =
    "node, gpu, subject, variant, bytes, metric, value, samples, sample_mean, sample_stddev, "
    "straggler";

RunFigure read_metric(const Statement& row, int first) {
  RunFigure sample;
  sample.node = row.text(first);
  sample.gpu = row.text(first + 1);
  sample.subject = row.text(first + 2);
  sample.variant = row.text(first + 3);
  sample.bytes = static_cast<std::uint64_t>(row.integer(first + 4));
  sample.metric = row.text(first + 5);
  sample.value = row.real(first + 6);
  if (!row.is_null(first + 7)) {
    sample.moments = SampleMoments{static_cast<std::size_t>(row.integer(first + 7)),
                                   row.real(first + 8), row.real(first + 9)};
  }
  sample.straggler = row.text(first + 10);
  return sample;
}

StoredRun read_run(const Statement& row) {
  return {row.integer(0), row.text(1), row.text(2), row.text(3),
          row.text(4),    row.text(5), row.text(6)};
}

constexpr std::string_view kRunColumns = "id, fingerprint, run_id, started, added, source, path";

}  // namespace

HistoryDb::HistoryDb(const fs::path& path, int busy_timeout_ms) : path_(path) {
  std::error_code error;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), error);
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw UsageError(fmt::format("history {}: cannot open: {}", path.string(), message));
  }
  try {
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    execute(db_, "PRAGMA foreign_keys = ON");
    // WAL: readers never block the writer nor it them; the mode is stored in the file, so only
    // the first opener changes it.
    execute(db_, "PRAGMA journal_mode = WAL");
    migrate();
  } catch (const RuntimeFailure& failure) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw UsageError(fmt::format("history {}: {} (is it a commcert history database?)",
                                 path.string(), failure.what()));
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

HistoryDb::~HistoryDb() {
  sqlite3_close(db_);
}

void HistoryDb::migrate() {
  if (user_version(db_) == kSchemaVersion) return;
  WriteTransaction transaction(db_);
  // Read again under the lock: another process may have migrated while this one waited.
  const int version = user_version(db_);
  if (version > kSchemaVersion) {
    throw UsageError(fmt::format(
        "history {}: schema version {} is newer than this commcert's {} (upgrade commcert)",
        path_.string(), version, kSchemaVersion));
  }
  const auto steps = history_migrations();
  for (int step = version; step < kSchemaVersion; ++step)
    execute(db_, steps[static_cast<std::size_t>(step)]);
  execute(db_, fmt::format("PRAGMA user_version = {}", kSchemaVersion));
  transaction.commit();
}

int HistoryDb::schema_version() const {
  return user_version(db_);
}

bool HistoryDb::add(const RunSummary& run) {
  WriteTransaction transaction(db_);
  Statement insert(db_,
                   "INSERT OR IGNORE INTO runs (fingerprint, run_id, started, added, source, "
                   "path, meta) VALUES (?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, run.fingerprint)
      .bind(2, run.run_id)
      .bind(3, run.started)
      .bind(4, utc_timestamp_now())
      .bind(5, run.source)
      .bind(6, run.path.string())
      .bind(7, run.meta_json.empty() ? std::string("{}") : run.meta_json);
  insert.step();
  if (sqlite3_changes(db_) == 0) return false;
  const std::int64_t id = sqlite3_last_insert_rowid(db_);

  Statement metric(db_, fmt::format("INSERT INTO metrics (run, {}) VALUES "
                                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                    kMetricColumns));
  for (const auto& sample : run.metrics) {
    metric.bind(1, id)
        .bind(2, sample.node)
        .bind(3, sample.gpu)
        .bind(4, sample.subject)
        .bind(5, sample.variant)
        .bind(6, static_cast<std::int64_t>(sample.bytes))
        .bind(7, sample.metric)
        .bind(8, sample.value);
    if (sample.moments) {
      metric.bind(9, static_cast<std::int64_t>(sample.moments->count))
          .bind(10, sample.moments->mean)
          .bind(11, sample.moments->stddev);
    } else {
      metric.bind_null(9).bind_null(10).bind_null(11);
    }
    metric.bind(12, sample.straggler);
    metric.step();
    metric.reset();
  }
  Statement verdict(db_,
                    "INSERT OR REPLACE INTO verdicts (run, node, state, first_reason) VALUES "
                    "(?, ?, ?, ?)");
  for (const auto& outcome : run.outcomes) {
    verdict.bind(1, id).bind(2, outcome.node).bind(3, outcome.state).bind(4, outcome.first_reason);
    verdict.step();
    verdict.reset();
  }
  transaction.commit();
  return true;
}

std::vector<StoredRun> HistoryDb::runs(const std::string& since) const {
  Statement query(
      db_, fmt::format("SELECT {} FROM runs WHERE started >= ? ORDER BY started, id", kRunColumns));
  query.bind(1, since);
  std::vector<StoredRun> found;
  while (query.step())
    found.push_back(read_run(query));
  return found;
}

std::vector<RunFigure> HistoryDb::metrics(std::int64_t run) const {
  Statement query(
      db_, fmt::format("SELECT {} FROM metrics WHERE run = ? ORDER BY rowid", kMetricColumns));
  query.bind(1, run);
  std::vector<RunFigure> found;
  while (query.step())
    found.push_back(read_metric(query, 0));
  return found;
}

std::vector<NodeRun> HistoryDb::node_history(const std::string& node) const {
  // A node's figures are its own (node scope, its GPUs) and those of every group it was in
  // ("a+b+c": cluster scope, pairs); '+' never occurs in a node name.
  constexpr std::string_view kInGroup = "instr('+' || m.node || '+', '+' || ?1 || '+') > 0";
  Statement query(db_, fmt::format("SELECT {}, coalesce((SELECT state FROM verdicts v WHERE "
                                   "v.run = runs.id AND v.node = ?1), '') FROM runs WHERE "
                                   "EXISTS (SELECT 1 FROM metrics m WHERE m.run = runs.id AND "
                                   "{}) OR EXISTS (SELECT 1 FROM verdicts v WHERE "
                                   "v.run = runs.id AND v.node = ?1) ORDER BY started, id",
                                   kRunColumns, kInGroup));
  query.bind(1, node);
  std::vector<NodeRun> found;
  while (query.step())
    found.push_back({read_run(query), query.text(7), {}});
  Statement figures(db_, fmt::format("SELECT {} FROM metrics m WHERE run = ?2 AND {} "
                                     "ORDER BY rowid",
                                     kMetricColumns, kInGroup));
  for (auto& entry : found) {
    figures.bind(1, node).bind(2, entry.run.id);
    while (figures.step())
      entry.metrics.push_back(read_metric(figures, 0));
    figures.reset();
  }
  return found;
}

}  // namespace commcert
