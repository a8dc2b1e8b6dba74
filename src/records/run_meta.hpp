#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/json.hpp"
#include "core/rank_identity.hpp"

namespace commcert {

// meta.json of a run directory (docs/records.md "meta.json", docs/schema/meta.schema.json): what
// the command that wrote the directory was, how it was built and run, and how it ended. One
// typed definition for its writers (cli/run_setup.cpp, cli/stage_session.cpp,
// cli/ingest_command.cpp) and its readers (validate/inputs.cpp, history/run_summary.cpp,
// report/run_details.cpp).
//
// Every field is optional on reading: runs written before a field existed, and the meta.json of
// `commcert ingest`, leave fields out, and a reader treats a field that is absent as "not said".
// A field that may be written as null is `std::optional<OrNull<T>>`: absent, null and a value
// stay apart, so a meta.json reads back as it was written. Fields this version does not know (a
// newer writer's) are kept in `unknown` and written back after the known ones; readers ignore
// them.

template <typename T>
using OrNull = std::optional<T>;  // nullopt: the field was written as null

// A meta.json that cannot be used. `what()` names the file (or, from meta_from_json, the field)
// and what is wrong, on one line.
class RunMetaError : public std::runtime_error {
 public:
  enum class Problem {
    kUnreadable,   // missing, not JSON (a truncated file), or not a JSON object
    kWrongType,    // a field of the wrong type
    kNewerSchema,  // `schema` newer than this reader
  };
  RunMetaError(Problem problem, const std::string& what)
      : std::runtime_error(what), problem_(problem) {}
  [[nodiscard]] Problem problem() const { return problem_; }

 private:
  Problem problem_;
};

// `commcert`: the build that wrote the run.
struct MetaBuildFeatures {
  std::optional<bool> cuda, mpi, verbs;
};
struct MetaBuild {
  std::optional<std::string> version, git, build_type, compiler;
  std::optional<MetaBuildFeatures> features;
};

// `backend`: the data plane and why it was chosen.
struct MetaBackend {
  std::optional<std::string> name;       // mpi, nccl
  std::optional<std::string> selection;  // auto, requested
  std::optional<std::string> reason;
};

// `versions`: null where the library is absent.
struct MetaVersions {
  std::optional<OrNull<std::string>> mpi, nccl, cuda_runtime, cuda_driver;
};

// One entry of `libraries`: the copy of a library the process loaded.
struct MetaLibrary {
  std::optional<bool> available;
  std::optional<OrNull<std::string>> version, path, origin, detail;
};

// `error`: the error that ended the stage, whichever process it happened on.
struct MetaStageError {
  std::optional<std::string> command;
  std::optional<int> process, rank;
  std::optional<std::string> node, reason;
};

// `ingest` of `commcert ingest`: one summary per file read. A file's summary is kept as written
// (its fields differ for nccl-tests logs and DCGM diagnostics; docs/ingest.md).
struct MetaIngest {
  std::optional<std::vector<Json>> files;
};

// `parameters`: each stage's resolved options, as its command writes them.
struct SweepParameters {
  std::optional<std::vector<std::string>> collectives;
  std::optional<std::uint64_t> min_bytes, max_bytes, step_bytes;
  std::optional<double> step_factor;
  std::optional<std::int64_t> iterations, warmup_iterations;
  std::optional<bool> check;
  std::optional<std::string> datatypes, ops;
  std::optional<std::int64_t> root, blocking;
  std::optional<std::string> aggregation;
  std::optional<std::int64_t> cycles;
  std::optional<double> timeout_s;
  std::optional<std::int64_t> graph_launches, gpus_per_process;
  std::optional<OrNull<double>> target_ci_pct;
  std::optional<double> size_budget_s;
  std::optional<std::int64_t> max_iterations;
  std::optional<std::uint64_t> seed;
  std::optional<std::string> scope, pair_ranks;
  std::optional<OrNull<std::string>> pair_list;
  std::optional<OrNull<std::vector<std::vector<std::string>>>> groups;
  Json unknown = Json::object();
};

struct BurnParameters {
  std::optional<std::string> kernel;
  std::optional<std::int64_t> size;
  std::optional<double> duration_s, window_s;
  std::optional<std::int64_t> check_every, gpus_per_process;
  std::optional<double> telemetry_interval_s;
  std::optional<std::string> nvml_library;
  std::optional<double> timeout_s;
  std::optional<std::uint64_t> seed;
  Json unknown = Json::object();
};

struct MembwParameters {
  std::optional<std::uint64_t> buffer_bytes;
  std::optional<std::int64_t> iterations, warmup_iterations;
  std::optional<double> memtest_fraction;
  std::optional<std::uint64_t> host_bytes;
  std::optional<std::int64_t> host_iterations, gpus_per_process;
  std::optional<double> timeout_s;
  std::optional<std::string> sysfs_root;
  std::optional<std::uint64_t> seed;
  Json unknown = Json::object();
};

struct HealthParameters {
  std::optional<std::string> sysfs_root, nvml_library;
  std::optional<double> watch_s, timeout_s;
  Json unknown = Json::object();
};

struct P2pParameters {
  std::optional<std::uint64_t> bytes;
  std::optional<std::int64_t> copies_per_sample, iterations, warmup_iterations;
  std::optional<std::string> methods, paths;  // the --methods and --paths lists as given
  std::optional<std::uint64_t> chase_bytes, chase_stride;
  std::optional<std::int64_t> chase_loads, gpus_per_process;
  std::optional<double> timeout_s;
  std::optional<std::string> sysfs_root;
  Json unknown = Json::object();
};

struct LinksParameters {
  std::optional<std::string> transport, memory;
  std::optional<std::vector<std::string>> tests;
  std::optional<std::vector<std::uint64_t>> sizes;
  std::optional<std::uint64_t> latency_bytes;
  std::optional<std::int64_t> iterations, warmup_iterations, window;
  std::optional<double> timeout_s;
  Json unknown = Json::object();
};

// The parameters of a command this version does not know, kept as written.
struct OtherParameters {
  Json json = Json::object();
};

using StageParameters =
    std::variant<SweepParameters, BurnParameters, MembwParameters, HealthParameters, P2pParameters,
                 LinksParameters, OtherParameters>;

// The meta.json of one command. The file's top level is the latest command that wrote to the
// run directory; `earlier` holds the ones before it, oldest first (the stages of `commcert run`).
struct RunMeta {
  static constexpr int kSchemaVersion = 1;  // the newest `schema` this reader reads
  static constexpr const char* kFileName = "meta.json";

