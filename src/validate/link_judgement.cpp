#include "validate/link_judgement.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "core/stats.hpp"

namespace commcert {
namespace {

using SeriesKey = std::tuple<std::uint32_t, StringId, StringId, StringId, std::uint64_t, int>;

std::optional<double> absolute_limit(std::string_view test, const LinkSpec& spec) {
  if (test == "write_bw") return spec.write_bw_floor_gb_per_s;
  if (test == "write_bw_bidir") return spec.write_bw_bidir_floor_gb_per_s;
  if (test == "read_bw") return spec.read_bw_floor_gb_per_s;
  if (test == "write_lat") return spec.write_lat_ceiling_us;
  return std::nullopt;
}

// Sets reference and limit; false when nothing can judge the series.
bool set_limit(LinkSeries& series, std::optional<double> absolute, const LinkSpec& spec) {
  std::vector<double> figures;
  for (const auto& pair : series.pairs)
    figures.push_back(pair.figure);
  std::sort(figures.begin(), figures.end());
  const bool relative = static_cast<int>(figures.size()) >= spec.min_pairs;
  const double keep = 1 - spec.max_deficit_pct / 100;
  if (series.latency) {
    double limit = absolute.value_or(std::numeric_limits<double>::infinity());
    if (relative) {
      series.reference = percentile_sorted(figures, 25);
      limit = std::min(limit, series.reference / keep);
    }
    series.limit = limit;
  } else {
    double limit = absolute.value_or(0);
    if (relative) {
      series.reference = percentile_sorted(figures, 75);
      limit = std::max(limit, series.reference * keep);
    }
    series.limit = limit;
  }
  return absolute.has_value() || relative;
}

void judge_series(std::size_t index, const LinkSeries& series, std::vector<LinkVerdict>& out) {
  struct NodeTally {
    int partners = 0;
    int failed = 0;
    std::vector<double> slow_figures;
    std::vector<EvidenceRef> refs;
  };
  std::map<NodeId, NodeTally> nodes;
  for (const auto& pair : series.pairs) {
    for (const NodeId node : {pair.a, pair.b}) {
      NodeTally& t = nodes[node];
      ++t.partners;
      if (pair.slow) {
        ++t.failed;
        t.slow_figures.push_back(pair.figure);
        t.refs.insert(t.refs.end(), pair.refs.begin(), pair.refs.end());
      }
    }
  }
  const auto slow_node = [&](NodeId node) {
    const NodeTally& t = nodes[node];
    return t.partners >= 2 && t.failed == t.partners;
  };
  const auto verdict = [&](LinkVerdictKind kind, NodeId node) {
    const NodeTally& t = nodes[node];
    LinkVerdict v;
    v.kind = kind;
    v.series = index;
    v.node = node;
    v.failed = t.failed;
    v.partners = t.partners;
    v.measured = t.slow_figures.empty() ? 0 : median(t.slow_figures);
    v.evidence = t.refs;
    return v;
  };
  std::vector<NodeId> unresolved;
  for (const auto& [node, tally] : nodes) {
    if (slow_node(node)) out.push_back(verdict(LinkVerdictKind::kSlowNode, node));
  }
  for (const auto& pair : series.pairs) {
    if (!pair.slow) continue;
    const bool explained = slow_node(pair.a) || slow_node(pair.b);
    const auto cleared = [&](NodeId node) { return nodes[node].partners > nodes[node].failed; };
    if (!explained && cleared(pair.a) && cleared(pair.b)) {
      LinkVerdict link = verdict(LinkVerdictKind::kSlowLink, pair.a);
      link.other = pair.b;
      link.measured = pair.figure;
      link.evidence = pair.refs;
      LinkVerdict other = link;
      std::swap(other.node, other.other);
      other.failed = nodes[pair.b].failed;
      other.partners = nodes[pair.b].partners;
      out.push_back(std::move(link));
      out.push_back(std::move(other));
      continue;
    }
    for (const NodeId node : {pair.a, pair.b}) {
      if (slow_node(node) || cleared(node)) continue;
      if (std::find(unresolved.begin(), unresolved.end(), node) == unresolved.end()) {
        unresolved.push_back(node);
        out.push_back(verdict(LinkVerdictKind::kUnresolved, node));
      }
    }
  }
}

}  // namespace

LinkJudgement judge_links(const Evidence& evidence, const LinkSpec& spec) {
  std::map<SeriesKey, std::map<std::pair<NodeId, NodeId>, LinkPairFigure>> grouped;
  for (const auto& r : evidence.links) {
    if (!r.measured()) continue;
    const bool latency = evidence.text(r.test) == "write_lat";
    if (!latency && r.bytes < spec.min_bytes) continue;
    const double figure = latency ? *r.latency_s * 1e6 : *r.bytes_per_s / 1e9;
    const SeriesKey key{r.run, r.transport, r.memory, r.test, r.bytes, r.rail};
    const std::pair<NodeId, NodeId> ends{std::min(r.from, r.to), std::max(r.from, r.to)};
    auto [it, inserted] = grouped[key].try_emplace(ends);
    LinkPairFigure& pair = it->second;
    if (inserted) {
      pair.a = ends.first;
      pair.b = ends.second;
      pair.figure = figure;
    } else {
      pair.figure = latency ? std::max(pair.figure, figure) : std::min(pair.figure, figure);
    }
    pair.refs.push_back(r.ref);
  }
  LinkJudgement out;
  for (auto& [key, pairs] : grouped) {
    LinkSeries series;
    std::tie(series.run, series.transport, series.memory, series.test, series.bytes, series.rail) =
        key;
    series.latency = evidence.text(series.test) == "write_lat";
    for (auto& [ends, pair] : pairs)
      series.pairs.push_back(std::move(pair));
    if (!set_limit(series, absolute_limit(evidence.text(series.test), spec), spec)) continue;
    for (auto& pair : series.pairs) {
      pair.slow = series.latency ? pair.figure > series.limit : pair.figure < series.limit;
    }
    out.series.push_back(std::move(series));
    judge_series(out.series.size() - 1, out.series.back(), out.verdicts);
  }
  return out;
}

}  // namespace commcert
