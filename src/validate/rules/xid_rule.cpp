#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// XIDs from health records and from the burn's telemetry. DCGM's "devastating" XIDs (48 DBE,
// 63/64 row remap, 74 NVLink, 79 fallen off the bus, 94/95 contained/uncontained ECC, 119/120
// GSP, 140 unrecovered ECC) need a reset; application XIDs (13, 31, 43, 45, 68: what the k8s
// device plugin ignores) say nothing about the hardware; any other is written down.
class XidRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.xid"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const auto& limits = context.baseline.gpu_health;
    const Evidence& evidence = context.evidence;
    struct Seen {
      std::size_t events = 0;
      StringId first_time = kNoString;
      EvidenceRef ref;
      std::string_view check;
    };
    std::map<std::tuple<NodeId, int, StringId, int>, Seen> seen;  // (node, gpu, uuid, xid)
    const auto note = [&](NodeId node, const GpuKey& gpu, const std::vector<XidEvidence>& xids,
                          EvidenceRef ref, std::string_view check) {
      for (const auto& x : xids) {
        Seen& s = seen[{node, gpu.index, gpu.uuid, x.xid}];
        if (s.events++ == 0) {
          s.first_time = x.time;
          s.ref = ref;
          s.check = check;
        }
      }
    };
    for (const auto& r : evidence.gpu_health)
      note(r.node, r.gpu, r.xids, r.ref, "health.gpu");
    for (const auto& r : evidence.burns)
      note(r.node, r.gpu, r.xids, r.ref, "burn");

    const auto listed = [](const std::vector<int>& list, int xid) {
      return std::find(list.begin(), list.end(), xid) != list.end();
    };
    for (const auto& [key, s] : seen) {
      const auto& [node, index, uuid, xid] = key;
      if (listed(limits.xid_ignored, xid)) continue;
      const bool fatal = listed(limits.xid_fatal, xid);
      Finding f =
          gpu_finding(evidence, fatal ? ReasonCode("health.xid_fatal") : ReasonCode("health.xid"),
                      id(), s.check, node, GpuKey{index, uuid}, s.ref);
      f.measured = xid;
      f.fields.emplace_back("xid", std::to_string(xid));
      std::string detail;
      if (s.first_time != kNoString && !evidence.text(s.first_time).empty()) {
        detail = fmt::format(" at {}", evidence.text(s.first_time));
      }
      if (s.events > 1) detail += fmt::format(" ({} events)", s.events);
      f.fields.emplace_back("detail", detail);
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_xid_rule() {
  return std::make_unique<XidRule>();
}

}  // namespace commcert::rules
