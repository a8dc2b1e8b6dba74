#include "validate/detail/evidence_merge.hpp"

#include <algorithm>
#include <iterator>

namespace commcert::detail {
namespace {

// A part's ids translated into the whole's: interning the part's strings in the part's order
// gives each the id reading the lines one after another would have given it.
class IdMap {
 public:
  IdMap(Evidence& into, const Evidence& part) {
    nodes_.reserve(part.nodes.size());
    for (StringId id = 0; id < part.nodes.size(); ++id)
      nodes_.push_back(into.nodes.intern(part.nodes.at(id)));
    strings_.reserve(part.strings.size());
    for (StringId id = 0; id < part.strings.size(); ++id)
      strings_.push_back(into.strings.intern(part.strings.at(id)));
    runs_.reserve(part.runs.size());
    for (const RunEvidence& run : part.runs)
      runs_.push_back(into.run_index(part.text(run.run_id)));
    groups_.reserve(part.groups.size());
    for (const auto& members : part.groups)
      groups_.push_back(into.group_index(node_list(members)));
  }

  [[nodiscard]] NodeId node(NodeId id) const { return id == kNoString ? id : nodes_[id]; }
  [[nodiscard]] StringId string(StringId id) const { return id == kNoString ? id : strings_[id]; }
  [[nodiscard]] std::uint32_t run(std::uint32_t index) const {
    return index == kNoString ? index : runs_[index];
  }
  [[nodiscard]] std::uint32_t group(std::uint32_t index) const {
    return index == kNoString ? index : groups_[index];
  }
  void nodes(std::vector<NodeId>& ids) const {
    for (NodeId& id : ids)
      id = node(id);
  }
  // A list kept ascending by id: the whole's ids order the names differently.
  void sorted_nodes(std::vector<NodeId>& ids) const {
    nodes(ids);
    std::sort(ids.begin(), ids.end());
  }
  [[nodiscard]] std::vector<NodeId> node_list(std::vector<NodeId> ids) const {
    nodes(ids);
    return ids;
  }
  void gpu(GpuKey& key) const { key.uuid = string(key.uuid); }
  void xids(std::vector<XidEvidence>& xids) const {
    for (auto& xid : xids)
      xid.time = string(xid.time);
  }

