#include <fmt/format.h>

#include "validate/p2p_judgement.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Figures of one GPU each that only the node's other GPUs can judge (docs/p2p.md): host memory
// on the other socket, per direction, and copies within the GPU's own memory, per method. One GPU
// far behind its peers is that GPU's path (its PCIe switch, its copy engines or memory), so the
// node is quarantined naming the GPU.
class P2pGpuFiguresRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.p2p_gpu_figures"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    for (const auto& v : judge_p2p_peer_figures(evidence, context.baseline.p2p)) {
      const P2pEvidence& r = evidence.p2p[v.record];
      const bool remote = v.kind == P2pPeerKind::kHostRemote;
      const int index = r.own_gpu();
      const GpuKey gpu{index, r.gpu.index == index ? r.gpu.uuid : kNoString};
      Finding f = gpu_finding(
          evidence,
          remote ? ReasonCode("p2p.host_remote_slow") : ReasonCode("p2p.device_local_slow"), id(),
          "p2p", r.node, gpu, r.ref);
      const std::string unit = v.latency ? "µs" : "GB/s";
      f.measured = v.measured;
      f.limit = v.limit;
      f.unit = unit;
      const std::string test =
          remote
              ? fmt::format("{} from the other socket{}", r.src_gpu < 0 ? "host->GPU" : "GPU->host",
                            r.host_numa_node ? fmt::format(" (NUMA node {})", *r.host_numa_node)
                                             : std::string())
              : fmt::format("{} within the GPU", evidence.text(r.method));
      f.fields.emplace_back("test", test);
      f.fields.emplace_back("measured", format_figure(v.measured));
      f.fields.emplace_back("limit", format_figure(v.limit));
      f.fields.emplace_back("unit", unit);
      f.fields.emplace_back(
          "basis", v.reference > 0 ? fmt::format("the node's GPUs ({} {} {})",
                                                 v.latency ? "lower quartile" : "upper quartile",
                                                 format_figure(v.reference), unit)
                                   : std::string("the baseline's floor"));
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_p2p_gpu_figures_rule() {
  return std::make_unique<P2pGpuFiguresRule>();
}

}  // namespace commcert::rules
