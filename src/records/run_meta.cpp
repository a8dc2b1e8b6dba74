#include "records/run_meta.hpp"

#include <algorithm>
#include <concepts>
#include <limits>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "core/bounded_input.hpp"

namespace commcert {
namespace {

// Each struct's fields in the order meta.json writes them: one list for writing and reading.
// `Self` is the struct, const or not; `field(name, member)` is called for each.
template <typename Self, typename Struct>
concept Is = std::same_as<std::remove_const_t<Self>, Struct>;

template <typename Self, typename Field>
requires Is<Self, MetaBuildFeatures>
void fields(Self& s, Field&& field) {
  field("cuda", s.cuda);
  field("mpi", s.mpi);
  field("verbs", s.verbs);
}

template <typename Self, typename Field>
requires Is<Self, MetaBuild>
void fields(Self& s, Field&& field) {
  field("version", s.version);
  field("git", s.git);
  field("build_type", s.build_type);
  field("compiler", s.compiler);
  field("features", s.features);
}

template <typename Self, typename Field>
requires Is<Self, MetaBackend>
void fields(Self& s, Field&& field) {
  field("name", s.name);
  field("selection", s.selection);
  field("reason", s.reason);
}

template <typename Self, typename Field>
requires Is<Self, MetaVersions>
void fields(Self& s, Field&& field) {
  field("mpi", s.mpi);
  field("nccl", s.nccl);
  field("cuda_runtime", s.cuda_runtime);
  field("cuda_driver", s.cuda_driver);
}

template <typename Self, typename Field>
requires Is<Self, MetaLibrary>
void fields(Self& s, Field&& field) {
  field("available", s.available);
  field("version", s.version);
  field("path", s.path);
  field("origin", s.origin);
  field("detail", s.detail);
}

template <typename Self, typename Field>
requires Is<Self, MetaStageError>
void fields(Self& s, Field&& field) {
  field("command", s.command);
  field("process", s.process);
  field("rank", s.rank);
  field("node", s.node);
  field("reason", s.reason);
}

template <typename Self, typename Field>
requires Is<Self, MetaIngest>
void fields(Self& s, Field&& field) {
  field("files", s.files);
}

template <typename Self, typename Field>
requires Is<Self, SweepParameters>
void fields(Self& s, Field&& field) {
  field("collectives", s.collectives);
  field("min_bytes", s.min_bytes);
  field("max_bytes", s.max_bytes);
  field("step_bytes", s.step_bytes);
  field("step_factor", s.step_factor);
  field("iterations", s.iterations);
  field("warmup_iterations", s.warmup_iterations);
  field("check", s.check);
  field("datatypes", s.datatypes);
  field("ops", s.ops);
  field("root", s.root);
  field("blocking", s.blocking);
  field("aggregation", s.aggregation);
  field("cycles", s.cycles);
  field("timeout_s", s.timeout_s);
  field("graph_launches", s.graph_launches);
  field("gpus_per_process", s.gpus_per_process);
  field("target_ci_pct", s.target_ci_pct);
  field("size_budget_s", s.size_budget_s);
  field("max_iterations", s.max_iterations);
  field("seed", s.seed);
  field("scope", s.scope);
  field("pair_ranks", s.pair_ranks);
  field("pair_list", s.pair_list);
  field("groups", s.groups);
}

template <typename Self, typename Field>
requires Is<Self, BurnParameters>
void fields(Self& s, Field&& field) {
  field("kernel", s.kernel);
  field("size", s.size);
  field("duration_s", s.duration_s);
  field("window_s", s.window_s);
  field("check_every", s.check_every);
  field("gpus_per_process", s.gpus_per_process);
  field("telemetry_interval_s", s.telemetry_interval_s);
  field("nvml_library", s.nvml_library);
  field("timeout_s", s.timeout_s);
  field("seed", s.seed);
}

template <typename Self, typename Field>
requires Is<Self, MembwParameters>
void fields(Self& s, Field&& field) {
  field("buffer_bytes", s.buffer_bytes);
  field("iterations", s.iterations);
  field("warmup_iterations", s.warmup_iterations);
  field("memtest_fraction", s.memtest_fraction);
  field("host_bytes", s.host_bytes);
  field("host_iterations", s.host_iterations);
  field("gpus_per_process", s.gpus_per_process);
  field("timeout_s", s.timeout_s);
  field("sysfs_root", s.sysfs_root);
  field("seed", s.seed);
}

template <typename Self, typename Field>
requires Is<Self, HealthParameters>
void fields(Self& s, Field&& field) {
  field("sysfs_root", s.sysfs_root);
  field("nvml_library", s.nvml_library);
  field("watch_s", s.watch_s);
  field("timeout_s", s.timeout_s);
}

template <typename Self, typename Field>
requires Is<Self, P2pParameters>
void fields(Self& s, Field&& field) {
  field("bytes", s.bytes);
  field("copies_per_sample", s.copies_per_sample);
  field("iterations", s.iterations);
  field("warmup_iterations", s.warmup_iterations);
  field("methods", s.methods);
  field("paths", s.paths);
  field("chase_bytes", s.chase_bytes);
  field("chase_stride", s.chase_stride);
  field("chase_loads", s.chase_loads);
  field("gpus_per_process", s.gpus_per_process);
  field("timeout_s", s.timeout_s);
  field("sysfs_root", s.sysfs_root);
}

template <typename Self, typename Field>
requires Is<Self, LinksParameters>
void fields(Self& s, Field&& field) {
  field("transport", s.transport);
  field("memory", s.memory);
  field("tests", s.tests);
  field("sizes", s.sizes);
  field("latency_bytes", s.latency_bytes);
  field("iterations", s.iterations);
  field("warmup_iterations", s.warmup_iterations);
  field("window", s.window);
  field("timeout_s", s.timeout_s);
}

// `parameters` and `earlier` are read apart (parameters need `command`; earlier is recursive).
template <typename Self, typename Field>
requires Is<Self, RunMeta>
void fields(Self& s, Field&& field) {
  field("schema", s.schema);
  field("run_id", s.run_id);
  field("command", s.command);
  field("source", s.source);
  field("argv", s.argv);
  field("status", s.status);
  field("exit_code", s.exit_code);
  field("start_time", s.start_time);
  field("end_time", s.end_time);
  field("commcert", s.commcert);
  field("backend", s.backend);
  field("versions", s.versions);
  field("libraries", s.libraries);
  field("nodes", s.nodes);
  field("processes", s.processes);
  field("ranks", s.ranks);
  field("environment", s.environment);
  field("warnings", s.warnings);
  field("parameters", s.parameters);
  field("fault_injection", s.fault_injection);
  field("interrupted", s.interrupted);
  field("error", s.error);
  field("ingest", s.ingest);
}

template <typename Struct>
concept HasFields = requires(const Struct& s) {
  fields(s, [](const char*, const auto&) {});
};

template <typename Struct>
concept KeepsUnknown = requires(Struct& s) {
  { s.unknown } -> std::same_as<Json&>;
};

constexpr const char* kEarlier = "earlier";
constexpr const char* kParameters = "parameters";

// --- writing ---------------------------------------------------------------------------------

Json encode(const Json& value) {
  return value;
}
Json encode(const std::string& value) {
  return value;
}
Json encode(bool value) {
  return value;
}
Json encode(int value) {
  return value;
}
Json encode(std::int64_t value) {
  return value;
}
Json encode(std::uint64_t value) {
  return value;
}
Json encode(double value) {
  return value;
}
Json encode(const RankIdentity& value) {
  return to_json(value);
}
template <typename T>
Json encode(const std::optional<T>& value);
template <typename T>
Json encode(const std::vector<T>& values);
template <typename T>
Json encode(const std::vector<std::pair<std::string, T>>& entries);
template <typename Struct>
requires HasFields<Struct> Json encode(const Struct& value);
Json encode(const StageParameters& parameters) {
  return to_json(parameters);
}

template <typename T>
Json encode(const std::optional<T>& value) {
  return value ? encode(*value) : Json(nullptr);
}

template <typename T>
Json encode(const std::vector<T>& values) {
  Json out = Json::array();
  for (const auto& value : values)
    out.push_back(encode(value));
  return out;
}

template <typename T>
Json encode(const std::vector<std::pair<std::string, T>>& entries) {
  Json out = Json::object();
  for (const auto& [key, value] : entries)
    out[key] = encode(value);
  return out;
}

template <typename Struct>
requires HasFields<Struct> Json encode(const Struct& value) {
  Json out = Json::object();
  fields(value, [&out](const char* key, const auto& member) {
    if (member) out[key] = encode(*member);
  });
  if constexpr (KeepsUnknown<Struct>) {
    for (const auto& [key, extra] : value.unknown.items())
      out[key] = extra;
  }
  return out;
}

// --- reading ---------------------------------------------------------------------------------

std::string at(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
}

[[noreturn]] void wrong_type(const Json& value, const std::string& where, std::string_view want) {
  throw RunMetaError(
      RunMetaError::Problem::kWrongType,
      fmt::format("{}: expected {}, found {} {}", where, want, value.type_name(), value.dump()));
}

void decode(const Json& value, Json& out, const std::string&) {
  out = value;
}
void decode(const Json& value, std::string& out, const std::string& where) {
  if (!value.is_string()) wrong_type(value, where, "a string");
  out = value.get<std::string>();
}
void decode(const Json& value, bool& out, const std::string& where) {
  if (!value.is_boolean()) wrong_type(value, where, "true or false");
  out = value.get<bool>();
}
void decode(const Json& value, std::int64_t& out, const std::string& where) {
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() &&
       value.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})) {
    wrong_type(value, where, "an integer");
  }
  out = value.get<std::int64_t>();
}
void decode(const Json& value, int& out, const std::string& where) {
  std::int64_t wide = 0;
  decode(value, wide, where);
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
    wrong_type(value, where, "an integer of 32 bits");
  out = static_cast<int>(wide);
}
void decode(const Json& value, std::uint64_t& out, const std::string& where) {
  // A parsed non-negative integer is unsigned; one a writer built from a signed C++ value is not.
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
    wrong_type(value, where, "a non-negative integer");
  out = value.get<std::uint64_t>();
}
void decode(const Json& value, double& out, const std::string& where) {
  if (!value.is_number()) wrong_type(value, where, "a number");
  out = value.get<double>();
}
void decode(const Json& value, RankIdentity& out, const std::string& where) {
  if (!value.is_object()) wrong_type(value, where, "a rank identity object");
  // rank_identity_from_json converts any JSON number (or boolean) to int: 1.5 would read as 1,
  // and 1e300 is undefined behaviour. Its integers are checked here first, naming the field.
  int checked = 0;
  for (const char* key : {"rank", "process", "local_rank", "pid"}) {
    if (const auto found = value.find(key); found != value.end())
      decode(*found, checked, at(where, key));
  }
  if (const auto gpu = value.find("gpu"); gpu != value.end() && gpu->is_object()) {
    if (const auto index = gpu->find("index"); index != gpu->end())
      decode(*index, checked, at(at(where, "gpu"), "index"));
  }
  try {
    out = rank_identity_from_json(value);
  } catch (const Json::exception& error) {
    throw RunMetaError(RunMetaError::Problem::kWrongType,
                       fmt::format("{}: not a rank identity ({})", where, error.what()));
  }
}
template <typename T>
void decode(const Json& value, std::optional<T>& out, const std::string& where);
template <typename T>
void decode(const Json& value, std::vector<T>& out, const std::string& where);
template <typename T>
void decode(const Json& value, std::vector<std::pair<std::string, T>>& out,
            const std::string& where);