 private:
  std::vector<NodeId> nodes_;
  std::vector<StringId> strings_;
  std::vector<std::uint32_t> runs_;
  std::vector<std::uint32_t> groups_;
};

template <typename T, typename Translate>
void append(std::vector<T>& into, std::vector<T>& part, Translate&& translate) {
  if (into.capacity() < into.size() + part.size()) {  // grow by half at least, not by a chunk
    into.reserve(std::max(into.size() + part.size(), into.capacity() + into.capacity() / 2));
  }
  for (T& item : part) {
    translate(item);
    into.push_back(std::move(item));
  }
}

void append_runs(Evidence& into, Evidence& part, const IdMap& ids) {
  // A later run record replaces an earlier one's rank map, as when read in order.
  for (std::size_t i = 0; i < part.runs.size(); ++i) {
    RunEvidence& run = part.runs[i];
    if (!run.has_rank_map) continue;
    RunEvidence& whole = into.runs[ids.run(static_cast<std::uint32_t>(i))];
    whole.has_rank_map = true;
    whole.ref = run.ref;
    whole.rank_nodes = ids.node_list(std::move(run.rank_nodes));
  }
}

void append_collectives(Evidence& into, Evidence& part, const IdMap& ids) {
  const auto wrong_offset = static_cast<std::uint32_t>(into.wrong_ranks.size());
  append(into.wrong_ranks, part.wrong_ranks, [&](WrongRank& w) { w.node = ids.node(w.node); });
  append(into.collectives, part.collectives, [&](CollectiveEvidence& c) {
    c.run = ids.run(c.run);
    c.writer = ids.node(c.writer);
    c.collective = ids.string(c.collective);
    c.straggler = ids.node(c.straggler);
    c.wrong_begin += wrong_offset;
    c.group = ids.group(c.group);
    c.reason = ids.string(c.reason);
  });
  append(into.ci_misses, part.ci_misses, [&](CiMiss& m) {
    m.run = ids.run(m.run);
    m.collective = ids.string(m.collective);
    m.stopped_by = ids.string(m.stopped_by);
  });
  append(into.timeouts, part.timeouts, [&](TimeoutEvidence& t) {
    t.run = ids.run(t.run);
    t.writer = ids.node(t.writer);
    for (auto& [rank, node] : t.not_arrived)
      node = ids.node(node);
    ids.sorted_nodes(t.members);
  });
  const auto stage_error = [&](StageError& e) {
    e.run = ids.run(e.run);
    e.node = ids.node(e.node);
  };
  append(into.collective_errors, part.collective_errors, stage_error);
  append(into.health_failures, part.health_failures, stage_error);
}

void append_node_records(Evidence& into, Evidence& part, const IdMap& ids) {
  append(into.burns, part.burns, [&](BurnEvidence& r) {
    r.node = ids.node(r.node);
    ids.gpu(r.gpu);
    r.kernel = ids.string(r.kernel);
    for (auto& t : r.throttle)
      t.reason = ids.string(t.reason);
    ids.xids(r.xids);
  });
  append(into.membws, part.membws, [&](MembwEvidence& r) {
    r.node = ids.node(r.node);
    ids.gpu(r.gpu);
  });
  append(into.gpu_health, part.gpu_health, [&](GpuHealthEvidence& r) {
    r.node = ids.node(r.node);
    ids.gpu(r.gpu);
    for (StringId& event : r.clock_events)
      event = ids.string(event);
    ids.xids(r.xids);
  });
  append(into.ib_ports, part.ib_ports, [&](IbPortEvidence& r) {
    r.node = ids.node(r.node);
    r.device = ids.string(r.device);
    r.state = ids.string(r.state);
    r.phys_state = ids.string(r.phys_state);
    r.link_layer = ids.string(r.link_layer);
    for (auto& [counter, value] : r.counters)
      counter = ids.string(counter);
  });
  append(into.node_health, part.node_health,
         [&](NodeHealthEvidence& r) { r.node = ids.node(r.node); });
}

void append_pair_records(Evidence& into, Evidence& part, const IdMap& ids) {
  append(into.links, part.links, [&](LinkEvidence& r) {
    r.run = ids.run(r.run);
    r.writer = ids.node(r.writer);
    r.transport = ids.string(r.transport);
    r.memory = ids.string(r.memory);
    r.test = ids.string(r.test);
    r.from = ids.node(r.from);
    r.to = ids.node(r.to);
    for (auto& counter : r.counters) {
      counter.node = ids.node(counter.node);
      counter.device = ids.string(counter.device);
      counter.counter = ids.string(counter.counter);
    }
  });
  append(into.p2p, part.p2p, [&](P2pEvidence& r) {
    r.run = ids.run(r.run);
    r.node = ids.node(r.node);
    ids.gpu(r.gpu);
    r.path = ids.string(r.path);
    r.method = ids.string(r.method);
    r.access = ids.string(r.access);
  });
}

void append_faults_and_issues(Evidence& into, Evidence& part, const IdMap& ids) {
  append(into.faults, part.faults, [&](FaultRecord& f) {
    f.run = ids.run(f.run);
    f.kind = ids.string(f.kind);
    ids.gpu(f.gpu);
    ids.nodes(f.named);
    f.group = ids.group(f.group);
    ids.nodes(f.culprits);
    f.host = ids.node(f.host);
  });
  append(into.issues, part.issues, [&](InputIssue& issue) {
    issue.node = ids.node(issue.node);
    issue.run = ids.run(issue.run);
  });
}

}  // namespace

void append_evidence(Evidence& into, Evidence&& part) {
  const IdMap ids(into, part);
  append_runs(into, part, ids);
  append_collectives(into, part, ids);
  append_node_records(into, part, ids);
  append_pair_records(into, part, ids);
  append_faults_and_issues(into, part, ids);
}

}  // namespace commcert::detail
