#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.hpp"
#include "validate/bisect_localization.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Bisection over node groups names the culprit of a cluster-wide shortfall: a node whose groups
// were slow down to the node itself, slow with one known-good node and again with another, is
// quarantined. Anything less (a span between halves that pass alone, nodes with no known-good
// node to compare with, a candidate that passed on re-test) blames nobody: the shortfall stays
// unexplained and every node inconclusive (docs/localization.md).
class BisectLocalizationRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.bisect_localization"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    for (const auto& bisection : localize_bisection(evidence, context.baseline).runs) {
      if (!bisection.problem.empty() || !bisection.result.finished()) continue;
      const std::string run(evidence.text(evidence.runs[bisection.run].run_id));
      for (const int bad : bisection.result.bad_nodes) {
        const auto blamed = bisection.blame(bad);
        if (blamed.empty()) continue;  // never without the figures that blamed it
        std::vector<std::string> partners;
        std::vector<std::string> figures;
        Finding f;
        f.rule = std::string(id());
        f.unit = "GB/s";
        for (const auto& [group, judged] : blamed) {
          const std::string& partner = bisection.nodes.at(static_cast<std::size_t>(group[1]));
          partners.push_back(partner);
          std::vector<std::string> parts;
          for (const auto& figure : judged->figures) {
            parts.push_back(
                fmt::format("{} {} GB/s", figure.collective, format_figure(figure.gb_per_s)));
            f.evidence.push_back(figure.ref);
            if (!figure.passed() && (!f.measured || figure.gb_per_s < *f.measured)) {
              f.measured = figure.gb_per_s;
              f.limit = figure.limit_gb_per_s;
              f.check = collective_check(figure.collective);
            }
          }
          figures.push_back(fmt::format("with {}: {}", partner, fmt::join(parts, ", ")));
        }
        const auto node_index = static_cast<std::size_t>(bad);
        for (const NodeId id : evidence.runs[bisection.run].nodes) {
          if (evidence.node_name(id) == bisection.nodes.at(node_index)) f.node = id;
        }
        if (f.check.empty()) f.check = collective_check(bisection.collectives.front());
        f.code = "localization.bisect_bad_node";
        f.fields = {{"collective", fmt::format("{}", fmt::join(bisection.collectives, ", "))},
                    {"nodes", std::to_string(bisection.nodes.size())},
                    {"rounds", std::to_string(bisection.result.rounds)},
                    {"partners", fmt::format("{}", fmt::join(partners, " and "))},
                    {"figures", fmt::format("{}", fmt::join(figures, "; "))},
                    {"limit", f.limit ? format_figure(*f.limit) : std::string("?")},
                    {"run", run}};
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_bisect_localization_rule() {
  return std::make_unique<BisectLocalizationRule>();
}

}  // namespace commcert::rules