template <typename Struct>
requires HasFields<Struct>
void decode(const Json& value, Struct& out, const std::string& where);
void decode(const Json&, StageParameters&, const std::string&) {
  // Read by run_meta_from_json once `command` is known.
}

// The inner optional of OrNull: null is nullopt.
template <typename T>
void decode(const Json& value, std::optional<T>& out, const std::string& where) {
  if (value.is_null()) {
    out.reset();
    return;
  }
  T inner{};
  decode(value, inner, where);
  out = std::move(inner);
}

template <typename T>
void decode(const Json& value, std::vector<T>& out, const std::string& where) {
  if (!value.is_array()) wrong_type(value, where, "an array");
  out.clear();
  for (std::size_t i = 0; i < value.size(); ++i) {
    T item{};
    decode(value[i], item, fmt::format("{}[{}]", where, i));
    out.push_back(std::move(item));
  }
}

template <typename T>
void decode(const Json& value, std::vector<std::pair<std::string, T>>& out,
            const std::string& where) {
  if (!value.is_object()) wrong_type(value, where, "an object");
  out.clear();
  for (const auto& [key, item] : value.items()) {
    T decoded{};
    decode(item, decoded, at(where, key));
    out.emplace_back(key, std::move(decoded));
  }
}

template <typename Struct>
requires HasFields<Struct>
void decode(const Json& value, Struct& out, const std::string& where) {
  if (!value.is_object()) wrong_type(value, where.empty() ? "meta.json" : where, "an object");
  std::vector<std::string> known;
  fields(out, [&](const char* key, auto& member) {
    known.emplace_back(key);
    const auto found = value.find(key);
    if (found == value.end()) return;
    member.emplace();
    decode(*found, *member, at(where, key));
  });
  if constexpr (KeepsUnknown<Struct>) {
    for (const auto& [key, extra] : value.items()) {
      if (key != kEarlier && std::find(known.begin(), known.end(), key) == known.end())
        out.unknown[key] = extra;
    }
  }
}

