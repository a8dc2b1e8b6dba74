#include "validate/metrics.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "core/hash_slots.hpp"
#include "validate/baseline.hpp"
#include "validate/checks.hpp"

namespace commcert {
namespace {

std::string_view scope_name(CollectiveScope scope) {
  return scope == CollectiveScope::kNode ? "node" : "cluster";
}

struct SubjectKey {
  std::uint32_t series;
  NodeId node;
  int gpu;
  StringId device;
  int port;
  std::uint64_t origin;  // 0 unless samples are kept per run
  bool operator==(const SubjectKey&) const = default;
};

// MurmurHash3's finalizer: the tables index by the low bits, which a multiply chain leaves weak.
std::uint64_t spread_bits(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

std::uint64_t subject_hash(const SubjectKey& k) {
  std::uint64_t h = k.series;
  for (const std::uint64_t part :
       {std::uint64_t{k.node}, static_cast<std::uint64_t>(k.gpu + 1), std::uint64_t{k.device},
        static_cast<std::uint64_t>(k.port + 1), k.origin}) {
    h = h * 0x9E3779B97F4A7C15ull + part;
  }
  return spread_bits(h);
}

SubjectKey subject_of(std::uint32_t series, const MetricSample& sample, SamplesPer per) {
  return {series,           sample.node,
          sample.gpu.index, sample.device,
          sample.port,      per == SamplesPer::kSubjectAndRun ? sample_origin(sample) : 0};
}

// Subject -> index of its sample in one series. Open addressing in one array of 8-byte slots
// that keep 32 bits of the key's hash, not the key (compared through the sample it indexes): a
// 40,960-node fleet offers some six million samples, and a node-based map spent most of the
// table's time allocating nodes and missing the cache.
class SubjectIndex {
 public:
  // The index of the sample of `key` in `samples`, or `samples.size()` (then stored) when the key
  // is new.
  std::pair<std::size_t, bool> emplace(const SubjectKey& key,
                                       const std::vector<MetricSample>& samples, SamplesPer per) {
    if (hash_slots_need_growth(slots_, used_)) grow_hash_slots(slots_);
    const std::uint32_t hash = static_cast<std::uint32_t>(subject_hash(key)) | 1;  // 0: empty
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.hash == 0) {
        slot = {hash, static_cast<std::uint32_t>(samples.size())};
        ++used_;
        return {samples.size(), true};
      }
      if (slot.hash == hash && subject_of(key.series, samples[slot.index], per) == key) {
        return {slot.index, false};
      }
    }
  }

 private:
  struct Slot {
    std::uint32_t hash = 0;
    std::uint32_t index = 0;
  };

  std::vector<Slot> slots_ = std::vector<Slot>(64);
  std::size_t used_ = 0;
};

// Builds series and keeps the best sample per subject.
class Collector {
 public:
  Collector(std::vector<MetricSeries>& series, SamplesPer per) : series_(series), per_(per) {}

  void offer(const MetricInfo& info, MetricSample sample) {
    const std::uint32_t index = series_index(info);
    MetricSeries& s = series_[index];
    Indexes& indexes = indexes_[index];
    const SubjectKey key = subject_of(index, sample, per_);
    keep_best(info, indexes.best, key, s.samples, sample);
    if (sample.attributable) keep_best(info, indexes.best_own, key, s.own, sample);
  }

 private:
  struct Indexes {
    SubjectIndex best;      // into MetricSeries::samples
    SubjectIndex best_own;  // into MetricSeries::own
  };

  void keep_best(const MetricInfo& info, SubjectIndex& index, const SubjectKey& key,
                 std::vector<MetricSample>& samples, const MetricSample& sample) const {
    const auto [at, inserted] = index.emplace(key, samples, per_);
    if (inserted) {
      samples.push_back(sample);
      return;
    }
    MetricSample& current = samples[at];
    const bool better = info.direction == Direction::kHigherIsBetter ? sample.value > current.value
                                                                     : sample.value < current.value;
    if (better) current = sample;
  }

  std::uint32_t series_index(const MetricInfo& info) {
    if (const auto it = by_id_.find(info.id); it != by_id_.end()) return it->second;
    const auto index = static_cast<std::uint32_t>(series_.size());
    series_.push_back({info, {}, {}});
    indexes_.emplace_back();
    by_id_.emplace(info.id, index);
    return index;
  }

  std::vector<MetricSeries>& series_;
  std::vector<Indexes> indexes_;  // one per series
  SamplesPer per_;
  std::unordered_map<std::string, std::uint32_t> by_id_;
};

// Per (run, collective, communicator): the record with the best busbw. Open addressing in
// 8-byte slots (32 bits of the group's hash, the record's index) that compare groups through the
// records: most groups of a fleet hold one record (1.8 million groups in 2 million records at
// 8,192 nodes), and a node-based map cost an allocation and some 56 bytes apiece.
class BestRecordPerGroup {
 public:
  explicit BestRecordPerGroup(const std::vector<CollectiveEvidence>& records) : records_(records) {}

  void offer(std::uint32_t index) {
    if (hash_slots_need_growth(slots_, used_)) grow_hash_slots(slots_);
    const CollectiveEvidence& offered = records_[index];
    const std::uint32_t hash = group_hash(offered);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.hash == 0) {
        slot = {hash, index};
        ++used_;
        return;
      }
      const CollectiveEvidence& kept = records_[slot.index];
      if (slot.hash == hash && same_group(kept, offered)) {
        if (offered.busbw_bytes_per_s > kept.busbw_bytes_per_s) slot.index = index;
        return;
      }
    }
  }

  // The best record of each group, in record order (deterministic whatever the hashes).
  [[nodiscard]] std::vector<std::uint32_t> records() const {
    std::vector<std::uint32_t> kept;
    kept.reserve(used_);
    for (const Slot& slot : slots_) {
      if (slot.hash != 0) kept.push_back(slot.index);
    }
    std::sort(kept.begin(), kept.end());
    return kept;
  }

 private:
  struct Slot {
    std::uint32_t hash = 0;  // 0: empty
    std::uint32_t index = 0;
  };

  static bool same_group(const CollectiveEvidence& a, const CollectiveEvidence& b) {
    return a.run == b.run && a.collective == b.collective &&
           Evidence::communicator(a) == Evidence::communicator(b);
  }
  static std::uint32_t group_hash(const CollectiveEvidence& c) {
    std::uint64_t h =
        (std::uint64_t{c.run} * 0x9E3779B97F4A7C15ull ^ c.collective) * 0x9E3779B97F4A7C15ull ^
        Evidence::communicator(c);
    return static_cast<std::uint32_t>(spread_bits(h)) | 1;
  }

  const std::vector<CollectiveEvidence>& records_;
  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  std::size_t used_ = 0;
};

void collect_collectives(const Evidence& evidence, const Baseline& baseline, Collector& out) {
  // Per (run, collective, scope, node-scope writer): the record with the best busbw at a size
  // the baseline judges.
  BestRecordPerGroup best(evidence.collectives);
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
    best.offer(static_cast<std::uint32_t>(i));
  }
  for (const std::uint32_t index : best.records()) {
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

std::uint64_t sample_origin(const MetricSample& sample) {
  constexpr std::uint64_t kFileOrigin = std::uint64_t{1} << 32;
  return sample.run != kNoString ? sample.run : kFileOrigin + sample.ref.file;
}

MetricTable::MetricTable(const Evidence& evidence, const Baseline& baseline, SamplesPer per) {
  Collector out(series_, per);
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
