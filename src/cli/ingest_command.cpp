#include "cli/ingest_command.hpp"

#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/node_identity.hpp"
#include "core/printable.hpp"
#include "core/record.hpp"
#include "core/records_file.hpp"
#include "core/run_directory.hpp"
#include "ingest/dcgm_diag.hpp"
#include "ingest/nccl_tests_json.hpp"
#include "ingest/nccl_tests_log.hpp"
#include "ingest/nccl_tests_records.hpp"
#include "records/run_meta.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;

// An nccl-tests log is a few KiB per test; a gigabyte is a file given by mistake.
constexpr std::uint64_t kMaxLogBytes = std::uint64_t{1} << 30;
// Lines named one by one on stderr per log; the rest are counted.
constexpr std::size_t kLinesShown = 10;

struct LogOutcome {
  std::string path;
  IngestedLog ingested;
  NcclTestsLog parsed;
  // A DCGM diagnostic (dcgmi diag -j) instead of an nccl-tests log.
  std::optional<DcgmRecords> dcgm;
  DcgmDiag dcgm_parsed;
  std::string node;  // --node: the DCGM file's node, or that of an nccl-tests log's unnamed hosts
};

Json dcgm_file_summary(const LogOutcome& outcome) {
  return {{"path", outcome.path},
          {"source", "dcgm"},
          {"node", outcome.node},
          {"driver_version", outcome.dcgm_parsed.driver_version.value_or("")},
          {"dcgm_version", outcome.dcgm_parsed.dcgm_version.value_or("")},
          {"dcgm_level", outcome.dcgm->level},
          {"gpus", outcome.dcgm->gpus},
          {"unreadable", outcome.dcgm_parsed.unreadable},
          {"not_judged", outcome.dcgm->not_judged}};
}

// One line per element that could not be read or judged (the first kLinesShown); returns how
// many there were.
std::size_t report_dcgm_problems(const LogOutcome& outcome);

Json file_summary(const LogOutcome& outcome) {
  if (outcome.dcgm) return dcgm_file_summary(outcome);
  Json unreadable = Json::array();
  for (const auto& line : outcome.parsed.unreadable)
    unreadable.push_back({{"line", line.line}, {"why", line.why}});
  for (const auto& line : outcome.ingested.refused)
    unreadable.push_back({{"line", line.line}, {"why", line.why}});
  return {{"path", outcome.path},
          {"tests", outcome.ingested.tests},
          {"measurements", outcome.ingested.measurements},
          {"nccl_tests_versions", outcome.ingested.versions},
          {"unreadable", std::move(unreadable)},
          {"cut_off_tests", outcome.ingested.unconcluded},
          {"other_lines", outcome.parsed.foreign_lines.size()},
          {"node", outcome.node.empty() ? Json(nullptr) : Json(outcome.node)}};
}

// One warning line per unreadable line, the first kLinesShown of each log; returns how many.
std::size_t report_problems(const LogOutcome& outcome) {
  if (outcome.dcgm) return report_dcgm_problems(outcome);
  std::vector<UnreadableLine> problems = outcome.parsed.unreadable;
  problems.insert(problems.end(), outcome.ingested.refused.begin(), outcome.ingested.refused.end());
  std::sort(problems.begin(), problems.end(),
            [](const UnreadableLine& a, const UnreadableLine& b) { return a.line < b.line; });
  for (std::size_t i = 0; i < problems.size() && i < kLinesShown; ++i) {
    const std::string where =
        problems[i].line > 0 ? fmt::format(":{}", problems[i].line) : std::string();
    fmt::print(stderr, "commcert ingest: {}{}: {}\n", printable(outcome.path), where,
               printable(problems[i].why));
  }
  if (problems.size() > kLinesShown) {
    fmt::print(stderr, "commcert ingest: {}: {} more unreadable line(s) (meta.json lists all)\n",
               printable(outcome.path), problems.size() - kLinesShown);
  }
  for (const std::size_t line : outcome.ingested.unconcluded) {
    fmt::print(stderr,
               "commcert ingest: {}:{}: the test did not finish (no '# Avg bus bandwidth' footer, "
               "or no end_time in JSON): it was cut off or crashed; the run is marked unfinished\n",
               printable(outcome.path), line);
  }
  return problems.size();
}

