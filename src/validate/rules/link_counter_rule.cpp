#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// A port that accrues errors while a link test loads it is failing even when the bandwidth is
// still fine (the link retransmits, or will soon go down): the counter's node is quarantined.
// A round's deltas are written on every record the round wrote (each test and size between the
// same two ends): one growth of one counter is one finding, however many records carry it.
class LinkCounterRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.link_counters"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    const auto& limits = context.baseline.links.max_counter_deltas;
    // run, the pair (either order), the counting port and counter, and the growth it shows
    using Growth =
        std::tuple<std::uint32_t, NodeId, NodeId, NodeId, StringId, int, StringId, std::int64_t>;
    std::set<Growth> judged;
    for (const auto& r : evidence.links) {
      for (const auto& c : r.counters) {
        if (!judged
                 .emplace(r.run, std::min(r.from, r.to), std::max(r.from, r.to), c.node, c.device,
                          c.port, c.counter, c.delta)
                 .second) {
          continue;
        }
        const std::string name(evidence.text(c.counter));
        const auto limit = limits.find(name);
        if (limit == limits.end()) continue;
        const bool over = c.delta > limit->second;
        // A saturated counter within its limit may have counted errors it cannot show: it
        // cannot clear the port (fail closed), nor convict it.
        if (!over && !c.saturated) continue;
        const NodeId partner = c.node == r.from ? r.to : r.from;
        const std::string device(evidence.text(c.device));
        Finding f =
            over ? gpu_finding(evidence, "links.counter_errors", id(), "links", c.node, {}, r.ref)
                 : gpu_finding(evidence, "links.counter_saturated", id(), "links", c.node, {},
                               r.ref);
        f.link = LinkRef{"ib_port", device, c.port, {}};
        f.measured = static_cast<double>(c.delta);
        f.limit = static_cast<double>(limit->second);
        set_field(f, "where", fmt::format("{} port {}: ", device, c.port));
        f.fields.emplace_back("counter", name);
        f.fields.emplace_back("count", std::to_string(c.delta));
        f.fields.emplace_back("limit", std::to_string(limit->second));
        f.fields.emplace_back("partner", partner == kNoString ? "?" : evidence.node_name(partner));
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_link_counter_rule() {
  return std::make_unique<LinkCounterRule>();
}

}  // namespace commcert::rules
