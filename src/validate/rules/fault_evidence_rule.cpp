#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// Records of a fault given one reason: the first, and where every one of them is.
struct Group {
  const FaultRecord* first = nullptr;
  std::vector<EvidenceRef> refs;

  void add(const FaultRecord& f) {
    if (!first) first = &f;
    refs.push_back(f.ref);
  }
};

// Evidence of a fault always counts (docs/validator.md, "Evidence of a fault"): a record whose
// status is fail, error or timeout, of any kind, weighs on every node it names (its host and
// rank, its group, a link's ends; FaultRecord::nodes), whatever else passed, with a reason that
// cites the record's file and line. An error makes those nodes inconclusive (evidence.error), a
// timeout too (evidence.timeout); a failure quarantines the node it names alone (stage.fail) and
// makes the nodes of a failure it cannot pin on one of them inconclusive
// (evidence.fail_unattributed). A record a rule of its own kind judges (wrong data, a rank that
// never arrived, a failed burn, membw or health record, a lost GPU) keeps that rule's reason. A
// run whose meta.json says it went well while such records are inside is an input reason too.
class FaultEvidenceRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.fault_evidence"; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const Evidence& evidence = context.evidence;
    // One reason per node, check, GPU and kind of fault; it cites every record of the group.
    using Key = std::tuple<NodeId, std::string, int, ReasonCode>;
    std::map<Key, Group> groups;
    // Per records file whose run says it went well: the records of a fault inside, per node and
    // check.
    std::map<std::tuple<std::uint32_t, NodeId, std::string>, Group> disagreeing;
    for (const auto& f : evidence.faults) {
      const bool disagrees = evidence.files[f.ref.file].says_it_went_well();
      for (const NodeId node : f.nodes) {
        if (disagrees) disagreeing[{f.ref.file, node, f.check}].add(f);
        if (!judged_elsewhere(f, node)) groups[{node, f.check, f.gpu.index, code_of(f)}].add(f);
      }
    }
    for (const auto& [key, group] : groups) {
      const auto& [node, check, gpu, code] = key;
      out.push_back(fault(evidence, node, code, group));
    }
    for (const auto& [key, group] : disagreeing) {
      const auto& [file, node, check] = key;
      out.push_back(disagreement(evidence, file, node, group));
    }
    unrecorded_faults(evidence, out);
  }

 private:
  // The other way round: a run whose meta.json says a stage failed, erred or timed out, while no
  // record of its file is of a fault. What went wrong left no record, so what the file holds is
  // not the whole account: none of its nodes is certified on it.
  void unrecorded_faults(const Evidence& evidence, std::vector<Finding>& out) const {
    std::set<std::uint32_t> with_faults;
    for (const auto& f : evidence.faults)
      with_faults.insert(f.ref.file);
    for (std::uint32_t file = 0; file < evidence.files.size(); ++file) {
      const InputFileSummary& summary = evidence.files[file];
      if (summary.meta_fault_status.empty() || with_faults.count(file)) continue;
      for (const NodeId node : evidence.file_nodes[file]) {
        Finding f;
        f.code = "input.meta_fault_unrecorded";
        f.node = node;
        f.check = "input";
        f.rule = std::string(id());
        f.evidence.push_back({file, 0});
        f.fields = {{"file", summary.meta_path},
                    {"status", summary.meta_fault_status},
                    {"records", summary.path}};
        out.push_back(std::move(f));
      }
    }
  }

  static bool judged_elsewhere(const FaultRecord& f, NodeId node) {
    using K = FaultRecord::KindRule;
    return f.judged_by == K::kAll || (f.judged_by == K::kHost && node == f.host);
  }

  static ReasonCode code_of(const FaultRecord& f) {
    switch (f.status) {
      case RecordStatus::kTimeout:
        return "evidence.timeout";
      case RecordStatus::kFail:
        return f.nodes.size() == 1 ? ReasonCode("stage.fail")
                                   : ReasonCode("evidence.fail_unattributed");
      default:
        return "evidence.error";
    }
  }

  // "records.jsonl:43, run r1": where the first record is, and how many more there are.
  static std::string cited(const Evidence& evidence, const FaultRecord& first, std::size_t count) {
    std::string where =
        fmt::format("{}:{}, run {}", evidence.files.at(first.ref.file).path, first.ref.line,
                    evidence.text(evidence.runs.at(first.run).run_id));
    if (count > 1) where += fmt::format(", and {} more such record(s)", count - 1);
    return where;
  }

  Finding fault(const Evidence& evidence, NodeId node, ReasonCode code, const Group& group) const {
    const FaultRecord& first = *group.first;
    Finding f = gpu_finding(evidence, code, id(), first.check, node, first.gpu, first.ref);
    f.evidence = group.refs;
    const std::string reason = first.reason.empty() ? "no reason given" : first.reason;
    const std::string where = cited(evidence, first, group.refs.size());
    // The catalog's evidence.* messages have no {where}: the GPU goes into the detail.
    const std::string gpu =
        first.gpu.index >= 0 ? fmt::format(" for gpu {}", first.gpu.index) : std::string();
    if (code == "stage.fail") {
      set_field(f, "detail", fmt::format("{} ({})", reason, where));
    } else {
      set_field(f, "detail", fmt::format("{} ({}): {}", gpu, where, reason));
      set_field(f, "nodes", std::to_string(first.nodes.size()));
    }
    return f;
  }

  Finding disagreement(const Evidence& evidence, std::uint32_t file, NodeId node,
                       const Group& group) const {
    const InputFileSummary& summary = evidence.files.at(file);
    Finding f;
    f.code = "input.meta_disagrees";
    f.node = node;
    // The fault's check, not "input": the fault is what to act on first, not this reason.
    f.check = group.first->check;
    f.rule = std::string(id());
    f.evidence = group.refs;
    f.fields = {{"file", summary.meta_path},
                {"detail", fmt::format("a {} record says {} ({})", evidence.text(group.first->kind),
                                       to_string(group.first->status),
                                       cited(evidence, *group.first, group.refs.size()))}};
    return f;
  }
};

}  // namespace

std::unique_ptr<Rule> make_fault_evidence_rule() {
  return std::make_unique<FaultEvidenceRule>();
}

}  // namespace commcert::rules