std::size_t report_dcgm_problems(const LogOutcome& outcome) {
  std::vector<std::string> problems = outcome.dcgm_parsed.unreadable;
  for (const auto& test : outcome.dcgm->not_judged)
    problems.push_back("not judged: " + test);
  for (std::size_t i = 0; i < problems.size() && i < kLinesShown; ++i)
    fmt::print(stderr, "commcert ingest: {}: {}\n", printable(outcome.path),
               printable(problems[i]));
  if (problems.size() > kLinesShown) {
    fmt::print(stderr, "commcert ingest: {}: {} more (meta.json lists all)\n",
               printable(outcome.path), problems.size() - kLinesShown);
  }
  return problems.size();
}

// "nccl-tests", "dcgm", or both comma-separated, for meta.json.
std::string sources_of(const std::vector<LogOutcome>& outcomes) {
  const bool dcgm = std::any_of(outcomes.begin(), outcomes.end(),
                                [](const LogOutcome& o) { return o.dcgm.has_value(); });
  const bool nccl = std::any_of(outcomes.begin(), outcomes.end(),
                                [](const LogOutcome& o) { return !o.dcgm.has_value(); });
  return nccl && dcgm ? "nccl-tests,dcgm" : dcgm ? "dcgm" : "nccl-tests";
}

// DCGM's JSON names no host: the i-th DCGM file ran on the i-th --node. A file that is not a
// whole diagnostic is a usage error naming where it breaks (nothing is written).
void read_dcgm(LogOutcome& outcome, std::string_view text, const std::string& run_id,
               const std::vector<std::string>& nodes, std::size_t index) {
  outcome.dcgm_parsed = parse_dcgm_diag(text);
  if (const auto& error = outcome.dcgm_parsed.error) {
    const DcgmDiag& d = outcome.dcgm_parsed;
    throw UsageError(d.error_line > 0 ? fmt::format("{}:{}:{}: {}", printable(outcome.path),
                                                    d.error_line, d.error_column, *error)
                                      : fmt::format("{}: {}", printable(outcome.path), *error));
  }
  if (index >= nodes.size()) {
    throw UsageError(fmt::format(
        "{}: a DCGM diagnostic does not name the node it ran on: give --node NAME (once per file "
        "that names no node, in order)",
        printable(outcome.path)));
  }
  outcome.node = nodes[index];
  outcome.dcgm = dcgm_diag_records(outcome.dcgm_parsed, {run_id, outcome.node});
}

bool wrote_records(const LogOutcome& outcome) {
  return outcome.dcgm ? !outcome.dcgm->records.empty() : outcome.ingested.tests > 0;
}

// Every file read, in order, before anything is written: a bad path leaves no half run behind.
// A file that does not name its node takes the next of `nodes`.
std::vector<LogOutcome> read_logs(const std::vector<std::string>& logs,
                                  const std::vector<std::string>& nodes,
                                  const std::optional<std::string>& collective,
                                  const std::string& run_id) {
  std::vector<LogOutcome> outcomes;
  std::size_t unnamed_files = 0;    // files that take a --node, in order
  bool run_record_written = false;  // one rank map per run: the first test's
  for (const auto& path : logs) {
    LogOutcome outcome;
    outcome.path = path;
    const std::string text = read_bounded_file(path, kMaxLogBytes, "nccl-tests log");
    if (looks_like_dcgm_diag(text)) {
      read_dcgm(outcome, text, run_id, nodes, unnamed_files++);
      outcomes.push_back(std::move(outcome));
      continue;
    }
    outcome.parsed =
        looks_like_json(text) ? parse_nccl_tests_json(text) : parse_nccl_tests_log(text);
    IngestOptions options{run_id, path, collective};
    // A log that does not name its hosts (a pasted table) takes the next --node; without one its
    // tests are refused, each with its line.
    if (lacks_hosts(outcome.parsed) && unnamed_files < nodes.size()) {
      outcome.node = nodes[unnamed_files];
      options.node = outcome.node;
    }
    if (lacks_hosts(outcome.parsed)) ++unnamed_files;
    outcome.ingested = nccl_tests_records(outcome.parsed, options, !run_record_written);
    run_record_written =
        run_record_written ||
        std::any_of(outcome.ingested.records.begin(), outcome.ingested.records.end(),
                    [](const Json& record) { return record["kind"] == "run"; });
    outcomes.push_back(std::move(outcome));
  }
  if (nodes.size() > unnamed_files) {
    throw UsageError(fmt::format(
        "--node given {} time(s) for {} file(s) that do not name their node (DCGM diagnostics, "
        "nccl-tests logs without '# Rank ... on HOST' lines)",
        nodes.size(), unnamed_files));
  }
  return outcomes;
}

