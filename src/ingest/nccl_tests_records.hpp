#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "ingest/nccl_tests_log.hpp"

namespace commcert {

struct IngestOptions {
  std::string run_id;
  std::string file;  // the log's path, for messages and to recognise a test from its name
  // The collective (commcert name or nccl-tests binary) of tests whose log does not name it.
  std::optional<std::string> collective;
  // The node (`--node`) of tests whose log does not name their hosts: a pasted table without
  // `# Rank ... on HOST` lines, or JSON whose config.devices have no hostname. A valid node name.
  std::optional<std::string> node = std::nullopt;
};

// What one log became.
struct IngestedLog {
  std::vector<Json> records;             // kind run (first test with devices), collective
  std::vector<UnreadableLine> refused;   // tests or rows that could not become records
  std::size_t tests = 0;                 // tests that became records
  std::size_t measurements = 0;          // collective records with a measurement
  std::size_t error_records = 0;         // collective records with status error
  std::vector<std::size_t> unconcluded;  // first lines of tests that have no footer
  std::vector<std::string> nodes;        // distinct hosts, in rank order of first appearance
  std::vector<std::string> versions;     // nccl-tests versions the log names
};

// Whether some test of the log does not name the hosts it ran on (no device lines, or a device
// without a hostname): such a log takes a `--node`, as a DCGM diagnostic does.
[[nodiscard]] bool lacks_hosts(const NcclTestsLog& log);

// Turns the parsed log into commcert records (docs/ingest.md "What a record says"). Nothing is
// guessed: a test whose log does not say which hosts ran it (and has no `node`), or which
// collective it is, is refused with its line; a host that is no valid node name is refused on its
// device line, never changed; what the log cannot know (per-rank times, which rank had wrong data,
// the median of the iterations) is null.
[[nodiscard]] IngestedLog nccl_tests_records(const NcclTestsLog& log, const IngestOptions& options,
                                             bool write_run_record);

}  // namespace commcert
