#include "validate/p2p_judgement.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/stats.hpp"

namespace commcert {
namespace {

using SeriesKey = std::tuple<std::uint32_t, NodeId, StringId, StringId, bool>;

// Sets reference and limit; false when nothing can judge the series.
bool set_limit(P2pSeries& series, const P2pSpec& spec) {
  if (series.latency) {
    if (!spec.pair_latency_ceiling_us) return false;
    series.limit = *spec.pair_latency_ceiling_us;
    return true;
  }
  std::vector<double> figures;
  for (const auto& pair : series.pairs)
    figures.push_back(pair.figure);
  std::sort(figures.begin(), figures.end());
  const bool relative = static_cast<int>(figures.size()) >= spec.min_pairs;
  double limit = spec.pair_floor_gb_per_s.value_or(0);
  if (relative) {
    series.reference = percentile_sorted(figures, 75);
    limit = std::max(limit, series.reference * (1 - spec.max_deficit_pct / 100));
  }
  series.limit = limit;
  return relative || spec.pair_floor_gb_per_s.has_value();
}

void judge_series(std::size_t index, const P2pSeries& series, const P2pSpec& spec,
                  std::vector<P2pVerdict>& out) {
  const PairMatrixClassification found = classify_pair_matrix(series.pairs);
  for (const int gpu : found.slow_gpus) {
    P2pVerdict v;
    v.kind = P2pVerdictKind::kSlowGpu;
    v.series = index;
    v.gpu = gpu;
    std::set<int> peers;
    std::vector<double> slow;
    for (const auto& pair : series.pairs) {
      if (pair.src != gpu && pair.dst != gpu) continue;
      peers.insert(pair.src == gpu ? pair.dst : pair.src);
      if (!pair.slow) continue;
      slow.push_back(pair.figure);
      v.evidence.push_back(pair.ref);
    }
    v.peers = static_cast<int>(peers.size());
    v.measured = median(slow);
    out.push_back(std::move(v));
  }
  for (const std::size_t i : found.slow_pairs) {
    const P2pPairFigure& pair = series.pairs[i];
    P2pVerdict v;
    v.kind = P2pVerdictKind::kSlowPair;
    v.series = index;
    v.src = pair.src;
    v.dst = pair.dst;
    v.measured = pair.figure;
    v.evidence = {pair.ref};
    out.push_back(std::move(v));
  }
  if (series.latency) return;
  for (const auto& [slower, faster] : asymmetric_pairs(series.pairs, spec.max_asymmetry_pct)) {
    // A direction already below the limit is reported once, as slow.
    if (series.pairs[slower].slow) continue;
    P2pVerdict v;
    v.kind = P2pVerdictKind::kAsymmetric;
    v.series = index;
    v.src = series.pairs[slower].src;
    v.dst = series.pairs[slower].dst;
    v.measured = series.pairs[slower].figure;
    v.other = series.pairs[faster].figure;
    v.evidence = {series.pairs[slower].ref, series.pairs[faster].ref};
    out.push_back(std::move(v));
  }
}

// The GPU's PCIe link as its health record gives it: the maximum both ends support, else what
// it trained to.
std::optional<std::pair<int, int>> pcie_link(const Evidence& evidence, NodeId node, int gpu) {
  for (const auto& h : evidence.gpu_health) {
    if (h.node != node || h.gpu.index != gpu) continue;
    const auto gen = h.pcie_gen_max ? h.pcie_gen_max : h.pcie_gen;
    const auto width = h.pcie_width_max ? h.pcie_width_max : h.pcie_width;
    if (gen && width) return std::pair{*gen, *width};
  }
  return std::nullopt;
}

// The series a figure of one GPU belongs to: run, node, kind, method, direction (host->GPU?).
using PeerKey = std::tuple<std::uint32_t, NodeId, P2pPeerKind, StringId, bool>;

struct PeerFigure {
  std::size_t record = 0;
  double figure = 0;
};

std::optional<std::pair<PeerKey, double>> peer_figure(const Evidence& evidence,
                                                      const P2pEvidence& r) {
  if (!r.measured() || r.bidirectional) return std::nullopt;
  const std::string_view path = evidence.text(r.path);
  if (path == "host_gpu" && r.host_numa_local == false && r.bytes_per_s) {
    return std::pair{PeerKey{r.run, r.node, P2pPeerKind::kHostRemote, r.method, r.src_gpu < 0},
                     *r.bytes_per_s / 1e9};
  }
  if (path != "device_local") return std::nullopt;
  const bool latency = evidence.text(r.method) == "pointer_chase";
  if (latency ? !r.latency_s : !r.bytes_per_s) return std::nullopt;
  return std::pair{PeerKey{r.run, r.node, P2pPeerKind::kDeviceLocal, r.method, false},
                   latency ? *r.latency_s * 1e6 : *r.bytes_per_s / 1e9};
}

void judge_peer_series(const PeerKey& key, const std::map<int, PeerFigure>& gpus, bool latency,
                       const P2pSpec& spec, std::vector<P2pPeerVerdict>& out) {
  const P2pPeerKind kind = std::get<2>(key);
  const std::optional<double> floor = latency ? std::nullopt
                                      : kind == P2pPeerKind::kHostRemote
                                          ? spec.host_remote_floor_gb_per_s
                                          : spec.device_local_floor_gb_per_s;
  std::vector<double> figures;
  figures.reserve(gpus.size());
  for (const auto& [gpu, f] : gpus)
    figures.push_back(f.figure);
  std::sort(figures.begin(), figures.end());
  const bool relative = static_cast<int>(figures.size()) >= spec.min_pairs;
  if (!relative && !floor) return;
  const double keep = 1 - spec.max_deficit_pct / 100;
  double reference = 0;
  double limit = latency ? std::numeric_limits<double>::infinity() : floor.value_or(0);
  if (relative) {
    reference = percentile_sorted(figures, latency ? 25 : 75);
    limit = latency ? (keep > 0 ? reference / keep : std::numeric_limits<double>::infinity())
                    : std::max(limit, reference * keep);
  }
  for (const auto& [gpu, f] : gpus) {
    if (latency ? f.figure <= limit : f.figure >= limit) continue;
    out.push_back({kind, f.record, latency, f.figure, limit, reference});
  }
}

}  // namespace

std::vector<P2pPeerVerdict> judge_p2p_peer_figures(const Evidence& evidence, const P2pSpec& spec) {
  std::map<PeerKey, std::map<int, PeerFigure>> grouped;
  const auto is_latency = [&](const PeerKey& key) {
    return evidence.text(std::get<3>(key)) == "pointer_chase";
  };
  for (std::size_t i = 0; i < evidence.p2p.size(); ++i) {
    const P2pEvidence& r = evidence.p2p[i];
    const auto found = peer_figure(evidence, r);
    if (!found) continue;
    const auto& [key, figure] = *found;
    const int gpu = r.own_gpu();
    // A GPU measured twice in a run is judged by its worse figure.
    auto [it, inserted] = grouped[key].try_emplace(gpu, PeerFigure{i, figure});
    const bool worse = is_latency(key) ? figure > it->second.figure : figure < it->second.figure;
    if (!inserted && worse) it->second = {i, figure};
  }
  std::vector<P2pPeerVerdict> out;
  for (const auto& [key, gpus] : grouped)
    judge_peer_series(key, gpus, is_latency(key), spec, out);
  return out;
}

std::optional<double> pcie_bytes_per_s(int generation, int width) {
  struct PcieGeneration {
    double transfers;   // GT/s per lane
    double efficiency;  // payload bits per line bit: 8b/10b, 128b/130b, then FLIT mode
  };
  static constexpr PcieGeneration kGenerations[] = {
      {2.5, 8.0 / 10.0},     {5.0, 8.0 / 10.0},     {8.0, 128.0 / 130.0},
      {16.0, 128.0 / 130.0}, {32.0, 128.0 / 130.0}, {64.0, 242.0 / 256.0},
  };
  if (width <= 0 || generation < 1 || generation > static_cast<int>(std::size(kGenerations)))
    return std::nullopt;
  const PcieGeneration& gen = kGenerations[generation - 1];
  return gen.transfers * 1e9 * gen.efficiency / 8.0 * width;
}

PairMatrixClassification classify_pair_matrix(const std::vector<P2pPairFigure>& figures) {
  std::map<int, std::set<int>> peers;
  std::map<int, std::set<int>> slow_peers;
  for (const auto& pair : figures) {
    peers[pair.src].insert(pair.dst);
    peers[pair.dst].insert(pair.src);
    if (pair.slow) {
      slow_peers[pair.src].insert(pair.dst);
      slow_peers[pair.dst].insert(pair.src);
    }
  }
  PairMatrixClassification out;
  for (const auto& [gpu, all] : peers) {
    if (all.size() >= 2 && slow_peers[gpu] == all) out.slow_gpus.push_back(gpu);
  }
  const auto is_slow_gpu = [&](int gpu) {
    return std::find(out.slow_gpus.begin(), out.slow_gpus.end(), gpu) != out.slow_gpus.end();
  };
  for (std::size_t i = 0; i < figures.size(); ++i) {
    if (figures[i].slow && !is_slow_gpu(figures[i].src) && !is_slow_gpu(figures[i].dst)) {
      out.slow_pairs.push_back(i);
    }
  }
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> asymmetric_pairs(
    const std::vector<P2pPairFigure>& figures, double max_asymmetry_pct) {
  std::map<std::pair<int, int>, std::size_t> at;
  for (std::size_t i = 0; i < figures.size(); ++i)
    at.emplace(std::pair{figures[i].src, figures[i].dst}, i);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  const double keep = 1 - max_asymmetry_pct / 100;
  for (const auto& [ends, i] : at) {
    if (ends.first > ends.second) continue;
    const auto reverse = at.find({ends.second, ends.first});
    if (reverse == at.end()) continue;
    const std::size_t j = reverse->second;
    const bool i_slower = figures[i].figure < figures[j].figure;
    const std::size_t slower = i_slower ? i : j;
    const std::size_t faster = i_slower ? j : i;
    if (figures[slower].figure < figures[faster].figure * keep) out.emplace_back(slower, faster);
  }
  return out;
}

P2pJudgement judge_p2p_pairs(const Evidence& evidence, const P2pSpec& spec) {
  std::map<SeriesKey, std::map<std::pair<int, int>, P2pPairFigure>> grouped;
  for (const auto& r : evidence.p2p) {
    if (!r.measured() || evidence.text(r.path) != "gpu_gpu") continue;
    const bool latency = evidence.text(r.method) == "pointer_chase";
    if (latency ? !r.latency_s : !r.bytes_per_s) continue;
    const double figure = latency ? *r.latency_s * 1e6 : *r.bytes_per_s / 1e9;
    const SeriesKey key{r.run, r.node, r.method, r.access, r.bidirectional};
    auto [it, inserted] = grouped[key].try_emplace({r.src_gpu, r.dst_gpu});
    P2pPairFigure& pair = it->second;
    const bool worse = latency ? figure > pair.figure : figure < pair.figure;
    if (inserted || worse) pair = {r.src_gpu, r.dst_gpu, figure, false, r.ref};
  }
  P2pJudgement out;
  for (auto& [key, pairs] : grouped) {
    P2pSeries series;
    std::tie(series.run, series.node, series.method, series.access, series.bidirectional) = key;
    series.latency = evidence.text(series.method) == "pointer_chase";
    for (auto& [ends, pair] : pairs)
      series.pairs.push_back(pair);
    if (!set_limit(series, spec)) continue;
    for (auto& pair : series.pairs)
      pair.slow = series.latency ? pair.figure > series.limit : pair.figure < series.limit;
    out.series.push_back(std::move(series));
    judge_series(out.series.size() - 1, out.series.back(), spec, out.verdicts);
  }
  return out;
}

std::vector<P2pHostVerdict> judge_p2p_host(const Evidence& evidence, const P2pSpec& spec) {
  std::vector<P2pHostVerdict> out;
  for (std::size_t i = 0; i < evidence.p2p.size(); ++i) {
    const P2pEvidence& r = evidence.p2p[i];
    // Host memory on another socket crosses the CPUs' link: not held to PCIe's rate, but to the
    // node's other GPUs (judge_p2p_peer_figures).
    if (!r.measured() || evidence.text(r.path) != "host_gpu" || !r.bytes_per_s ||
        r.host_numa_local == false) {
      continue;
    }
    P2pHostVerdict v;
    v.record = i;
    v.measured = *r.bytes_per_s / 1e9;
    const int gpu = r.src_gpu >= 0 ? r.src_gpu : r.dst_gpu;
    const auto link = pcie_link(evidence, r.node, gpu);
    const auto rate = link ? pcie_bytes_per_s(link->first, link->second) : std::nullopt;
    if (rate) {
      v.generation = link->first;
      v.width = link->second;
      v.limit = *rate / 1e9 * spec.host_min_pcie_pct / 100;
    } else if (spec.host_floor_gb_per_s) {
      v.limit = *spec.host_floor_gb_per_s;
    } else {
      v.kind = P2pHostVerdictKind::kUnjudged;
      out.push_back(v);
      continue;
    }
    if (v.measured < v.limit) out.push_back(v);
  }
  return out;
}

}  // namespace commcert
