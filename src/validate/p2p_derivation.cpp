#include "validate/p2p_derivation.hpp"

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "validate/finding.hpp"

namespace commcert {
namespace {

enum class Limit { kPairFloor, kPairLatency, kHostFloor, kHostRemoteFloor, kDeviceLocalFloor };

// Which limit a record's figure informs, and the series it is one figure of.
using SeriesKey = std::tuple<Limit, StringId, StringId, bool, bool>;

std::optional<Limit> limit_of(const Evidence& evidence, const P2pEvidence& r) {
  const std::string_view path = evidence.text(r.path);
  const bool latency = evidence.text(r.method) == "pointer_chase";
  if (path == "gpu_gpu") return latency ? Limit::kPairLatency : Limit::kPairFloor;
  if (latency) return std::nullopt;  // only pairs have a latency limit
  if (path == "device_local") return Limit::kDeviceLocalFloor;
  if (path != "host_gpu" || !r.host_numa_local) return std::nullopt;
  return *r.host_numa_local ? Limit::kHostFloor : Limit::kHostRemoteFloor;
}

struct Derived {
  double value = 0;
  std::size_t figures = 0;
  std::size_t series = 0;
};

}  // namespace

bool derive_p2p_limits(const Evidence& evidence, const std::set<std::string>& broken,
                       double margin_pct, P2pSpec& spec,
                       std::map<std::string, std::string>& comments) {
  std::map<SeriesKey, std::vector<double>> series;
  for (const auto& r : evidence.p2p) {
    if (r.status != RecordStatus::kOk || !r.measured() || broken.count(evidence.node_name(r.node)))
      continue;
    const auto limit = limit_of(evidence, r);
    if (!limit) continue;
    const bool latency = *limit == Limit::kPairLatency;
    if (latency ? !r.latency_s : !r.bytes_per_s) continue;
    series[{*limit, r.method, r.access, r.bidirectional, r.src_gpu < 0}].push_back(
        latency ? *r.latency_s * 1e6 : *r.bytes_per_s / 1e9);
  }
  const double margin = margin_pct / 100;
  std::map<Limit, Derived> derived;
  for (auto& [key, figures] : series) {
    const Limit limit = std::get<0>(key);
    const bool latency = limit == Limit::kPairLatency;
    const double mid = median(figures);
    const double value = latency ? mid * (1 + margin) : mid * (1 - margin);
    auto [it, first] = derived.try_emplace(limit, Derived{value, 0, 0});
    // Every series a limit applies to must pass it: the lowest floor, the highest ceiling.
    if (!first)
      it->second.value =
          latency ? std::max(it->second.value, value) : std::min(it->second.value, value);
    it->second.figures += figures.size();
    ++it->second.series;
  }
  const auto set = [&](Limit limit, const char* key, std::optional<double>& into) {
    const auto it = derived.find(limit);
    if (it == derived.end()) return;
    into = round_figure(it->second.value);
    comments[fmt::format("checks.p2p.{}", key)] = fmt::format(
        "the {} median of {} series ({} figures) {} {}%",
        limit == Limit::kPairLatency ? "highest" : "lowest", it->second.series, it->second.figures,
        limit == Limit::kPairLatency ? "plus" : "less", format_figure(margin_pct));
  };
  set(Limit::kPairFloor, "pair_floor_gb_per_s", spec.pair_floor_gb_per_s);
  set(Limit::kPairLatency, "pair_latency_ceiling_us", spec.pair_latency_ceiling_us);
  set(Limit::kHostFloor, "host_floor_gb_per_s", spec.host_floor_gb_per_s);
  set(Limit::kHostRemoteFloor, "host_remote_floor_gb_per_s", spec.host_remote_floor_gb_per_s);
  set(Limit::kDeviceLocalFloor, "device_local_floor_gb_per_s", spec.device_local_floor_gb_per_s);
  return !derived.empty();
}

}  // namespace commcert
