#include <algorithm>
#include <map>
#include <unordered_map>

#include "validate/checks.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// The straggler of a record is the rank the others waited for. Any rank is that now and then;
// a node is flagged only when its rank is the straggler, with a lead that is a large share of
// the median rank time, in most records of a run and collective: consistent across sizes, not
// one bad sample (false alarms drain healthy nodes).
class StragglerRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.collective_straggler"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    struct Group {
      std::size_t total = 0;
      std::map<std::pair<NodeId, int>, std::vector<float>> leads;  // (node, rank) -> leads
      std::vector<EvidenceRef> refs;
    };
    std::map<std::tuple<std::uint32_t, StringId, std::uint64_t>, Group> groups;
    // Per collective name: its straggler settings, nullptr when not judged (looked up once, not
    // once per record of a million).
    std::unordered_map<StringId, const StragglerSpec*> specs;
    for (const auto& c : evidence.collectives) {
      if (!c.measured() || c.straggler == kNoString) continue;
      auto [it, fresh] = specs.try_emplace(c.collective, nullptr);
      if (fresh) {
        const std::string_view name = evidence.text(c.collective);
        const CollectiveSpec* spec = context.baseline.collective(collective_check(name));
        if (!is_rooted_collective(name) && spec && spec->straggler) it->second = &*spec->straggler;
      }
      const StragglerSpec* spec = it->second;
      if (!spec) continue;
      Group& g = groups[{c.run, c.collective, Evidence::communicator(c)}];
      ++g.total;
      if (c.straggler_lead_fraction * 100.0 >= spec->min_lead_pct) {
        g.leads[{c.straggler, c.straggler_rank}].push_back(c.straggler_lead_fraction);
        if (g.refs.size() < 3) g.refs.push_back(c.ref);
      }
    }
    for (auto& [key, g] : groups) {
      const auto& [run, collective, communicator] = key;
      const std::string name(evidence.text(collective));
      const StragglerSpec& spec = *context.baseline.collective(collective_check(name))->straggler;
      for (auto& [who, leads] : g.leads) {
        const auto hits = leads.size();
        if (hits < static_cast<std::size_t>(spec.min_records)) continue;
        if (100.0 * static_cast<double>(hits) < spec.min_share_pct * static_cast<double>(g.total)) {
          continue;
        }
        std::nth_element(leads.begin(), leads.begin() + static_cast<std::ptrdiff_t>(hits / 2),
                         leads.end());
        const double median_lead = 100.0 * leads[hits / 2];
        Finding f;
        f.code = "collective.straggler";
        f.node = who.first;
        f.check = collective_check(name);
        f.rule = std::string(id());
        f.measured = median_lead;
        f.limit = spec.min_lead_pct;
        f.unit = "%";
        f.evidence = g.refs;
        f.fields = {{"collective", name},
                    {"ranks", std::to_string(who.second)},
                    {"hits", std::to_string(hits)},
                    {"total", std::to_string(g.total)},
                    {"lead", format_figure(median_lead)},
                    {"run", std::string(evidence.text(evidence.runs[run].run_id))}};
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_straggler_rule() {
  return std::make_unique<StragglerRule>();
}

}  // namespace commcert::rules