// What the files held, counted over all of them.
struct IngestTally {
  std::size_t problems = 0;  // lines that could not be read, tests refused (named on stderr)
  std::size_t measurements = 0;
  std::size_t errors = 0;
  std::size_t dcgm_gpus = 0;
  std::set<int> dcgm_levels;
  bool cut_off = false;  // a test ended before its footer
  std::vector<std::string> nodes;
};

// Names each file's problems on stderr as it counts them.
IngestTally tally_outcomes(const std::vector<LogOutcome>& outcomes) {
  IngestTally tally;
  std::vector<std::string>& nodes = tally.nodes;
  for (const auto& outcome : outcomes) {
    tally.problems += report_problems(outcome);
    tally.measurements += outcome.ingested.measurements;
    tally.errors += outcome.ingested.error_records;
    if (outcome.dcgm) {
      tally.dcgm_gpus += outcome.dcgm->records.size();
      tally.dcgm_levels.insert(outcome.dcgm->level);
      if (!outcome.dcgm->records.empty() &&
          std::find(nodes.begin(), nodes.end(), outcome.node) == nodes.end())
        nodes.push_back(outcome.node);
    }
    tally.cut_off = tally.cut_off || !outcome.ingested.unconcluded.empty();
    for (const auto& node : outcome.ingested.nodes) {
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
  }
  return tally;
}

void refuse_when_nothing_was_read(const std::vector<LogOutcome>& outcomes,
                                  const std::vector<std::string>& logs, std::size_t problems) {
  if (std::any_of(outcomes.begin(), outcomes.end(), wrote_records)) return;
  std::string files;
  for (const auto& path : logs)
    files += (files.empty() ? "" : ", ") + printable(path);
  throw UsageError(fmt::format(
      "{}: no nccl-tests result could be read, nor a DCGM GPU result (nothing written): {}", files,
      problems > 0 ? "each line that could not be read is named above"
                   : "no line is part of an nccl-tests test (no '# nThread ... iters:', "
                     "'# Rank ... on HOST', column header or result row line)"));
}

// The run directory <out>/<run_id> with every record of every file; refuses a run id in use.
fs::path write_records(const std::string& out, const std::string& run_id,
                       const std::vector<LogOutcome>& outcomes) {
  const fs::path directory = fs::path(out) / run_id;
  if (fs::exists(directory / "records.jsonl")) {
    throw UsageError(
        fmt::format("{} already holds a run: choose another --run-id", directory.string()));
  }
  fs::path created = create_run_directory(out, run_id);
  RecordsFile records(created / "records.jsonl");
  for (const auto& outcome : outcomes) {
    for (const auto& record : outcome.ingested.records)
      records.append(record);
    if (outcome.dcgm) {
      for (const auto& record : outcome.dcgm->records)
        records.append(record);
    }
  }
  return created;
}

// A log that reported a failure (wrong elements, a crash) or a DCGM result that failed is a run
// that did not go well, and meta.json says so: `ok` beside records of a fault is a run whose
// account of itself cannot be trusted.
bool reports_a_fault(const std::vector<LogOutcome>& outcomes) {
  const auto is_fault = [](const Json& record) {
    const std::string status = record.value("status", "");
    return status == "fail" || status == "error" || status == "timeout";
  };
  bool faults = false;
  for (const auto& outcome : outcomes) {
    faults =
        faults ||
        std::any_of(outcome.ingested.records.begin(), outcome.ingested.records.end(), is_fault) ||
        (outcome.dcgm &&
         std::any_of(outcome.dcgm->records.begin(), outcome.dcgm->records.end(), is_fault));
  }
  return faults;
}

void print_summary(const IngestTally& tally, const fs::path& created,
                   const std::vector<LogOutcome>& outcomes) {
  fmt::print("ingested {} measurement(s) and {} error record(s) on {} node(s) into {}\n",
             tally.measurements, tally.errors, tally.nodes.size(), created.string());
  if (tally.dcgm_gpus > 0) {
    fmt::print(
        "read {} GPU result(s) from DCGM diagnostics (run level {}, from the tests they carry)\n",
        tally.dcgm_gpus, fmt::join(tally.dcgm_levels, ", "));
  }
  for (const auto& outcome : outcomes) {
    if (!outcome.dcgm && !outcome.node.empty() && outcome.ingested.tests > 0) {
      fmt::print("{}: the log names no host: its tests were read as run on --node {}\n",
                 printable(outcome.path), outcome.node);
    }
  }
}

}  // namespace

