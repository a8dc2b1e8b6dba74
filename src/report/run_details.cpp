#include "report/run_details.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/json.hpp"
#include "records/burn.hpp"
#include "records/membw.hpp"
#include "records/run_meta.hpp"
#include "validate/metrics.hpp"
#include "validate/pair_localization.hpp"

namespace commcert {
namespace {

constexpr double kBytesPerGb = 1e9;  // the validator's GB/s are 10^9 bytes/s, as nccl-tests'

std::string_view scope_name(CollectiveScope scope) {
  switch (scope) {
    case CollectiveScope::kCluster:
      return "cluster";
    case CollectiveScope::kNode:
      return "node";
    case CollectiveScope::kPairs:
      return "pairs";
    case CollectiveScope::kGroups:
      return "groups";
    case CollectiveScope::kOther:
      break;
  }
  return "other";
}

// Linear interpolation between the closest ranks of an ascending sample: a band that moves
// smoothly as nodes are added, unlike nearest-rank.
double interpolated_percentile(const std::vector<double>& sorted, double p) {
  const double at = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
}

// Nodes with a reason that is more than a warning on `check`.
std::set<std::string> flagged_nodes(const FleetVerdict& verdict, const std::string& check) {
  std::set<std::string> nodes;
  for (const auto& node : verdict.nodes) {
    for (const auto& reason : node.reasons) {
      if (reason.check == check && reason.effect != Effect::kWarn) nodes.insert(node.node);
    }
  }
  return nodes;
}

struct CurveKey {
  std::uint32_t run = 0;
  std::uint64_t communicator = 0;
  auto operator<=>(const CurveKey&) const = default;
};

std::vector<CollectivePlot> collective_plots(const Evidence& evidence, const Baseline& baseline,
                                             const FleetVerdict& verdict,
                                             const std::vector<JudgedBusbw>& judged) {
  // (collective, scope) -> communicator -> bytes -> best busbw
  std::map<std::pair<std::string, std::string>, std::map<CurveKey, std::map<std::uint64_t, double>>>
      curves;
  std::map<std::pair<std::string, std::string>, std::map<CurveKey, std::size_t>> sample_record;
  for (std::size_t i = 0; i < evidence.collectives.size(); ++i) {
    const CollectiveEvidence& record = evidence.collectives[i];
    if (!record.measured() || record.scope == CollectiveScope::kPairs ||
        record.scope == CollectiveScope::kGroups || record.pair_list) {
      continue;
    }
    const std::pair key(std::string(evidence.text(record.collective)),
                        std::string(scope_name(record.scope)));
    const CurveKey curve{record.run, Evidence::communicator(record)};
    double& best = curves[key][curve][record.bytes];
    best = std::max(best, record.busbw_bytes_per_s);
    sample_record[key].try_emplace(curve, i);
  }
  std::vector<CollectivePlot> plots;
  for (const auto& [key, by_curve] : curves) {
    CollectivePlot plot;
    plot.collective = key.first;
    plot.scope = key.second;
    const std::string check = "collective." + plot.collective;
    const std::set<std::string> flagged = flagged_nodes(verdict, check);
    for (const auto& [curve_key, points] : by_curve) {
      const CollectiveEvidence& record = evidence.collectives[sample_record[key][curve_key]];
      BusbwCurve curve;
      for (const NodeId node : evidence.participants(record))
        curve.nodes.push_back(evidence.node_name(node));
      std::sort(curve.nodes.begin(), curve.nodes.end(), natural_less);
      curve.label = plot.scope == "node" && curve.nodes.size() == 1
                        ? curve.nodes.front()
                        : fmt::format("{} ({} nodes)", plot.scope, curve.nodes.size());
      for (const auto& [bytes, busbw] : points)
        curve.points.push_back({bytes, busbw});
      curve.flagged = std::any_of(curve.nodes.begin(), curve.nodes.end(),
                                  [&](const std::string& node) { return flagged.contains(node); });
      plot.curves.push_back(std::move(curve));
    }
    std::sort(plot.curves.begin(), plot.curves.end(),
              [](const auto& a, const auto& b) { return natural_less(a.label, b.label); });
    if (plot.scope == "node" && plot.curves.size() >= 2) {
      std::map<std::uint64_t, std::vector<double>> at_size;
      for (const auto& curve : plot.curves) {
        for (const auto& point : curve.points)
          at_size[point.bytes].push_back(point.busbw_bytes_per_s);
      }
      for (auto& [bytes, values] : at_size) {
        if (values.size() < 2) continue;
        std::sort(values.begin(), values.end());
        plot.band.push_back({bytes, interpolated_percentile(values, 25),
                             interpolated_percentile(values, 50),
                             interpolated_percentile(values, 75)});
      }
    }
    std::map<std::uint64_t, int> judged_sizes;
    for (const auto& figure : judged) {
      if (figure.collective == plot.collective && figure.scope == plot.scope)
        ++judged_sizes[figure.bytes];
    }
    if (!judged_sizes.empty()) {
      plot.judged_bytes =
          std::max_element(judged_sizes.begin(), judged_sizes.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; })
              ->first;
    }
    const MetricInfo info = busbw_metric(plot.collective, plot.scope);
    if (const Bound* bound = baseline.bound(info.id); bound && bound->floor)
      plot.floor_bytes_per_s = *bound->floor / info.scale;
    plots.push_back(std::move(plot));
  }
  return plots;
}

// The metric table attributes a cluster-scope figure to every node of its communicator already
// (one sample per node), so each sample is one node's row.
std::vector<JudgedBusbw> judged_figures(const Evidence& evidence, const Baseline& baseline) {
  std::vector<JudgedBusbw> judged;
  const MetricTable table(evidence, baseline);
  constexpr std::string_view kPrefix = "collective.";
  constexpr std::string_view kBusbw = ".busbw.";
  for (const MetricSeries& series : table.series()) {
    // Ids are "collective.<name>.busbw.<scope>" (metric_catalog.cpp).
    const std::string& id = series.info.id;
    if (!id.starts_with(kPrefix)) continue;
    const auto busbw = id.find(kBusbw);
    if (busbw == std::string::npos || id.find('.', kPrefix.size()) != busbw) continue;
    const std::string collective = id.substr(kPrefix.size(), busbw - kPrefix.size());
    const std::string scope = id.substr(busbw + kBusbw.size());
    for (const MetricSample& sample : series.samples) {
      judged.push_back({evidence.node_name(sample.node), collective, scope, sample.bytes,
                        sample.value / series.info.scale});
    }
  }
  std::sort(judged.begin(), judged.end(), [](const JudgedBusbw& a, const JudgedBusbw& b) {
    if (a.node != b.node) return natural_less(a.node, b.node);
    return std::tie(a.collective, a.scope) < std::tie(b.collective, b.scope);
  });
  return judged;
}

void mark_verdict(const Evidence& evidence, const PairVerdict& verdict, PairMatrix& matrix) {
  const std::string& node = evidence.node_name(verdict.node);
  switch (verdict.kind) {
    case PairVerdictKind::kBadNode:
      matrix.bad_nodes.push_back(node);
      break;
    case PairVerdictKind::kUnresolved:
      matrix.unresolved_nodes.push_back(node);
      break;
    case PairVerdictKind::kSuspectLink: {
      const std::string& other = evidence.node_name(verdict.other);
      for (auto& cell : matrix.cells) {
        if ((cell.a == node && cell.b == other) || (cell.a == other && cell.b == node))
          cell.suspect_link = true;
      }
      break;
    }
    case PairVerdictKind::kSuspectSwitch: {
      std::map<std::string, std::size_t> side;  // each node's group
      for (std::size_t g = 0; g < verdict.groups.size(); ++g) {
        for (const NodeId member : verdict.groups[g])
          side.emplace(evidence.node_name(member), g);
      }
      for (auto& cell : matrix.cells) {
        const auto a = side.find(cell.a);
        const auto b = side.find(cell.b);
        if (a != side.end() && b != side.end() && a->second != b->second)
          cell.suspect_switch = true;
      }
      break;
    }
  }
}

std::vector<PairMatrix> pair_matrices(const Evidence& evidence, const Baseline& baseline) {
  const PairLocalization localization = localize_pairs(evidence, baseline);
  std::vector<PairMatrix> matrices;
  for (const PairSeries& series : localization.series) {
    PairMatrix matrix;
    matrix.collective = std::string(evidence.text(series.collective));
    matrix.bytes = series.bytes;
    matrix.limit_bytes_per_s = series.limit_gb_per_s * kBytesPerGb;
    std::set<std::string> nodes;
    const auto add = [&](const PairFigure& figure, bool retest) {
      PairCell cell{evidence.node_name(figure.a),
                    evidence.node_name(figure.b),
                    figure.busbw_gb_per_s * kBytesPerGb,
                    figure.passed,
                    retest,
                    false};
      nodes.insert(cell.a);
      nodes.insert(cell.b);
      matrix.cells.push_back(std::move(cell));
    };
    for (const auto& figure : series.pairs)
      add(figure, false);
    for (const auto& figure : series.retests)
      add(figure, true);
    matrix.nodes.assign(nodes.begin(), nodes.end());
    std::sort(matrix.nodes.begin(), matrix.nodes.end(), natural_less);
    matrices.push_back(std::move(matrix));
  }
  // One diagnosis per run: a verdict marks every matrix of its run, not only the collective
  // that showed it first.
  for (const PairVerdict& verdict : localization.verdicts) {
    if (verdict.series >= matrices.size()) continue;
    const auto run = localization.series[verdict.series].run;
    for (std::size_t index = 0; index < matrices.size(); ++index) {
      if (localization.series[index].run == run) mark_verdict(evidence, verdict, matrices[index]);
    }
  }
  return matrices;
}

std::optional<double> number_at(const Json& object, std::string_view key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string string_at(const Json& object, std::string_view key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json& object_at(const Json& object, std::string_view key) {
  static const Json kNull = nullptr;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

MinMedianMax min_median_max(const Json& object) {
  return {number_at(object, "min"), number_at(object, "median"), number_at(object, "max")};
}

std::vector<std::optional<double>> numbers_in(const Json& column) {
  std::vector<std::optional<double>> out;
  if (!column.is_array()) return out;
  for (const auto& value : column)
    out.push_back(value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt);
  return out;
}

// A column shorter than t_s (a truncated or hand-made record) is padded with nulls, so the
// columns always line up with the times.
std::optional<BurnTimeline> burn_timeline(const Json& timeline) {
  const Json& times = object_at(timeline, "t_s");
  if (!times.is_array() || times.empty()) return std::nullopt;
  BurnTimeline out;
  for (const auto& t : times)
    out.t_s.push_back(t.is_number() ? t.get<double>() : 0.0);
  const auto column = [&](const char* name) {
    auto values = numbers_in(object_at(timeline, name));
    values.resize(out.t_s.size());
    return values;
  };
  out.tflops = column("tflops");
  out.sm_clock_mhz = column("sm_clock_mhz");
  out.power_w = column("power_w");
  out.temperature_c = column("temperature_c");
  const Json& throttle = object_at(timeline, "throttle");
  for (std::size_t i = 0; i < out.t_s.size(); ++i) {
    std::vector<std::string> reasons;
    if (throttle.is_array() && i < throttle.size() && throttle[i].is_array()) {
      for (const auto& reason : throttle[i])
        if (reason.is_string()) reasons.push_back(reason.get<std::string>());
    }
    out.throttle.push_back(std::move(reasons));
  }
  return out;
}

template <typename Row>
void sort_by_node_and_gpu(std::vector<Row>& rows) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.node != b.node) return natural_less(a.node, b.node);
    return a.gpu < b.gpu;
  });
}

