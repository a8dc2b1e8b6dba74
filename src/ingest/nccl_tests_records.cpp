#include "ingest/nccl_tests_records.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <variant>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/node_identity.hpp"
#include "core/printable.hpp"
#include "core/rank_identity.hpp"
#include "kernels/collective_types.hpp"
#include "records/collective.hpp"

namespace commcert {
namespace {

constexpr const char* kSource = "nccl-tests";

// commcert's dtype names are nccl-tests' (docs/schema/record.schema.json).
constexpr std::array<std::string_view, 12> kDtypes = {"int8",  "uint8",  "int32",  "uint32",
                                                      "int64", "uint64", "half",   "bfloat16",
                                                      "float", "double", "f8e4m3", "f8e5m2"};
constexpr std::array<std::string_view, 5> kRedops = {"sum", "prod", "min", "max", "avg"};

const CollectiveTraits* traits_named(std::string_view name) {
  // NAME_SUFFIX builds add a suffix after "_perf" (all_reduce_perf_mpi).
  for (const auto& traits : kCollectiveTraits) {
    if (name == traits.name || name == traits.nccl_tests_name ||
        (name.starts_with(traits.nccl_tests_name) &&
         name.substr(traits.nccl_tests_name.size()).starts_with("_")))
      return &traits;
  }
  return nullptr;
}

const CollectiveTraits* traits_from_file(const std::string& file) {
  const std::string stem = std::filesystem::path(file).filename().string();
  for (const auto& traits : kCollectiveTraits) {
    if (stem.find(traits.nccl_tests_name) != std::string::npos) return &traits;
  }
  return nullptr;
}

double bus_factor(BusFactor factor, int nranks) {
  const double n = nranks;
  switch (factor) {
    case BusFactor::kOne:
      return 1.0;
    case BusFactor::kRing:
      return (n - 1) / n;
    case BusFactor::kTwiceRing:
      return 2 * (n - 1) / n;
  }
  return 1.0;
}

// The fields nccl-tests does not print become null rather than a made-up number; the schema
// allows that for records with a `source` (docs/records.md "Records from other tools").
void mark_unknown(Json& record, const NcclTestsPlacement& placement, const CollectiveResult& r) {
  record["source"] = kSource;
  record[CollectiveResult::kAggregation] = nullptr;  // -a is not in the text output
  record.erase(CollectiveResult::kTiming);
  record[CollectiveResult::kRankTimeS] = nullptr;
  record[CollectiveResult::kRankTime] = nullptr;
  record[CollectiveResult::kStraggler] = nullptr;
  if (placement.iteration_cv_pct && placement.iteration_min_us && placement.iteration_max_us &&
      placement.iteration_p99_us) {
    const auto seconds = [](const std::optional<double>& us) {
      return us ? Json(*us * 1e-6) : Json(nullptr);
    };
    // The text's -I columns print no mean: the row's time (nccl-tests' mean over the same
    // iterations, on the CPU clock) stands for it. JSON has both.
    record[CollectiveResult::kIterationTime] = {
        {IterationTimes::kCount, placement.iteration_count.value_or(r.iterations)},
        {IterationTimes::kMinS, *placement.iteration_min_us * 1e-6},
        {IterationTimes::kP50S, seconds(placement.iteration_p50_us)},
        {IterationTimes::kP99S, *placement.iteration_p99_us * 1e-6},
        {IterationTimes::kMaxS, *placement.iteration_max_us * 1e-6},
        {IterationTimes::kMeanS,
         placement.iteration_mean_us ? *placement.iteration_mean_us * 1e-6 : r.time_s},
        {IterationTimes::kCv, *placement.iteration_cv_pct / 100.0}};
  } else {
    record[CollectiveResult::kIterationTime] = nullptr;
  }
}

struct TestContext {
  const NcclTestsRun* run = nullptr;
  const CollectiveTraits* traits = nullptr;
  std::vector<std::string> hosts;         // distinct, rank order
  std::vector<std::string> device_hosts;  // per device line: its host, or --node when it has none
  int nranks = 0;
  RecordOrigin origin;
};

// Empty when the row's type and op have commcert names; else why not.
std::string unsupported(const NcclTestsRow& row) {
  if (std::find(kDtypes.begin(), kDtypes.end(), row.type) == kDtypes.end())
    return fmt::format("data type '{}' has no commcert equivalent", row.type);
  if (!row.redop.empty() && std::find(kRedops.begin(), kRedops.end(), row.redop) == kRedops.end())
    return fmt::format("reduction '{}' has no commcert equivalent", row.redop);
  return {};
}

Json measurement(const TestContext& test, const NcclTestsRow& row,
                 const NcclTestsPlacement& placement, bool in_place) {
  CollectiveRecord record;
  record.origin = test.origin;
  record.backend = "nccl";
  record.collective = std::string(test.traits->name);
  record.dtype = row.type;
  if (!row.redop.empty()) record.redop = row.redop;
  if (test.traits->rooted) record.root = row.root.value_or(0);
  record.bytes = row.size_bytes;
  record.count = row.count;
  record.nranks = test.nranks;
  record.nodes = test.hosts.size();
  record.scope =
      test.hosts.size() == 1 ? CollectiveRecord::kScopeNode : CollectiveRecord::kScopeCluster;
  record.group_nodes = test.hosts;
  record.in_place = in_place;
  record.cycle = row.cycle;
  CollectiveResult r;
  r.check = placement.wrong_elements.has_value();
  r.iterations = static_cast<std::size_t>(*test.run->iterations);
  r.warmup_iterations = test.run->warmup_iterations.value_or(0);
  r.time_s = placement.time_us * 1e-6;
  r.algbw_bytes_per_s = placement.algbw_gb_s * 1e9;
  r.busbw_bytes_per_s = placement.busbw_gb_s * 1e9;
  r.bus_factor = bus_factor(test.traits->bus_factor, test.nranks);
  for (int rank = 0; rank < test.nranks; ++rank)
    r.group_ranks.push_back(rank);
  if (placement.wrong_elements)
    r.wrong_elements = static_cast<std::uint64_t>(*placement.wrong_elements);
  record.result = r;
  if (r.wrong_elements && *r.wrong_elements > 0) {
    record.status = RecordStatus::kFail;
    record.reason = fmt::format("nccl-tests counted {} wrong element(s) ({})", *r.wrong_elements,
                                in_place ? "in-place" : "out-of-place");
  }
  Json json = to_json(record);
  mark_unknown(json, placement, r);
  return json;
}

Json error_record(const TestContext& test, const std::string& host, std::string reason) {
  RecordOrigin origin = test.origin;
  origin.host = host;
  Json record = make_record(origin, CollectiveRecord::kKind, RecordStatus::kError);
  record["source"] = kSource;
  record[CollectiveRecord::kBackend] = "nccl";
  record[CollectiveRecord::kCollective] = std::string(test.traits->name);
  record["reason"] = std::move(reason);
  return record;
}

// The host an nccl-tests failure line names where nccl-tests prints it (common.h, common.cu):
// "HOST: Test NCCL failure ...", "HOST: Test CUDA failure ...", "HOST: Test timeout (Ns) ...",
// ".. HOST pid P: Test failure ...". nullopt for any other line (`# error: ...`).
std::optional<std::string> host_of_error(const std::string& text) {
  static const std::regex kHostFirst(R"(^\s*(\S+): Test (NCCL failure|CUDA failure|timeout))");
  static const std::regex kPid(R"(^\s*\.\. (\S+) pid \d+: Test failure)");
  std::smatch match;
  if (std::regex_search(text, match, kHostFirst) || std::regex_search(text, match, kPid))
    return match[1].str();
  return std::nullopt;
}

// The hosts a failure is evidence against: the one it names, matched by its exact name (node1 is
// not node10, and a host named inside the message is not the one that failed); every host of the
// test when it names none of them, since the failure then belongs to the whole test and no one
// host may be singled out.
std::vector<std::string> hosts_of_error(const TestContext& test, const std::string& text) {
  if (const auto host = host_of_error(text)) {
    if (std::find(test.hosts.begin(), test.hosts.end(), *host) != test.hosts.end()) return {*host};
  }
  return test.hosts;
}

// Where a device of the test is named in messages: its line, or its JSON element.
std::string device_origin(const NcclTestsDevice& device, std::size_t index) {
  return device.line > 0 ? fmt::format("the device line (line {})", device.line)
                         : fmt::format("config.devices[{}]", index);
}

constexpr int kMaxDerivedRanks = 1 << 20;

// How many ranks ran a test whose log has no device lines, from its rows: nccl-tests prints
// busbw = algbw x factor(n) (2(n-1)/n for allreduce, (n-1)/n for allgather, reducescatter and
// alltoall), and the printed figures pin the factor, and with it n, down to their rounding. The
// count when exactly one n fits every row; else why not.
std::variant<int, std::string> ranks_from_rows(const NcclTestsRun& run,
                                               const CollectiveTraits& traits) {
  if (traits.bus_factor == BusFactor::kOne) {
    return fmt::format("{} prints the same busbw and algbw on any number of ranks",
                       traits.nccl_tests_name);
  }
  double low = 0;
  double high = std::numeric_limits<double>::infinity();
  std::size_t used = 0;
  for (const auto& row : run.rows) {
    for (const auto& placement : {row.out_of_place, row.in_place}) {
      if (!placement) continue;
      const double h = placement->bandwidth_half_unit;
      if (placement->algbw_gb_s - h <= 0) continue;  // 0.00 GB/s: too small to tell
      low = std::max(low, std::max(0.0, placement->busbw_gb_s - h) / (placement->algbw_gb_s + h));
      high = std::min(high, (placement->busbw_gb_s + h) / (placement->algbw_gb_s - h));
      ++used;
    }
  }
  if (used == 0) return std::string("no row has an algbw large enough to tell");
  std::vector<int> fits;
  for (int n = 1; n <= kMaxDerivedRanks && fits.size() < 2; ++n) {
    const double factor = bus_factor(traits.bus_factor, n);
    if (factor > high) break;
    if (factor >= low) fits.push_back(n);
  }
  if (fits.empty()) {
    return fmt::format("busbw/algbw of the rows ({:.4f} to {:.4f}) fits no number of ranks", low,
                       high);
  }
  if (fits.size() > 1) {
    return fmt::format("busbw/algbw of the rows fits {} and {} ranks alike", fits[0], fits[1]);
  }
  return fits[0];
}

// Why the test cannot become records, with the line to name; nullopt when it can.
std::optional<UnreadableLine> prepare(const NcclTestsRun& run, const IngestOptions& options,
                                      TestContext& test) {
  const auto refuse = [&](std::string why, std::size_t line = 0) {
    return UnreadableLine{line > 0 ? line : run.first_line, std::move(why)};
  };
  test.run = &run;
  if (!run.program.empty()) {
    test.traits = traits_named(run.program);
    if (!test.traits)
      return refuse(fmt::format("test '{}' has no commcert collective", printable(run.program)));
  } else if (options.collective) {
    test.traits = traits_named(*options.collective);
    if (!test.traits)
      throw UsageError(fmt::format("--collective {}: not a collective", *options.collective));
  } else {
    test.traits = traits_from_file(options.file);
    if (!test.traits)
      return refuse(
          "the log does not name its test (nccl-tests before 2.17.4) and the file name does "
          "not either: pass --collective");
  }
  if (run.unreadable_devices > 0) {
    return refuse(fmt::format(
        "{} device line(s) could not be read (named above): which ranks ran the test is not known",
        run.unreadable_devices));
  }
  if (run.devices.empty()) {
    if (!options.node) {
      return refuse(
          "no '# Rank ... on HOST device N' lines (config.devices in JSON): which hosts ran the "
          "test is unknown; if it ran on one node, name it with --node NAME");
    }
    const auto ranks = ranks_from_rows(run, *test.traits);
    if (const auto* why = std::get_if<std::string>(&ranks)) {
      return refuse(fmt::format(
          "no '# Rank ... on HOST device N' lines, and the number of ranks is unknown: {}", *why));
    }
    test.hosts = {*options.node};
    test.nranks = std::get<int>(ranks);
  } else {
    std::set<int> ranks;
    for (std::size_t i = 0; i < run.devices.size(); ++i) {
      const NcclTestsDevice& device = run.devices[i];
      ranks.insert(device.rank);
      std::string host = device.host;
      if (host.empty()) {
        if (!options.node) {
          return refuse(fmt::format("{} names no host: which node ran rank {} is unknown; if "
                                    "the test ran on one node, name it with --node NAME",
                                    device_origin(device, i), device.rank),
                        device.line);
        }
        host = *options.node;
      }
      // A name that is no valid node name is refused where it is written, never changed.
      try {
        validate_node_name(host, device_origin(device, i));
      } catch (const UsageError& error) {
        return refuse(error.what(), device.line);
      }
      if (std::find(test.hosts.begin(), test.hosts.end(), host) == test.hosts.end())
        test.hosts.push_back(host);
      test.device_hosts.push_back(std::move(host));
    }
    test.nranks = static_cast<int>(run.devices.size());
    if (ranks.size() != run.devices.size() || *ranks.begin() != 0 ||
        *ranks.rbegin() != test.nranks - 1)
      return refuse(
          fmt::format("the device lines name ranks that are not 0..{} once each", test.nranks - 1));
  }
  if (!run.iterations)
    return refuse("no '# nThread ... iters: N' line: the iteration count is unknown");
  if (*run.iterations < 1) return refuse("iters: 0");
  test.origin.run_id = options.run_id;
  test.origin.host = test.hosts.front();
  return std::nullopt;
}

Json run_record(const TestContext& test) {
  std::vector<RankIdentity> ranks;
  std::vector<int> pids;
  std::map<std::string, int> per_host;
  for (std::size_t i = 0; i < test.run->devices.size(); ++i) {
    const NcclTestsDevice& device = test.run->devices[i];
    const std::string& host = test.device_hosts[i];
    RankIdentity identity;
    identity.rank = device.rank;
    auto pid = std::find(pids.begin(), pids.end(), device.pid);
    if (pid == pids.end()) pid = pids.insert(pids.end(), device.pid);
    identity.process = static_cast<int>(pid - pids.begin());
    identity.node = host;
    identity.hostname = host;
    identity.local_rank = per_host[host]++;
    identity.pid = std::max(device.pid, 1);
    identity.device = fmt::format("cuda:{}", device.device);
    GpuIdentity gpu;
    gpu.index = device.device;
    gpu.pci_bus_id = device.pci_bus_id;
    gpu.name = device.name;
    identity.gpu = gpu;
    ranks.push_back(std::move(identity));
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const RankIdentity& a, const RankIdentity& b) { return a.rank < b.rank; });
  Json record = make_record(test.origin, "run", RecordStatus::kOk);
  record["source"] = kSource;
  record["command"] = "ingest";
  record["backend"] = "nccl";
  record["ranks"] = to_json(ranks);
  return record;
}

bool is_stray(const NcclTestsRun& run) {
  return run.rows.empty() && run.errors.empty() && run.devices.empty() && run.program.empty() &&
         !run.iterations && run.unreadable_devices == 0;
}

}  // namespace

