#include <set>
#include <utility>

#include <fmt/format.h>

#include "validate/p2p_judgement.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// "copy_engine write", "sm_copy read, both ways", "pointer_chase read".
std::string series_label(const Evidence& evidence, const P2pSeries& series) {
  return fmt::format("{}{}{}{}", evidence.text(series.method),
                     series.access == kNoString ? "" : " ", evidence.text(series.access),
                     series.bidirectional ? ", both ways" : "");
}

// The GPU key a node's p2p records give a node-wide index (its uuid, for the message).
GpuKey gpu_key(const Evidence& evidence, NodeId node, int index) {
  for (const auto& r : evidence.p2p) {
    if (r.node == node && r.gpu.index == index) return r.gpu;
  }
  return GpuKey{index, kNoString};
}

// GPU pairs inside a node (docs/p2p.md): one GPU slow to every peer is the GPU or its NVSwitch
// ports, one slow pair is the link between the two, one direction far below the other is a
// degraded direction; a pair the GPUs cannot map while the baseline expects NVLink is a fault
// too. Every one quarantines: inside a node there is no other node to blame.
class P2pPairRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.p2p_pairs"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    const P2pJudgement judgement = judge_p2p_pairs(evidence, context.baseline.p2p);
    for (const auto& v : judgement.verdicts) {
      const P2pSeries& series = judgement.series[v.series];
      Finding f = pair_test_finding(evidence, id(), "p2p", series.node, series, v);
      f.fields.insert(f.fields.end(), {{"where", ""}, {"test", series_label(evidence, series)}});
      switch (v.kind) {
        case P2pVerdictKind::kSlowGpu:
          f.code = "p2p.slow_gpu";
          f.gpu = gpu_key(evidence, series.node, v.gpu);
          set_field(f, "where", gpu_where(evidence, f.gpu));
          f.fields.emplace_back("peers", std::to_string(v.peers));
          break;
        case P2pVerdictKind::kSlowPair:
          f.code = "p2p.slow_pair";
          f.fields.emplace_back("pair", fmt::format("gpu {} -> gpu {}", v.src, v.dst));
          break;
        case P2pVerdictKind::kAsymmetric:
          f.code = "p2p.asymmetric";
          f.limit = context.baseline.p2p.max_asymmetry_pct;
          f.unit = "%";
          f.fields.emplace_back("pair", fmt::format("gpu {} -> gpu {}", v.src, v.dst));
          f.fields.emplace_back("other", format_figure(v.other));
          set_field(f, "limit", format_figure(context.baseline.p2p.max_asymmetry_pct));
          break;
      }
      out.push_back(std::move(f));
    }
    no_peer_access(context, out);
  }

 private:
  // A node whose baseline expects NVLink, with a pair of GPUs that cannot map each other.
  void no_peer_access(const JudgeContext& context, std::vector<Finding>& out) const {
    if (context.baseline.nvlinks_per_gpu.value_or(0) <= 0) return;
    const Evidence& evidence = context.evidence;
    std::set<std::tuple<NodeId, int, int>> said;
    for (const auto& r : evidence.p2p) {
      if (r.peer_access != false || r.src_gpu < 0 || r.dst_gpu < 0) continue;
      const auto ends = std::minmax(r.src_gpu, r.dst_gpu);
      if (!said.emplace(r.node, ends.first, ends.second).second) continue;
      Finding f;
      f.code = "p2p.no_peer_access";
      f.node = r.node;
      f.check = "p2p";
      f.rule = std::string(id());
      f.evidence = {r.ref};
      f.fields = {{"where", ""},
                  {"pair", fmt::format("gpu {} <-> gpu {}", ends.first, ends.second)},
                  {"nvlinks", std::to_string(*context.baseline.nvlinks_per_gpu)}};
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_p2p_pair_rule() {
  return std::make_unique<P2pPairRule>();
}

}  // namespace commcert::rules