// The columns a burn or membw row starts with: the GPU (its model from the record) and status.
template <typename StageEvidence>
void fill_gpu_stage_row(const Evidence& evidence, const StageEvidence& stage, const Json& record,
                        GpuStageRow& row) {
  row.node = evidence.node_name(stage.node);
  row.gpu = stage.gpu.index;
  row.uuid = std::string(evidence.text(stage.gpu.uuid));
  row.name = string_at(object_at(record, "gpu"), "name");
  row.status = std::string(to_string(stage.status));
  row.reason = stage.reason;
}

// Burn and membw records carry what the evidence drops (telemetry, datasheet peaks): the very
// lines the validator judged, kept as it read them, so a duplicate it dropped stays dropped here.
void per_gpu_records(const Evidence& evidence, const GpuRecordLines& lines, RunDetails& details) {
  const auto record_of = [&](const EvidenceRef& ref) -> const Json& {
    static const Json kNull = nullptr;
    const Json* record = lines.find(ref);
    return record ? *record : kNull;
  };
  for (const auto& burn : evidence.burns) {
    const Json& record = record_of(burn.ref);
    BurnGpu row;
    fill_gpu_stage_row(evidence, burn, record, row);
    row.kernel = std::string(evidence.text(burn.kernel));
    row.tflops = burn.tflops;
    const Json& windows = object_at(record, BurnMeasurement::kTflopsWindows);
    row.tflops_min = number_at(windows, "min");
    row.tflops_max = number_at(windows, "max");
    row.datasheet_peak_tflops = number_at(record, BurnMeasurement::kDatasheetPeakTflops);
    row.duration_s = number_at(record, BurnMeasurement::kDurationS);
    // Telemetry's names are health/telemetry.cpp's (docs/records.md, kind burn).
    const Json& telemetry = object_at(record, BurnMeasurement::kTelemetry);
    if (const auto samples = number_at(telemetry, "samples"))
      row.telemetry_samples = static_cast<std::int64_t>(*samples);
    row.sm_clock_mhz = min_median_max(object_at(telemetry, "sm_clock_mhz"));
    row.mem_clock_mhz = min_median_max(object_at(telemetry, "mem_clock_mhz"));
    row.power_w = min_median_max(object_at(telemetry, "power_w"));
    row.temperature_c = min_median_max(object_at(telemetry, "temperature_c"));
    row.power_limit_w = number_at(telemetry, "power_limit_w");
    for (const auto& throttle : burn.throttle)
      row.throttle_s.emplace_back(std::string(evidence.text(throttle.reason)), throttle.seconds);
    row.timeline = burn_timeline(object_at(record, BurnMeasurement::kTimeline));
    details.burns.push_back(std::move(row));
  }
  for (const auto& membw : evidence.membws) {
    const Json& record = record_of(membw.ref);
    MembwGpu row;
    fill_gpu_stage_row(evidence, membw, record, row);
    row.read = membw.read;
    row.write = membw.write;
    row.copy = membw.copy;
    row.memcpy_d2d = membw.memcpy_d2d;
    row.h2d = membw.h2d;
    row.d2h = membw.d2h;
    row.integrity_errors = membw.integrity_errors;
    row.datasheet_peak =
        number_at(object_at(record, MembwMeasurement::kBandwidth), MembwBandwidth::kDatasheetPeak);
    row.fraction_of_peak = number_at(record, MembwMeasurement::kFractionOfPeak);
    details.membws.push_back(std::move(row));
  }
  sort_by_node_and_gpu(details.burns);
  sort_by_node_and_gpu(details.membws);
}

