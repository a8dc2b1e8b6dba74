#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// (node, run, collective)
using WrongDataKey = std::tuple<NodeId, std::uint32_t, StringId>;

// What one node's ranks returned wrong in one run's collective.
struct WrongDataTally {
  std::int64_t elements = 0;
  std::size_t records = 0;
  std::set<int> ranks;
  const CollectiveEvidence* first = nullptr;
  std::vector<EvidenceRef> refs;  // the first few, for the reason
  const CollectiveEvidence* last = nullptr;
};

struct WrongData {
  std::map<WrongDataKey, WrongDataTally> wrong;
  // The first record about a node that could not be attributed. Kept per node: failures of
  // other communicators of the same run (another node's node-scope record) must not hide this
  // node's own.
  std::map<WrongDataKey, std::pair<const CollectiveEvidence*, std::string>> unattributed;
};

WrongData wrong_data_of(const Evidence& evidence) {
  WrongData out;
  const auto unattributed_failure = [&](const CollectiveEvidence& c, std::string detail) {
    for (const NodeId node : evidence.participants(c))
      out.unattributed.try_emplace({node, c.run, c.collective}, &c, detail);
  };
  for (const auto& c : evidence.collectives) {
    if (!c.measured()) continue;
    const auto ranks = evidence.wrong_ranks_of(c);
    if (ranks.empty()) {
      if (c.status == RecordStatus::kFail) {
        unattributed_failure(c, "a failure with no wrong rank named");
      }
      continue;
    }
    const auto participants = evidence.participants(c);
    std::set<NodeId> wrong_nodes;
    for (const auto& w : ranks)
      wrong_nodes.insert(w.node);
    const bool everywhere =
        participants.size() > 1 && std::all_of(participants.begin(), participants.end(),
                                               [&](NodeId n) { return wrong_nodes.count(n) > 0; });
    if (everywhere) {
      unattributed_failure(c, "");
      continue;
    }
    for (const auto& w : ranks) {
      WrongDataTally& t = out.wrong[{w.node, c.run, c.collective}];
      t.elements += w.elements;
      t.ranks.insert(w.rank);
      if (t.last != &c) {  // several wrong ranks of one node count one record
        ++t.records;
        if (t.refs.size() < 3) t.refs.push_back(c.ref);
        t.last = &c;
      }
      if (!t.first) t.first = &c;
    }
  }
  return out;
}

Finding wrong_data_finding(const Evidence& evidence, const WrongDataKey& key,
                           const WrongDataTally& t, std::string_view rule) {
  const auto& [node, run, collective] = key;
  std::vector<std::string> ranks;
  for (const int r : t.ranks)
    ranks.push_back(std::to_string(r));
  Finding f;
  f.code = "collective.wrong_data";
  f.node = node;
  f.check = collective_check(evidence.text(collective));
  f.rule = std::string(rule);
  f.measured = static_cast<double>(t.elements);
  f.limit = 0;
  f.unit = "elements";
  f.evidence = t.refs;
  f.fields = {{"collective", std::string(evidence.text(collective))},
              {"elements", std::to_string(t.elements)},
              {"ranks", join(ranks)},
              {"records", std::to_string(t.records)},
              {"size", format_bytes(t.first->bytes)},
              {"placement", t.first->in_place ? "in-place" : "out-of-place"},
              {"run", std::string(evidence.text(evidence.runs[run].run_id))}};
  return f;
}

// `detail` empty: every node of the communicator returned wrong data.
Finding unattributed_finding(const Evidence& evidence, NodeId node,
                             const CollectiveEvidence& record, const std::string& detail,
                             std::string_view rule) {
  const std::string collective(evidence.text(record.collective));
  Finding f;
  f.code = detail.empty() ? ReasonCode("collective.wrong_data_everywhere")
                          : ReasonCode("collective.fail_unattributed");
  f.node = node;
  f.check = collective_check(collective);
  f.rule = std::string(rule);
  f.evidence.push_back(record.ref);
  f.fields = {
      {"collective", collective},
      {"nodes", std::to_string(evidence.participants(record).size())},
      {"run", std::string(evidence.text(evidence.runs[record.run].run_id))},
      {"detail", record.reason != kNoString ? std::string(evidence.text(record.reason)) : detail}};
  return f;
}

// Wrong output is never noise: the node whose rank returned it is quarantined. When every node
// of the communicator returned wrong data the corruption travelled through the reduction and
// the record cannot say where it started, so the nodes are inconclusive instead.
class CollectiveWrongDataRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.collective_wrong_data"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    const WrongData data = wrong_data_of(evidence);
    for (const auto& [key, t] : data.wrong)
      out.push_back(wrong_data_finding(evidence, key, t, id()));
    for (const auto& [key, value] : data.unattributed) {
      const auto& [record, detail] = value;
      out.push_back(unattributed_finding(evidence, std::get<0>(key), *record, detail, id()));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_collective_wrong_data_rule() {
  return std::make_unique<CollectiveWrongDataRule>();
}

}  // namespace commcert::rules