template <typename Parameters>
StageParameters parameters_as(const Json& json) {
  Parameters parameters;
  decode(json, parameters, kParameters);
  return parameters;
}

// Deeper than any meta.json commcert writes (its deepest value: earlier[].parameters.groups[][]),
// shallow enough that reading `earlier`, and copying, comparing and writing values (recursive,
// in nlohmann::json too), cannot run out of stack: a file within kMaxRunMetaBytes can nest
// millions of levels. The check itself recurses at most this deep.
constexpr int kMaxDepth = 64;

bool nested_deeper_than(const Json& value, int levels) {
  if (!value.is_structured()) return false;
  if (levels == 0) return true;
  for (const auto& item : value) {
    if (nested_deeper_than(item, levels - 1)) return true;
  }
  return false;
}

RunMeta run_meta_at(const Json& json, const std::string& where) {
  RunMeta meta;
  decode(json, meta, where);
  if (meta.schema && *meta.schema > RunMeta::kSchemaVersion) {
    throw RunMetaError(RunMetaError::Problem::kNewerSchema,
                       fmt::format("{}: schema {} is newer than this commcert reads ({}): update "
                                   "commcert to read this run",
                                   at(where, "schema"), *meta.schema, RunMeta::kSchemaVersion));
  }
  if (const auto found = json.find(kParameters); found != json.end()) {
    try {
      meta.parameters = stage_parameters_from_json(meta.command.value_or(""), *found);
    } catch (const RunMetaError& error) {
      if (where.empty()) throw;
      throw RunMetaError(error.problem(), fmt::format("{}.{}", where, error.what()));
    }
  }
  if (const auto found = json.find(kEarlier); found != json.end()) {
    const std::string list = at(where, kEarlier);
    if (!found->is_array()) wrong_type(*found, list, "an array");
    for (std::size_t i = 0; i < found->size(); ++i)
      meta.earlier.push_back(run_meta_at((*found)[i], fmt::format("{}[{}]", list, i)));
  }
  return meta;
}

}  // namespace

