#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.hpp"
#include "validate/pair_localization.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Groups fine within and slow across: one finding per node of every group, naming the switch
// path when a topology matches the groups, else the groups by their nodes.
void suspect_switch_findings(const Evidence& evidence, const PairVerdict& verdict, Finding f,
                             std::vector<Finding>& out) {
  f.code = "localization.suspect_switch";
  std::vector<std::string> sides;
  for (const auto& group : verdict.groups) {
    std::vector<std::string> names;
    names.reserve(group.size());
    for (const NodeId node : group)
      names.push_back(evidence.node_name(node));
    sides.push_back(fmt::format("{{{}}}", fmt::join(names, ", ")));
  }
  const std::string cut = fmt::format("{}", fmt::join(sides, " and "));
  f.fields.emplace_back("cut", cut);
  // With a topology that matches the groups, the switch; else the groups by their nodes.
  std::string path = "between " + cut;
  std::string pattern = "every pair across is slow, every pair within a group is fine";
  std::string target = "the uplinks and spine ports between these groups' leaf switches";
  std::vector<std::string> switches;
  if (verdict.naming) {
    path = verdict.naming->path;
    pattern = verdict.naming->pattern;
    target = verdict.naming->target;
    std::set<std::string> named(verdict.naming->above.begin(), verdict.naming->above.end());
    for (const auto& below : verdict.naming->below) {
      named.insert(below.switches.begin(), below.switches.end());
      named.insert(below.parents.begin(), below.parents.end());
    }
    switches.assign(named.begin(), named.end());
  }
  f.link = LinkRef{"switch_path", path, -1, std::move(switches)};
  f.fields.emplace_back("path", std::move(path));
  f.fields.emplace_back("pattern", std::move(pattern));
  f.fields.emplace_back("target", std::move(target));
  for (const auto& group : verdict.groups) {
    for (const NodeId node : group) {
      Finding each = f;
      each.node = node;
      out.push_back(std::move(each));
    }
  }
}

// Pairwise rounds name the culprit of a cluster-wide shortfall: a node slow in the rounds and
// again with a known-good partner is quarantined; a slow pair whose nodes pass with known-good
// partners is a suspect link, a warning on both nodes that blames neither; a node slow and not
// yet re-tested (or with no known-good node to test it against) is inconclusive; groups fine
// within and slow across, again when measured again, are a suspect switch path: a warning on
// every node of every group that blames none, naming the switch when a topology matches the
// groups (docs/localization.md).
class PairLocalizationRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.pair_localization"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    const PairLocalization& pairs = context.pairs;
    for (const auto& verdict : pairs.verdicts) {
      const PairSeries& series = pairs.series[verdict.series];
      const std::string collective(evidence.text(series.collective));
      const std::string shown = verdict.collectives.empty() ? collective : verdict.collectives;
      Finding f;
      f.node = verdict.node;
      f.check = collective_check(collective);
      f.rule = std::string(id());
      f.measured = verdict.measured_gb_per_s;
      f.limit = series.limit_gb_per_s;
      f.unit = "GB/s";
      f.evidence = verdict.evidence;
      // The figures, the size and the limit are all in `figures`, as the reasons show them.
      f.fields = {{"collective", shown},
                  {"figures", verdict.figures},
                  {"failed", std::to_string(verdict.failed_partners)},
                  {"partners", std::to_string(verdict.partners)},
                  {"run", std::string(evidence.text(evidence.runs[series.run].run_id))},
                  {"detail", verdict.retest.empty() ? "" : "; " + verdict.retest}};
      switch (verdict.kind) {
        case PairVerdictKind::kBadNode:
          f.code = "localization.bad_node";
          out.push_back(std::move(f));
          break;
        case PairVerdictKind::kUnresolved:
          f.code = "localization.unresolved";
          out.push_back(std::move(f));
          break;
        case PairVerdictKind::kSuspectLink: {
          f.code = "localization.suspect_link";
          const std::string a = evidence.node_name(verdict.node);
          const std::string b = evidence.node_name(verdict.other);
          f.link = LinkRef{"hosts", {}, -1, {a, b}};
          f.fields.emplace_back("link", fmt::format("{}<->{}", a, b));
          Finding other = f;
          other.node = verdict.other;
          out.push_back(std::move(f));
          out.push_back(std::move(other));
          break;
        }
        case PairVerdictKind::kSuspectSwitch:
          suspect_switch_findings(evidence, verdict, std::move(f), out);
          break;
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_pair_localization_rule() {
  return std::make_unique<PairLocalizationRule>();
}

}  // namespace commcert::rules
