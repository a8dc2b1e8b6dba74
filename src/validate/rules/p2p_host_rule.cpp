#include <fmt/format.h>

#include "validate/p2p_judgement.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Host<->GPU copies from the GPU's own NUMA node against the rate of the GPU's PCIe link, as the
// health record gives it (docs/p2p.md). Without that record (and without a host floor in the
// baseline) the figure cannot be judged: the node is inconclusive, never passed on a guess.
class P2pHostRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.p2p_host"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    const P2pSpec& spec = context.baseline.p2p;
    for (const auto& v : judge_p2p_host(evidence, spec)) {
      const P2pEvidence& r = evidence.p2p[v.record];
      const bool to_device = r.src_gpu < 0;
      const GpuKey gpu{to_device ? r.dst_gpu : r.src_gpu,
                       r.gpu.index == (to_device ? r.dst_gpu : r.src_gpu) ? r.gpu.uuid : kNoString};
      Finding f = gpu_finding(evidence,
                              v.kind == P2pHostVerdictKind::kSlow ? ReasonCode("p2p.host_slow")
                                                                  : ReasonCode("p2p.host_unjudged"),
                              id(), "p2p", r.node, gpu, r.ref);
      f.measured = v.measured;
      f.unit = "GB/s";
      f.fields.emplace_back("direction", to_device ? "host->GPU" : "GPU->host");
      f.fields.emplace_back("measured", format_figure(v.measured));
      f.fields.emplace_back("numa", r.host_numa_node
                                        ? fmt::format("NUMA node {}", *r.host_numa_node)
                                        : std::string("an unknown NUMA node"));
      if (v.kind == P2pHostVerdictKind::kSlow) {
        f.limit = v.limit;
        f.fields.emplace_back("limit", format_figure(v.limit));
        f.fields.emplace_back("basis", v.generation
                                           ? fmt::format("{}% of PCIe gen{} x{}",
                                                         format_figure(spec.host_min_pcie_pct),
                                                         *v.generation, *v.width)
                                           : std::string("the baseline's host floor"));
      }
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_p2p_host_rule() {
  return std::make_unique<P2pHostRule>();
}

}  // namespace commcert::rules