// Name and value of each field that is there, values as text.
class Pairs {
 public:
  template <typename T>
  Pairs& add(std::string name, const std::optional<T>& value) {
    if (value) add(std::move(name), *value);
    return *this;
  }
  template <typename T>
  Pairs& add(std::string name, const std::optional<OrNull<T>>& value) {
    if (value && *value) add(std::move(name), **value);
    return *this;
  }
  Pairs& add(std::string name, const std::string& value) {
    pairs_.emplace_back(std::move(name), value);
    return *this;
  }
  Pairs& add(std::string name, bool value) {
    pairs_.emplace_back(std::move(name), value ? "true" : "false");
    return *this;
  }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> take() {
    return std::move(pairs_);
  }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

std::vector<std::pair<std::string, std::string>> build_fields(const std::optional<MetaBuild>& b) {
  Pairs pairs;
  if (!b) return pairs.take();
  pairs.add("version", b->version)
      .add("git", b->git)
      .add("build_type", b->build_type)
      .add("compiler", b->compiler);
  if (const auto& f = b->features)
    pairs.add("feature cuda", f->cuda).add("feature mpi", f->mpi).add("feature verbs", f->verbs);
  return pairs.take();
}

std::vector<std::pair<std::string, std::string>> version_fields(
    const std::optional<MetaVersions>& v) {
  Pairs pairs;
  if (!v) return pairs.take();
  return pairs.add("mpi", v->mpi)
      .add("nccl", v->nccl)
      .add("cuda_runtime", v->cuda_runtime)
      .add("cuda_driver", v->cuda_driver)
      .take();
}

StageCommand stage_command(const RunMeta& meta) {
  return {meta.command.value_or(""), meta.argv.value_or(std::vector<std::string>{}),
          meta.status.value_or("")};
}

// The run directory's meta.json, or nullopt when it is absent or cannot be read: the verdict's
// notes already say so.
std::optional<RunMeta> read_meta(const std::filesystem::path& directory) {
  const std::filesystem::path path = directory / RunMeta::kFileName;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  try {
    return read_run_meta(path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// suite.json of `commcert run`: the suite's name and the status it gives the whole run.
void read_suite(const std::filesystem::path& directory, RunDescription& run) {
  const std::filesystem::path path = directory / "suite.json";
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return;
  try {
    const Json suite = Json::parse(
        read_bounded_file(path, kMaxRunMetaBytes, path.filename().string()), nullptr, false);
    if (!suite.is_object()) return;
    if (const auto name = suite.find("suite"); name != suite.end() && name->is_string())
      run.suite = name->get<std::string>();
    if (const auto status = suite.find("status");
        status != suite.end() && status->is_string() && !status->get<std::string>().empty())
      run.status = status->get<std::string>();
  } catch (const std::exception&) {
    // The verdict's notes already say the file could not be read.
  }
}

std::vector<RunDescription> run_descriptions(const Evidence& evidence) {
  std::vector<RunDescription> runs;
  std::set<std::filesystem::path> seen;
  for (const auto& file : evidence.files) {
    const std::filesystem::path directory = std::filesystem::path(file.path).parent_path();
    if (!seen.insert(directory).second) continue;
    const auto meta = read_meta(directory);
    if (!meta) continue;
    RunDescription run;
    run.directory = directory.string();
    run.run_id = meta->run_id.value_or("");
    run.status = meta->status.value_or("");
    // meta.json's own times are its latest command's: the run spans all of them.
    run.start_time = meta->first_start_time();
    run.end_time = meta->last_end_time();
    run.fault_injection = meta->fault_plan();
    run.build = build_fields(meta->commcert);
    run.versions = version_fields(meta->versions);
    run.environment = meta->environment.value_or(run.environment);
    run.warnings = meta->warnings.value_or(run.warnings);
    for (const auto& stage : meta->earlier)
      run.commands.push_back(stage_command(stage));
    run.commands.push_back(stage_command(*meta));
    read_suite(directory, run);
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace

RecordReader::RecordObserver GpuRecordLines::observer() {
  return [this](EvidenceRef ref, std::string_view kind, std::string_view line) {
    if (kind != BurnRecord::kKind && kind != MembwRecord::kKind) return;
    Json record = Json::parse(line, nullptr, false);
    if (record.is_object()) lines_.emplace(std::pair(ref.file, ref.line), std::move(record));
  };
}

const Json* GpuRecordLines::find(EvidenceRef ref) const {
  const auto found = lines_.find({ref.file, ref.line});
  return found == lines_.end() ? nullptr : &found->second;
}

RunDetails collect_run_details(const Evidence& evidence, const Baseline& baseline,
                               const FleetVerdict& verdict, const GpuRecordLines& gpu_lines) {
  RunDetails details;
  details.runs = run_descriptions(evidence);
  details.judged = judged_figures(evidence, baseline);
  details.collectives = collective_plots(evidence, baseline, verdict, details.judged);
  details.pairs = pair_matrices(evidence, baseline);
  per_gpu_records(evidence, gpu_lines, details);
  return details;
}

}  // namespace commcert