bool lacks_hosts(const NcclTestsLog& log) {
  return std::any_of(log.runs.begin(), log.runs.end(), [](const NcclTestsRun& run) {
    if (is_stray(run)) return false;
    return (run.devices.empty() && run.unreadable_devices == 0) ||
           std::any_of(run.devices.begin(), run.devices.end(),
                       [](const NcclTestsDevice& device) { return device.host.empty(); });
  });
}

IngestedLog nccl_tests_records(const NcclTestsLog& log, const IngestOptions& options,
                               bool write_run_record) {
  IngestedLog out;
  bool run_written = !write_run_record;
  for (const auto& run : log.runs) {
    if (is_stray(run)) continue;  // a stray comment block, not a test
    TestContext test;
    if (auto refusal = prepare(run, options, test)) {
      out.refused.push_back(std::move(*refusal));
      continue;
    }
    if (run.rows.empty() && run.errors.empty()) {
      out.refused.push_back({run.first_line, "the test printed no table row (cut off early?)"});
      continue;
    }
    if (!run_written && !run.devices.empty()) {  // no rank map without device lines
      out.records.push_back(run_record(test));
      run_written = true;
    }
    for (const auto& host : test.hosts) {
      if (std::find(out.nodes.begin(), out.nodes.end(), host) == out.nodes.end())
        out.nodes.push_back(host);
    }
    if (!run.version.empty() &&
        std::find(out.versions.begin(), out.versions.end(), run.version) == out.versions.end())
      out.versions.push_back(run.version);
    ++out.tests;
    for (const auto& row : run.rows) {
      if (const std::string why = unsupported(row); !why.empty()) {
        out.refused.push_back({row.line, why});
        continue;
      }
      if (row.out_of_place) {
        out.records.push_back(measurement(test, row, *row.out_of_place, false));
        ++out.measurements;
      }
      if (row.in_place) {
        out.records.push_back(measurement(test, row, *row.in_place, true));
        ++out.measurements;
      }
    }
    // The old `error` column is a largest difference, not a count: a failed check is known
    // only from the footer, and not for which size.
    if (!run.wrong_is_count && run.out_of_bounds.value_or(0) > 0) {
      out.records.push_back(error_record(
          test, test.hosts.front(),
          fmt::format("nccl-tests reported {} out-of-bounds value(s); this log's error column "
                      "does not say at which size",
                      *run.out_of_bounds)));
      ++out.error_records;
    }
    for (const auto& error : run.errors) {
      if (const auto named = host_of_error(error.text);
          named && std::find(test.hosts.begin(), test.hosts.end(), *named) == test.hosts.end()) {
        out.refused.push_back(
            {error.line,
             fmt::format("the failure names host '{}', which ran no rank of this test: it is "
                         "recorded against every host of the test",
                         printable(*named))});
      }
      for (const auto& host : hosts_of_error(test, error.text)) {
        out.records.push_back(error_record(
            test, host,
            fmt::format("nccl-tests, {}{}: {}", options.file,
                        error.line > 0 ? fmt::format(":{}", error.line) : std::string(),
                        printable(error.text))));
        ++out.error_records;
      }
    }
    if (!run.concluded) out.unconcluded.push_back(run.first_line);
  }
  return out;
}

}  // namespace commcert