  std::optional<int> schema;
  std::optional<std::string> run_id;
  std::optional<std::string> command;  // sweep, burn, membw, health, p2p, links, ingest
  std::optional<std::string> source;   // ingest: nccl-tests, dcgm, or both comma-separated
  std::optional<std::vector<std::string>> argv;
  std::optional<std::string> status;  // running, ok, fail, error, timeout
  std::optional<OrNull<int>> exit_code;
  std::optional<std::string> start_time;
  std::optional<OrNull<std::string>> end_time;
  std::optional<MetaBuild> commcert;
  std::optional<OrNull<MetaBackend>> backend;  // null: the stage has no data plane
  std::optional<MetaVersions> versions;
  std::optional<std::vector<std::pair<std::string, MetaLibrary>>> libraries;
  std::optional<std::vector<std::string>> nodes;
  std::optional<int> processes;
  std::optional<std::vector<RankIdentity>> ranks;
  std::optional<std::vector<std::pair<std::string, std::string>>> environment;
  std::optional<std::vector<std::string>> warnings;
  std::optional<StageParameters> parameters;  // its alternative follows `command`
  std::optional<OrNull<std::string>> fault_injection;
  std::optional<bool> interrupted;
  std::optional<MetaStageError> error;
  std::optional<MetaIngest> ingest;
  Json unknown = Json::object();
  std::vector<RunMeta> earlier;  // empty: no `earlier` field

  // Timestamps are ISO 8601 UTC of one width, so text order is time order: the span of the run
  // directory, over this command and every earlier one ("" where none says).
  [[nodiscard]] std::string first_start_time() const;
  [[nodiscard]] std::string last_end_time() const;
  // The statuses this command and every earlier one give, earlier ones last.
  [[nodiscard]] std::vector<std::string> statuses() const;
  // `fault_injection` as text: the plan, or "" when none (null or absent).
  [[nodiscard]] std::string fault_plan() const;
};

// The fields in the order docs/records.md lists them; absent fields are left out.
[[nodiscard]] Json to_json(const RunMeta& meta);
[[nodiscard]] Json to_json(const StageParameters& parameters);

// Throws RunMetaError (kWrongType, naming the field: "earlier[0].status: expected a string, found
// number 5", or "meta.json: nested deeper than 64 levels"; kNewerSchema) for a JSON object that is
// no meta.json this version can read.
[[nodiscard]] RunMeta run_meta_from_json(const Json& json);
// `command` picks the alternative: sweep, burn, membw, health, p2p, links; any other command's
// parameters are OtherParameters. Throws RunMetaError (kWrongType) naming `parameters.<field>`.
[[nodiscard]] StageParameters stage_parameters_from_json(std::string_view command, Json json);

// Reads a meta.json file (at most kMaxRunMetaBytes). Throws RunMetaError whose message starts
// with the file's path: kUnreadable when it is missing, not JSON (a truncated file) or not an
// object, else as run_meta_from_json.
[[nodiscard]] RunMeta read_run_meta(const std::filesystem::path& path);

}  // namespace commcert