void IngestCommand::configure(CLI::App& app) {
  app.add_option("logs", flags_.logs,
                 "nccl-tests output files (stdout of all_reduce_perf etc., or its -J JSON) or "
                 "DCGM diagnostics (dcgmi diag -j)")
      ->required();
  app.add_option("--out", flags_.out, "Results root; the run goes to <out>/<run-id>/")
      ->envname("COMMCERT_OUT")
      ->capture_default_str();
  app.add_option("--run-id", flags_.run_id, "Run id (default: ingest-<time>)");
  app.add_option("--collective", flags_.collective,
                 "Collective of tests whose log does not name it (nccl-tests before 2.17.4), "
                 "e.g. allreduce or all_reduce_perf");
  app.add_option("--node", flags_.nodes,
                 "Node a file ran on when it does not say: once per DCGM diagnostic and per "
                 "nccl-tests log without '# Rank ... on HOST' lines, in the order the files are "
                 "given");
}

int IngestCommand::run(Invocation& invocation) {
  if (flags_.run_id) validate_run_id(*flags_.run_id);
  for (const auto& node : flags_.nodes)
    validate_node_name(node, "--node");
  const std::string run_id = flags_.run_id.value_or(make_run_id("ingest"));
  const std::string started = utc_timestamp_now();
  const std::vector<LogOutcome> outcomes =
      read_logs(flags_.logs, flags_.nodes, flags_.collective, run_id);
  const IngestTally tally = tally_outcomes(outcomes);
  refuse_when_nothing_was_read(outcomes, flags_.logs, tally.problems);
  const fs::path created = write_records(flags_.out, run_id, outcomes);
  std::vector<Json> files;
  files.reserve(outcomes.size());
  for (const auto& outcome : outcomes)
    files.push_back(file_summary(outcome));
  // A test cut off before its footer did not finish: the validator holds its nodes
  // inconclusive as for any unfinished run (certify --allow-partial judges it anyway).
  RunMeta meta;
  meta.schema = kRecordSchemaVersion;
  meta.run_id = run_id;
  meta.command = "ingest";
  meta.source = sources_of(outcomes);
  meta.argv = invocation.arguments;
  meta.status = tally.cut_off ? "running" : reports_a_fault(outcomes) ? "fail" : "ok";
  meta.exit_code = OrNull<int>();
  meta.start_time = started;
  meta.end_time = utc_timestamp_now();
  meta.nodes = tally.nodes;
  meta.ingest = MetaIngest{std::move(files)};
  write_json_file_atomically(created / RunMeta::kFileName, to_json(meta));
  print_summary(tally, created, outcomes);
  return tally.problems > 0 || tally.cut_off ? to_int(ExitCode::kFailed) : to_int(ExitCode::kOk);
}

}  // namespace commcert
