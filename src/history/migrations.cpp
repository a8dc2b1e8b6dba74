#include "history/migrations.hpp"

#include <array>

#include "history/history_db.hpp"

namespace commcert {
namespace {

constexpr std::array<std::string_view, 2> kMigrations = {
    // 1: runs and their figures.
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  run_id TEXT NOT NULL,
  started TEXT NOT NULL,
  added TEXT NOT NULL,
  source TEXT NOT NULL,
  path TEXT NOT NULL,
  meta TEXT NOT NULL
);
CREATE TABLE metrics (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node TEXT NOT NULL,
  gpu TEXT NOT NULL,
  subject TEXT NOT NULL,
  variant TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  metric TEXT NOT NULL,
  value REAL NOT NULL,
  samples INTEGER,
  sample_mean REAL,
  sample_stddev REAL,
  straggler TEXT NOT NULL
);
CREATE INDEX metrics_by_run ON metrics(run);
)sql",
    // 2: verdicts per node, and figures found by node for `history show`.
    R"sql(
CREATE TABLE verdicts (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node TEXT NOT NULL,
  state TEXT NOT NULL,
  first_reason TEXT NOT NULL,
  PRIMARY KEY (run, node)
);
CREATE INDEX metrics_by_node ON metrics(node, run);
CREATE INDEX runs_by_start ON runs(started);
)sql",
};

static_assert(kMigrations.size() == HistoryDb::kSchemaVersion,
              "one migration step per schema version");

}  // namespace

std::span<const std::string_view> history_migrations() {
  return kMigrations;
}

}  // namespace commcert
