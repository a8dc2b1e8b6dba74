#include "validate/metrics.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "validate/baseline.hpp"
#include "validate/checks.hpp"

namespace commcert {
namespace {

constexpr std::string_view kBurnKernels[] = {"gemm_bf16", "gemm_fp16", "gemm_tf32",
                                             "gemm_fp8",  "gemm_fp64", "power_fma"};
constexpr std::string_view kScopes[] = {"node", "cluster"};
constexpr double kGiga = 1e-9;

MetricInfo simple(std::string id, std::string check, std::string yaml, std::string label,
                  std::string unit, double scale, Direction direction, MetricSubject subject) {
  std::string group = id;
  return {std::move(id), std::move(check), std::move(yaml), std::move(label), std::move(unit),
          scale,         direction,        subject,         std::move(group)};
}

std::vector<MetricInfo> static_metrics() {
  using enum Direction;
  using enum MetricSubject;
  return {
      simple("membw.copy", "membw", "copy_gb_per_s", "memory copy bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("membw.read", "membw", "read_gb_per_s", "memory read bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("membw.write", "membw", "write_gb_per_s", "memory write bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("membw.memcpy_d2d", "membw", "memcpy_d2d_gb_per_s", "device-to-device memcpy", "GB/s",
             kGiga, kHigherIsBetter, kGpu),
      simple("membw.h2d", "membw", "h2d_gb_per_s", "host-to-device bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("membw.d2h", "membw", "d2h_gb_per_s", "device-to-host bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("health.gpu.temperature", "health.gpu", "temperature_c", "temperature", "C", 1.0,
             kLowerIsBetter, kGpu),
      simple("health.ib.rate", "health.ib", "rate_gbit_per_s", "port rate", "Gb/s", 1.0,
             kHigherIsBetter, kIbPort),
  };
}

MetricInfo busbw_metric(std::string_view collective, std::string_view scope) {
  return {fmt::format("collective.{}.busbw.{}", collective, scope),
          fmt::format("collective.{}", collective),
          fmt::format("busbw_gb_per_s.{}", scope),
          fmt::format("{} busbw ({} scope)", collective, scope),
          "GB/s",
          kGiga,
          Direction::kHigherIsBetter,
          MetricSubject::kNode,
          fmt::format("collective.{}.busbw", collective)};
}

MetricInfo tflops_metric(std::string_view kernel) {
  return {fmt::format("burn.tflops.{}", kernel),
          "burn",
          fmt::format("tflops.{}", kernel),
          fmt::format("burn {}", kernel),
          "TFLOP/s",
          1.0,
          Direction::kHigherIsBetter,
          MetricSubject::kGpu,
          "burn.tflops"};
}

std::string_view scope_name(CollectiveScope scope) {
  return scope == CollectiveScope::kNode ? "node" : "cluster";
}

struct SubjectKey {
  std::uint32_t series;
  NodeId node;
  int gpu;
  StringId device;
  int port;
  bool operator==(const SubjectKey&) const = default;
};

struct SubjectHash {
  std::size_t operator()(const SubjectKey& k) const {
    std::size_t h = k.series;
    for (const std::size_t part : {std::size_t{k.node}, static_cast<std::size_t>(k.gpu + 1),
                                   std::size_t{k.device}, static_cast<std::size_t>(k.port + 1)}) {
      h = h * 0x9E3779B97F4A7C15ull + part;
    }
    return h;
  }
};

// Builds series and keeps the best sample per subject.
class Collector {
 public:
  explicit Collector(std::vector<MetricSeries>& series) : series_(series) {}

  void offer(const MetricInfo& info, MetricSample sample) {
    const std::uint32_t index = series_index(info);
    MetricSeries& s = series_[index];
    const SubjectKey key{index, sample.node, sample.gpu.index, sample.device, sample.port};
    const auto [it, inserted] = best_.emplace(key, s.samples.size());
    if (inserted) {
      s.samples.push_back(sample);
      return;
    }
    MetricSample& current = s.samples[it->second];
    const bool better = info.direction == Direction::kHigherIsBetter ? sample.value > current.value
                                                                     : sample.value < current.value;
    if (better) current = sample;
  }

 private:
  std::uint32_t series_index(const MetricInfo& info) {
    if (const auto it = by_id_.find(info.id); it != by_id_.end()) return it->second;
    const auto index = static_cast<std::uint32_t>(series_.size());
    series_.push_back({info, {}});
    by_id_.emplace(info.id, index);
    return index;
  }

  std::vector<MetricSeries>& series_;
  std::unordered_map<std::string, std::uint32_t> by_id_;
  std::unordered_map<SubjectKey, std::size_t, SubjectHash> best_;
};

void collect_collectives(const Evidence& evidence, const Baseline& baseline, Collector& out) {
  // Per (run, collective, scope, node-scope writer): the record with the best busbw at a size
  // the baseline judges.
  struct GroupKey {
    std::uint32_t run;
    StringId collective;
    std::uint64_t communicator;  // Evidence::communicator
    bool operator==(const GroupKey&) const = default;
  };
  struct GroupHash {
    std::size_t operator()(const GroupKey& k) const {
      return (std::size_t{k.run} * 0x9E3779B97F4A7C15ull ^ k.collective) * 0x9E3779B97F4A7C15ull ^
             k.communicator;
    }
  };
  std::unordered_map<GroupKey, std::size_t, GroupHash> best;  // group -> record index
  std::unordered_map<StringId, std::uint64_t> min_bytes;
  for (std::size_t i = 0; i < evidence.collectives.size(); ++i) {
    const auto& c = evidence.collectives[i];
    // A single rank moves nothing over a bus (busbw is 0 by definition: one GPU per node in
    // the node scope); pairs are judged against each other by localization.
    if (!c.measured() || c.nranks == 1) continue;
    if (c.scope != CollectiveScope::kCluster && c.scope != CollectiveScope::kNode) continue;
    auto [mb, fresh] = min_bytes.try_emplace(c.collective, 0);
    if (fresh) {
      const auto* spec =
          baseline.collective(fmt::format("collective.{}", evidence.text(c.collective)));
      mb->second = spec ? spec->min_bytes : CollectiveSpec{}.min_bytes;
    }
    if (c.bytes < mb->second) continue;
    const GroupKey key{c.run, c.collective, Evidence::communicator(c)};
    const auto [it, inserted] = best.emplace(key, i);
    if (!inserted && c.busbw_bytes_per_s > evidence.collectives[it->second].busbw_bytes_per_s) {
      it->second = i;
    }
  }
  // Deterministic order: by record index.
  std::vector<std::size_t> records;
  records.reserve(best.size());
  for (const auto& [key, index] : best)
    records.push_back(index);
  std::sort(records.begin(), records.end());
  for (const std::size_t index : records) {
    const auto& c = evidence.collectives[index];
    const MetricInfo info = busbw_metric(evidence.text(c.collective), scope_name(c.scope));
    const auto participants = evidence.participants(c);
    MetricSample sample;
    sample.value = c.busbw_bytes_per_s * info.scale;
    sample.ref = c.ref;
    sample.run = c.run;
    sample.bytes = c.bytes;
    sample.peers = static_cast<std::uint32_t>(participants.size());
    // One node's own figure: a node-scope record, or a communicator the rank map shows to be
    // one node. Without a rank map the participants are only those the records happen to name.
    const bool known = c.group != kNoString || c.scope == CollectiveScope::kNode ||
                       evidence.runs[c.run].has_rank_map;
    sample.attributable = known && participants.size() == 1;
    for (const NodeId node : participants) {
      sample.node = node;
      out.offer(info, sample);
    }
  }
}

}  // namespace

std::span<const std::string_view> burn_kernels() {
  return kBurnKernels;
}

std::optional<MetricInfo> metric_info(std::string_view id) {
  for (auto& info : static_metrics()) {
    if (info.id == id) return info;
  }
  for (const auto& check : all_checks()) {
    if (check.kind != CheckKind::kCollective) continue;
    for (const auto scope : kScopes) {
      if (auto info = busbw_metric(check.collective, scope); info.id == id) return info;
    }
  }
  for (const auto kernel : kBurnKernels) {
    if (auto info = tflops_metric(kernel); info.id == id) return info;
  }
  return std::nullopt;
}

std::optional<MetricInfo> metric_at(std::string_view check, std::string_view yaml_path) {
  for (auto& info : static_metrics()) {
    if (info.check == check && info.yaml_path == yaml_path) return info;
  }
  const CheckInfo* found = find_check(check);
  if (found && found->kind == CheckKind::kCollective) {
    for (const auto scope : kScopes) {
      if (auto info = busbw_metric(found->collective, scope); info.yaml_path == yaml_path) {
        return info;
      }
    }
  }
  if (check == "burn") {
    for (const auto kernel : kBurnKernels) {
      if (auto info = tflops_metric(kernel); info.yaml_path == yaml_path) return info;
    }
  }
  return std::nullopt;
}

std::vector<std::string> metric_keys(std::string_view check) {
  std::vector<std::string> keys;
  for (const auto& info : static_metrics()) {
    if (info.check == check) keys.push_back(info.yaml_path);
  }
  const CheckInfo* found = find_check(check);
  if (found && found->kind == CheckKind::kCollective) {
    for (const auto scope : kScopes)
      keys.push_back(busbw_metric(found->collective, scope).yaml_path);
  }
  if (check == "burn") {
    for (const auto kernel : kBurnKernels)
      keys.push_back(tflops_metric(kernel).yaml_path);
  }
  return keys;
}

MetricTable::MetricTable(const Evidence& evidence, const Baseline& baseline) {
  Collector out(series_);
  collect_collectives(evidence, baseline, out);

  const auto is_measured = [](RecordStatus s) {
    return s == RecordStatus::kOk || s == RecordStatus::kFail;
  };
  for (const auto& r : evidence.burns) {
    if (!is_measured(r.status) || !r.tflops || r.kernel == kNoString) continue;
    MetricSample sample;
    sample.node = r.node;
    sample.gpu = r.gpu;
    sample.value = *r.tflops;
    sample.ref = r.ref;
    out.offer(tflops_metric(evidence.text(r.kernel)), sample);
  }
  const auto metrics = static_metrics();
  const auto info = [&metrics](std::string_view id) -> const MetricInfo& {
    return *std::find_if(metrics.begin(), metrics.end(), [&](const auto& m) { return m.id == id; });
  };
  for (const auto& r : evidence.membws) {
    if (!is_measured(r.status)) continue;
    const std::pair<std::string_view, const std::optional<double>*> figures[] = {
        {"membw.copy", &r.copy},   {"membw.read", &r.read},
        {"membw.write", &r.write}, {"membw.memcpy_d2d", &r.memcpy_d2d},
        {"membw.h2d", &r.h2d},     {"membw.d2h", &r.d2h}};
    for (const auto& [id, value] : figures) {
      if (!*value) continue;
      const MetricInfo& m = info(id);
      MetricSample sample;
      sample.node = r.node;
      sample.gpu = r.gpu;
      sample.value = **value * m.scale;
      sample.ref = r.ref;
      out.offer(m, sample);
    }
  }
  for (const auto& r : evidence.gpu_health) {
    if (r.status != RecordStatus::kOk || !r.temperature_c) continue;
    MetricSample sample;
    sample.node = r.node;
    sample.gpu = r.gpu;
    sample.value = *r.temperature_c;
    sample.ref = r.ref;
    out.offer(info("health.gpu.temperature"), sample);
  }
  for (const auto& r : evidence.ib_ports) {
    if (r.status != RecordStatus::kOk || !r.rate_gbps) continue;
    if (!baseline.ib_health.judges(evidence.text(r.link_layer))) continue;
    MetricSample sample;
    sample.node = r.node;
    sample.device = r.device;
    sample.port = r.port;
    sample.value = *r.rate_gbps;
    sample.ref = r.ref;
    out.offer(info("health.ib.rate"), sample);
  }
}

const MetricSeries* MetricTable::find(std::string_view id) const {
  for (const auto& s : series_) {
    if (s.info.id == id) return &s;
  }
  return nullptr;
}

}  // namespace commcert
