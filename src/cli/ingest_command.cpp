#include "cli/ingest_command.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/printable.hpp"
#include "core/record.hpp"
#include "core/records_file.hpp"
#include "core/run_directory.hpp"
#include "ingest/nccl_tests_json.hpp"
#include "ingest/nccl_tests_log.hpp"
#include "ingest/nccl_tests_records.hpp"

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
};

Json file_summary(const LogOutcome& outcome) {
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
          {"other_lines", outcome.parsed.foreign_lines.size()}};
}

// One warning line per unreadable line, the first kLinesShown of each log; returns how many.
std::size_t report_problems(const LogOutcome& outcome) {
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

}  // namespace

void IngestCommand::configure(CLI::App& app) {
  app.add_option("logs", flags_.logs,
                 "nccl-tests output files: stdout of all_reduce_perf etc., or its -J JSON")
      ->required();
  app.add_option("--out", flags_.out, "Results root; the run goes to <out>/<run-id>/")
      ->envname("COMMCERT_OUT")
      ->capture_default_str();
  app.add_option("--run-id", flags_.run_id, "Run id (default: ingest-<time>)");
  app.add_option("--collective", flags_.collective,
                 "Collective of tests whose log does not name it (nccl-tests before 2.17.4), "
                 "e.g. allreduce or all_reduce_perf");
}

int IngestCommand::run(Invocation& invocation) {
  if (flags_.run_id) validate_run_id(*flags_.run_id);
  const std::string run_id = flags_.run_id.value_or(make_run_id("ingest"));
  const std::string started = utc_timestamp_now();

  // Every log is read before anything is written: a bad path leaves no half run behind.
  std::vector<LogOutcome> outcomes;
  bool run_record_written = false;  // one rank map per run: the first test's
  for (const auto& path : flags_.logs) {
    LogOutcome outcome;
    outcome.path = path;
    const std::string text = read_bounded_file(path, kMaxLogBytes, "nccl-tests log");
    outcome.parsed =
        looks_like_json(text) ? parse_nccl_tests_json(text) : parse_nccl_tests_log(text);
    IngestOptions options{run_id, path, flags_.collective};
    outcome.ingested = nccl_tests_records(outcome.parsed, options, !run_record_written);
    run_record_written = run_record_written || outcome.ingested.tests > 0;
    outcomes.push_back(std::move(outcome));
  }
  std::size_t problems = 0;
  std::size_t measurements = 0;
  std::size_t errors = 0;
  bool cut_off = false;
  std::vector<std::string> nodes;
  for (const auto& outcome : outcomes) {
    problems += report_problems(outcome);
    measurements += outcome.ingested.measurements;
    errors += outcome.ingested.error_records;
    cut_off = cut_off || !outcome.ingested.unconcluded.empty();
    for (const auto& node : outcome.ingested.nodes) {
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
  }
  const bool any_record = std::any_of(outcomes.begin(), outcomes.end(),
                                      [](const LogOutcome& o) { return o.ingested.tests > 0; });
  if (!any_record) {
    throw UsageError(fmt::format("{}: no nccl-tests result could be read (nothing written)",
                                 printable(flags_.logs.front())));
  }

  const fs::path directory = fs::path(flags_.out) / run_id;
  if (fs::exists(directory / "records.jsonl")) {
    throw UsageError(
        fmt::format("{} already holds a run: choose another --run-id", directory.string()));
  }
  const fs::path created = create_run_directory(flags_.out, run_id);
  {
    RecordsFile records(created / "records.jsonl");
    for (const auto& outcome : outcomes) {
      for (const auto& record : outcome.ingested.records)
        records.append(record);
    }
  }
  Json files = Json::array();
  for (const auto& outcome : outcomes)
    files.push_back(file_summary(outcome));
  // A test cut off before its footer did not finish: the validator holds its nodes
  // inconclusive as for any unfinished run (certify --allow-partial judges it anyway).
  const Json meta = {{"schema", kRecordSchemaVersion},
                     {"run_id", run_id},
                     {"command", "ingest"},
                     {"source", "nccl-tests"},
                     {"argv", invocation.arguments},
                     {"status", cut_off ? "running" : "ok"},
                     {"exit_code", nullptr},
                     {"start_time", started},
                     {"end_time", utc_timestamp_now()},
                     {"nodes", nodes},
                     {"ingest", {{"files", std::move(files)}}}};
  write_json_file_atomically(created / "meta.json", meta);
  fmt::print("ingested {} measurement(s) and {} error record(s) on {} node(s) into {}\n",
             measurements, errors, nodes.size(), created.string());
  return problems > 0 || cut_off ? to_int(ExitCode::kFailed) : to_int(ExitCode::kOk);
}

}  // namespace commcert
