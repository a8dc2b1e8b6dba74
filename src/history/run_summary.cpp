#include "history/run_summary.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "core/record_fields.hpp"
#include "records/burn.hpp"
#include "records/collective.hpp"
#include "records/membw.hpp"
#include "records/run_meta.hpp"
#include "validate/evidence.hpp"
#include "validate/record_reader.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;

// What made a record when commcert did not (`commcert ingest`: nccl-tests, dcgm).
constexpr const char* kSource = "source";

// FNV-1a, 64 bits: a stable content fingerprint, not a security measure.
class Fingerprint {
 public:
  void add(std::string_view bytes) {
    for (const char c : bytes) {
      hash_ ^= static_cast<unsigned char>(c);
      hash_ *= 0x100000001b3ULL;
    }
  }
  [[nodiscard]] std::string hex() const { return fmt::format("{:016x}", hash_); }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// The fingerprint of a records file's bytes, line by line with each line's newline (a last line
// without one gets one): the same run added twice is one run, whatever reads its records.
std::string fingerprint_of(const fs::path& records) {
  std::ifstream in(records, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", records.string()));
  Fingerprint fingerprint;
  std::string line;
  while (std::getline(in, line)) {
    fingerprint.add(line);
    fingerprint.add("\n");
  }
  return fingerprint.hex();
}

const Json* member(const Json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string string_or(const Json& object, const char* name, std::string fallback = {}) {
  const Json* value = member(object, name);
  return value && value->is_string() ? value->get<std::string>() : std::move(fallback);
}

std::optional<double> number(const Json& object, const char* name) {
  const Json* value = member(object, name);
  if (!value || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

std::string node_of_group(const Json& record) {
  const Json* group = member(record, CollectiveRecord::kGroupNodes);
  if (!group || !group->is_array() || group->empty()) return string_or(record, RecordFields::kHost);
  std::string joined;
  for (const auto& node : *group) {
    if (!node.is_string()) continue;
    if (!joined.empty()) joined += '+';
    joined += node.get<std::string>();
  }
  return joined;
}

// The per-iteration statistics of a collective record: the samples themselves when the record
// carries them (`iteration_time.samples_s`), else count, mean and cv.
std::optional<SampleMoments> iteration_moments(const Json& record) {
  const Json* times = member(record, CollectiveResult::kIterationTime);
  if (!times || !times->is_object()) return std::nullopt;
  if (const Json* samples = member(*times, IterationTimes::kSamplesS);
      samples && samples->is_array()) {
    std::vector<SampleMoments> each;
    for (const auto& sample : *samples) {
      if (sample.is_number()) each.push_back({1, sample.get<double>(), 0});
    }
    if (!each.empty()) return pool(each);
  }
  const auto count = number(*times, IterationTimes::kCount);
  const auto mean = number(*times, IterationTimes::kMeanS);
  const auto cv = number(*times, IterationTimes::kCv);
  if (!count || !mean || !cv || *count < 1) return std::nullopt;
  return SampleMoments{static_cast<std::size_t>(*count), *mean, *cv * *mean};
}

void add_collective(const Json& record, std::vector<RunFigure>& out) {
  const std::string status = string_or(record, RecordFields::kStatus);
  if (status != to_string(RecordStatus::kOk) && status != to_string(RecordStatus::kFail)) return;
  // busbw of a one-rank group is 0 by definition (the ring factor of one rank): its algbw is
  // the figure that can move.
  const bool single_rank = number(record, CollectiveResult::kBusFactor).value_or(1) == 0;
  const char* metric = single_rank ? CollectiveResult::kAlgbw : CollectiveResult::kBusbw;
  const auto bandwidth = number(record, metric);
  if (!bandwidth) return;
  RunFigure sample;
  sample.node = node_of_group(record);
  sample.subject = string_or(record, CollectiveRecord::kCollective, "?");
  const std::string redop = string_or(record, CollectiveRecord::kRedop);
  const Json* in_place = member(record, CollectiveRecord::kInPlace);
  sample.variant = fmt::format(
      "{} {}{}{} {} {} {} ranks", string_or(record, CollectiveRecord::kBackend, "?"),
      string_or(record, CollectiveRecord::kDtype, "?"), redop.empty() ? "" : " ", redop,
      in_place && in_place->is_boolean() && in_place->get<bool>() ? "in-place" : "out-of-place",
      string_or(record, CollectiveRecord::kScope, "?"),
      number(record, CollectiveRecord::kNranks).value_or(0));
  sample.bytes = static_cast<std::uint64_t>(number(record, CollectiveRecord::kBytes).value_or(0));
  sample.metric = metric;
  sample.value = *bandwidth;
  sample.moments = iteration_moments(record);
  if (const Json* straggler = member(record, CollectiveResult::kStraggler))
    sample.straggler = string_or(*straggler, CollectiveStraggler::kHost);
  out.push_back(std::move(sample));
}

std::string gpu_label(const Json& record) {
  const Json* gpu = member(record, RecordFields::kGpu);
  if (!gpu) return {};
  const auto index = number(*gpu, GpuIdentityFields::kIndex);
  return index ? fmt::format("gpu{}", static_cast<int>(*index)) : std::string{};
}

void add_burn(const Json& record, std::vector<RunFigure>& out) {
  const auto tflops = number(record, BurnMeasurement::kTflops);
  if (!tflops) return;
  RunFigure sample;
  sample.node = string_or(record, RecordFields::kHost);
  sample.gpu = gpu_label(record);
  sample.subject = "burn";
  sample.variant = string_or(record, BurnRecord::kKernel);
  sample.metric = BurnMeasurement::kTflops;
  sample.value = *tflops;
  out.push_back(std::move(sample));
}

void add_membw(const Json& record, std::vector<RunFigure>& out) {
  for (const char* group : {MembwMeasurement::kBandwidth, MembwMeasurement::kHostTransfer}) {
    const Json* figures = member(record, group);
    if (!figures || !figures->is_object()) continue;
    for (const auto& [name, value] : figures->items()) {
      if (!value.is_number() || name == MembwBandwidth::kDatasheetPeak) continue;
      RunFigure sample;
      sample.node = string_or(record, RecordFields::kHost);
      sample.gpu = gpu_label(record);
      sample.subject = "membw";
      sample.metric = name;
      sample.value = value.get<double>();
      out.push_back(std::move(sample));
    }
  }
}

Json read_json_file(const fs::path& path) {
  return Json::parse(read_bounded_file(path, kMaxRunMetaBytes, path.filename().string()), nullptr,
                     false);
}

void read_verdict(const fs::path& path, RunSummary& summary) {
  const Json verdict = read_json_file(path);
  const Json* nodes = member(verdict, "nodes");
  if (!nodes || !nodes->is_array()) return;
  for (const auto& node : *nodes) {
    // first_reason: {code, message, action}, or null for a certified node.
    std::string reason;
    if (const Json* first = member(node, "first_reason"))
      reason = fmt::format("{}: {}", string_or(*first, "code"), string_or(*first, "message"));
    summary.outcomes.push_back({string_or(node, "node"), string_or(node, "state"), reason});
  }
}

}  // namespace

std::string RunFigure::key() const {
  return fmt::format("{}|{}|{}|{}|{}|{}", node, gpu, subject, variant, bytes, metric);
}

SampleMoments pool(const std::vector<SampleMoments>& parts) {
  SampleMoments total;
  double sum = 0;
  for (const auto& part : parts) {
    total.count += part.count;
    sum += part.mean * static_cast<double>(part.count);
  }
  if (total.count == 0) return total;
  total.mean = sum / static_cast<double>(total.count);
  // Within-part squares plus each part's offset from the pooled mean.
  double squares = 0;
  for (const auto& part : parts) {
    const double n = static_cast<double>(part.count);
    squares += (n > 1 ? part.stddev * part.stddev * (n - 1) : 0.0) +
               n * (part.mean - total.mean) * (part.mean - total.mean);
  }
  total.stddev = total.count > 1 ? std::sqrt(squares / static_cast<double>(total.count - 1)) : 0.0;
  return total;
}

std::vector<RunFigure> merge_by_key(const std::vector<RunFigure>& samples) {
  std::vector<RunFigure> merged;
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<const RunFigure*>> parts;
  for (const auto& sample : samples) {
    const auto [it, inserted] = index.emplace(sample.key(), merged.size());
    if (inserted) {
      merged.push_back(sample);
      parts.emplace_back();
    }
    parts[it->second].push_back(&sample);
  }
  for (std::size_t i = 0; i < merged.size(); ++i) {
    if (parts[i].size() == 1) continue;
    double sum = 0;
    std::vector<SampleMoments> moments;
    bool all_have_moments = true;
    for (const RunFigure* part : parts[i]) {
      sum += part->value;
      if (part->moments)
        moments.push_back(*part->moments);
      else
        all_have_moments = false;
      if (!part->straggler.empty()) merged[i].straggler = part->straggler;
    }
    merged[i].value = sum / static_cast<double>(parts[i].size());
    merged[i].moments = all_have_moments ? std::optional(pool(moments)) : std::nullopt;
  }
  return merged;
}

RunSummary summarize_run(const fs::path& path, std::size_t* unreadable_lines) {
  RunSummary summary;
  const bool is_directory = fs::is_directory(path);
  const fs::path records = is_directory ? path / "records.jsonl" : path;
  const fs::path directory = is_directory ? path : path.parent_path();
  if (!fs::is_regular_file(records))
    throw UsageError(
        fmt::format("{}: no records.jsonl (not a commcert run directory)", path.string()));
  summary.path = directory;
  summary.fingerprint = fingerprint_of(records);

  // The validator's reader reads the file, as certify does: a record it cannot read (cut short,
  // not JSON, not a valid record, a newer schema) is not summarized either, and an exact repeat
  // counts once. Each record it keeps is shown here with its kind.
  Evidence evidence;
  RecordReader reader(evidence);
  std::vector<RunFigure> samples;
  std::string first_time;
  reader.observe([&](EvidenceRef, std::string_view kind, std::string_view line) {
    const Json record = Json::parse(line, nullptr, false);
    if (!record.is_object()) return;
    if (summary.run_id.empty()) summary.run_id = string_or(record, RecordFields::kRunId);
    if (first_time.empty()) first_time = string_or(record, RecordFields::kTime);
    if (summary.source.empty()) summary.source = string_or(record, kSource);
    if (kind == CollectiveRecord::kKind)
      add_collective(record, samples);
    else if (kind == BurnRecord::kKind)
      add_burn(record, samples);
    else if (kind == MembwRecord::kKind)
      add_membw(record, samples);
  });
  reader.read_file(records);
  const std::size_t unreadable = evidence.files.front().unreadable;
  if (summary.run_id.empty())
    throw UsageError(fmt::format("{}: no record names its run", records.string()));
  if (summary.source.empty()) summary.source = "commcert";
  summary.metrics = merge_by_key(samples);
  summary.started = first_time;

  if (const fs::path meta_path = directory / RunMeta::kFileName; fs::is_regular_file(meta_path)) {
    try {
      const RunMeta meta = read_run_meta(meta_path);
      summary.meta_json = to_json(meta).dump();
      summary.started = meta.start_time.value_or(summary.started);
    } catch (const RunMetaError& error) {
      // An unreadable meta.json (cut short) leaves the run described by its records alone; one
      // that reads but says something wrong is not to be kept as if it were right.
      if (error.problem() != RunMetaError::Problem::kUnreadable) throw UsageError(error.what());
    }
  }
  if (const fs::path verdict = directory / "verdict.json"; fs::is_regular_file(verdict))
    read_verdict(verdict, summary);
  if (unreadable_lines) *unreadable_lines = unreadable;
  return summary;
}

}  // namespace commcert
