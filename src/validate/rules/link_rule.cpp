#include <utility>

#include <fmt/format.h>

#include "core/units.hpp"
#include "validate/link_judgement.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Link tests pair by pair (docs/links.md): a node slow with every partner is quarantined (its
// NIC, cable or PCIe path); one slow pair whose nodes pass with other partners is a suspect link,
// a warning on both that blames neither; a node slow with a partner and with no passing partner
// to clear it is inconclusive.
class LinkRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.links"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    const LinkJudgement judgement = judge_links(evidence, context.baseline.links);
    for (const auto& v : judgement.verdicts) {
      const LinkSeries& series = judgement.series[v.series];
      Finding f = pair_test_finding(evidence, id(), "links", v.node, series, v);
      f.fields.insert(f.fields.end(),
                      {{"test", std::string(evidence.text(series.test))},
                       {"size", format_bytes(series.bytes)},
                       {"rail", series.rail >= 0 ? fmt::format(" rail {}", series.rail) : ""},
                       {"failed", std::to_string(v.failed)},
                       {"partners", std::to_string(v.partners)}});
      switch (v.kind) {
        case LinkVerdictKind::kSlowNode:
          f.code = "links.slow_node";
          break;
        case LinkVerdictKind::kUnresolved:
          f.code = "links.unresolved";
          break;
        case LinkVerdictKind::kSlowLink: {
          f.code = "links.slow_link";
          // Named the same way on both ends: the nodes in name order.
          std::string a = evidence.node_name(v.node);
          std::string b = evidence.node_name(v.other);
          if (b < a) std::swap(a, b);
          f.link = LinkRef{"hosts", {}, series.rail, {a, b}};
          f.fields.emplace_back("link", fmt::format("{}<->{}", a, b));
          break;
        }
      }
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_link_rule() {
  return std::make_unique<LinkRule>();
}

}  // namespace commcert::rules
