#include "validate/evidence.hpp"

#include <algorithm>

namespace commcert {
namespace {

void sort_unique(std::vector<NodeId>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

}  // namespace

std::uint32_t Evidence::run_index(std::string_view run_id) {
  const StringId id = strings.intern(run_id);
  if (const auto it = run_by_id_.find(id); it != run_by_id_.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(runs.size());
  runs.emplace_back().run_id = id;
  run_by_id_.emplace(id, index);
  return index;
}

std::span<const NodeId> Evidence::participants(const CollectiveEvidence& record) const {
  if (record.group != kNoString) return groups[record.group];
  if (record.scope == CollectiveScope::kNode) return std::span(&record.writer, 1);
  return runs.at(record.run).nodes;
}

std::uint64_t Evidence::communicator(const CollectiveEvidence& record) {
  if (record.group != kNoString) return (std::uint64_t{1} << 32) | record.group;
  if (record.scope == CollectiveScope::kNode) return (std::uint64_t{2} << 32) | record.writer;
  return 0;  // the run's: the caller groups by run too
}

std::uint32_t Evidence::group_index(std::vector<NodeId> members) {
  sort_unique(members);
  const auto [it, inserted] =
      group_by_nodes_.try_emplace(std::move(members), static_cast<std::uint32_t>(groups.size()));
  if (inserted) groups.push_back(it->first);
  return it->second;
}

namespace {

// A run without its run record: fall back to the nodes its records name, which did take part
// (fail closed: nodes nobody names get no evidence from it).
void settle_run_nodes(Evidence& evidence) {
  std::vector<std::vector<NodeId>> observed(evidence.runs.size());
  for (const auto& c : evidence.collectives) {
    if (c.group != kNoString) {
      observed[c.run].insert(observed[c.run].end(), evidence.groups[c.group].begin(),
                             evidence.groups[c.group].end());
    }
    if (c.scope == CollectiveScope::kNode) continue;
    observed[c.run].push_back(c.writer);
    if (c.straggler != kNoString) observed[c.run].push_back(c.straggler);
    for (const auto& wrong : evidence.wrong_ranks_of(c))
      observed[c.run].push_back(wrong.node);
  }
  for (const auto& t : evidence.timeouts) {
    observed[t.run].push_back(t.writer);
    observed[t.run].insert(observed[t.run].end(), t.members.begin(), t.members.end());
  }
  for (const auto& e : evidence.collective_errors)
    observed[e.run].push_back(e.node);
  for (std::size_t i = 0; i < evidence.runs.size(); ++i) {
    auto& run = evidence.runs[i];
    run.nodes = run.has_rank_map ? run.rank_nodes : std::move(observed[i]);
    sort_unique(run.nodes);
  }
}

// The nodes each file holds evidence on (Evidence::file_nodes).
void index_file_nodes(Evidence& evidence) {
  evidence.file_nodes.assign(evidence.files.size(), {});
  const auto add = [&evidence](const EvidenceRef& ref, NodeId node) {
    if (node != kNoString) evidence.file_nodes[ref.file].push_back(node);
  };
  for (const auto& run : evidence.runs) {
    for (const NodeId node : run.nodes)
      add(run.ref, node);
  }
  // A run's participants are added once per file, not once per record: a cluster-wide sweep
  // has thousands of records times thousands of nodes.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> file_runs;    // (file, run)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> file_groups;  // (file, group)
  for (const auto& c : evidence.collectives) {
    if (c.group != kNoString) {
      file_groups.emplace_back(c.ref.file, c.group);
    } else if (c.scope == CollectiveScope::kNode) {
      add(c.ref, c.writer);
    } else {
      file_runs.emplace_back(c.ref.file, c.run);
    }
  }
  std::sort(file_groups.begin(), file_groups.end());
  file_groups.erase(std::unique(file_groups.begin(), file_groups.end()), file_groups.end());
  for (const auto& [file, group] : file_groups) {
    for (const NodeId node : evidence.groups[group])
      evidence.file_nodes[file].push_back(node);
  }
  for (const auto& t : evidence.timeouts)
    file_runs.emplace_back(t.ref.file, t.run);
  std::sort(file_runs.begin(), file_runs.end());
  file_runs.erase(std::unique(file_runs.begin(), file_runs.end()), file_runs.end());
  for (const auto& [file, run] : file_runs) {
    for (const NodeId node : evidence.runs[run].nodes)
      evidence.file_nodes[file].push_back(node);
  }
  for (const auto& e : evidence.collective_errors)
    add(e.ref, e.node);
  for (const auto& r : evidence.burns)
    add(r.ref, r.node);
  for (const auto& r : evidence.membws)
    add(r.ref, r.node);
  for (const auto& r : evidence.gpu_health)
    add(r.ref, r.node);
  for (const auto& r : evidence.ib_ports)
    add(r.ref, r.node);
  for (const auto& r : evidence.node_health)
    add(r.ref, r.node);
  for (const auto& r : evidence.p2p)
    add(r.ref, r.node);
  for (const auto& r : evidence.links) {
    add(r.ref, r.from);
    if (r.to != kNoString) add(r.ref, r.to);
  }
  for (auto& nodes_in_file : evidence.file_nodes)
    sort_unique(nodes_in_file);
}

}  // namespace

void Evidence::finish() {
  settle_run_nodes(*this);
  resolve_faults();
  index_file_nodes(*this);
}

void Evidence::resolve_faults() {
  for (auto& f : faults) {
    const RunEvidence& run = runs.at(f.run);
    std::vector<NodeId> members = f.named;
    if (f.group != kNoString)
      members.insert(members.end(), groups[f.group].begin(), groups[f.group].end());
    if (f.whole_run) members.insert(members.end(), run.nodes.begin(), run.nodes.end());
    if (run.has_rank_map) {
      for (const int rank : f.ranks) {
        if (static_cast<std::size_t>(rank) < run.rank_nodes.size())
          members.push_back(run.rank_nodes[static_cast<std::size_t>(rank)]);
      }
    }
    sort_unique(members);
    std::vector<NodeId> culprits = f.culprits;
    sort_unique(culprits);
    const bool everyone =
        f.blames_all_or_none && members.size() > 1 &&
        std::includes(culprits.begin(), culprits.end(), members.begin(), members.end());
    f.nodes = culprits.empty() || everyone ? std::move(members) : std::move(culprits);
  }
}

}  // namespace commcert