Json to_json(const StageParameters& parameters) {
  return std::visit(
      [](const auto& alternative) -> Json {
        if constexpr (Is<std::decay_t<decltype(alternative)>, OtherParameters>) {
          return alternative.json;
        } else {
          return encode(alternative);
        }
      },
      parameters);
}

Json to_json(const RunMeta& meta) {
  Json out = encode(meta);
  if (!meta.earlier.empty()) {
    Json earlier = Json::array();
    for (const auto& stage : meta.earlier)
      earlier.push_back(to_json(stage));
    out[kEarlier] = std::move(earlier);
  }
  return out;
}

StageParameters stage_parameters_from_json(std::string_view command, Json json) {
  if (command == "sweep") return parameters_as<SweepParameters>(json);
  if (command == "burn") return parameters_as<BurnParameters>(json);
  if (command == "membw") return parameters_as<MembwParameters>(json);
  if (command == "health") return parameters_as<HealthParameters>(json);
  if (command == "p2p") return parameters_as<P2pParameters>(json);
  if (command == "links") return parameters_as<LinksParameters>(json);
  if (!json.is_object()) wrong_type(json, kParameters, "an object");
  return OtherParameters{std::move(json)};
}

RunMeta run_meta_from_json(const Json& json) {
  if (nested_deeper_than(json, kMaxDepth)) {
    throw RunMetaError(RunMetaError::Problem::kWrongType,
                       fmt::format("meta.json: nested deeper than {} levels", kMaxDepth));
  }
  return run_meta_at(json, "");
}

RunMeta read_run_meta(const std::filesystem::path& path) {
  const std::string text = read_bounded_file(path, kMaxRunMetaBytes, path.filename().string());
  const Json json = Json::parse(text, nullptr, false);
  if (json.is_discarded()) {
    throw RunMetaError(
        RunMetaError::Problem::kUnreadable,
        fmt::format("{}: not valid JSON ({} bytes; cut short?)", path.string(), text.size()));
  }
  if (!json.is_object()) {
    throw RunMetaError(
        RunMetaError::Problem::kUnreadable,
        fmt::format("{}: expected a JSON object, found {}", path.string(), json.type_name()));
  }
  try {
    return run_meta_from_json(json);
  } catch (const RunMetaError& error) {
    throw RunMetaError(error.problem(), fmt::format("{}: {}", path.string(), error.what()));
  }
}

std::string RunMeta::first_start_time() const {
  std::string first = start_time.value_or("");
  for (const auto& stage : earlier) {
    const std::string start = stage.first_start_time();
    if (!start.empty() && (first.empty() || start < first)) first = start;
  }
  return first;
}

std::string RunMeta::last_end_time() const {
  std::string last = end_time && *end_time ? **end_time : std::string();
  for (const auto& stage : earlier) {
    const std::string end = stage.last_end_time();
    if (end > last) last = end;
  }
  return last;
}

std::vector<std::string> RunMeta::statuses() const {
  std::vector<std::string> out;
  if (status) out.push_back(*status);
  for (const auto& stage : earlier) {
    for (auto& s : stage.statuses())
      out.push_back(std::move(s));
  }
  return out;
}

std::string RunMeta::fault_plan() const {
  return fault_injection && *fault_injection ? **fault_injection : std::string();
}

}  // namespace commcert
