#include <algorithm>
#include <map>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/units.hpp"
#include "validate/checks.hpp"
#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

bool measured(RecordStatus status) {
  return status == RecordStatus::kOk || status == RecordStatus::kFail;
}

// Why a subject has no positive evidence, in the order a technician should read it.
struct Cause {
  ReasonCode code = "evidence.missing";
  std::string detail;
  std::optional<EvidenceRef> ref;
};

Cause cause_of(RecordStatus status, const std::string& reason, EvidenceRef ref) {
  switch (status) {
    case RecordStatus::kError:
      return {"evidence.error", ": " + reason, ref};
    case RecordStatus::kSkipped:
      return {"evidence.skipped", ": " + reason, ref};
    case RecordStatus::kTimeout:
      return {"evidence.timeout", ": " + reason, ref};
    default:
      return {};
  }
}

// A DCGM diagnostic certifies a GPU's health only from the run level the baseline requires up:
// a quick deployment check (level 1) says nothing of the GPU's memory or compute. A record that
// does not say its level is below every level. Only a passing record is refused here; a failure
// at any level stays a failure (rule.health_stage_fail).
constexpr GpuCountLimit kDcgmMinLevel{"dcgm_min_level", 3};
constexpr GpuCountLimit kEvidenceLimits[] = {kDcgmMinLevel};

template <typename Record>
std::optional<Cause> below_required_level(const JudgeContext& context, const Record& r) {
  if constexpr (std::is_same_v<Record, GpuHealthEvidence>) {
    const std::int64_t required = context.baseline.gpu_health.count(kDcgmMinLevel);
    if (!r.from_dcgm || r.status != RecordStatus::kOk || r.dcgm_level.value_or(0) >= required)
      return std::nullopt;
    const std::string ran =
        r.dcgm_level ? fmt::format("level {}", *r.dcgm_level) : std::string("no stated level");
    return Cause{"evidence.dcgm_level",
                 fmt::format(": DCGM passed it at {}, the baseline requires level {} "
                             "(checks.health.gpu.{})",
                             ran, required, kDcgmMinLevel.key),
                 r.ref};
  } else {
    (void)context;
    (void)r;
    return std::nullopt;
  }
}

std::string index_list(const std::vector<int>& indices) {
  std::vector<std::string> parts;
  parts.reserve(indices.size());
  for (const int i : indices)
    parts.push_back(std::to_string(i));
  return join(parts);
}

// What the baseline judges of a collective: the scopes with a busbw bound, from which size, and
// whether a measurement counts only when checked.
struct JudgedRange {
  bool require_check = true;
  std::uint64_t min_bytes = 0;
  std::set<CollectiveScope> bounded;

  [[nodiscard]] bool in_range(const CollectiveEvidence& c) const {
    return bounded.empty() || (bounded.count(c.scope) > 0 && c.bytes >= min_bytes);
  }
  // A one-rank communicator has no bus bandwidth to judge (metrics.cpp).
  [[nodiscard]] bool judgeable(const CollectiveEvidence& c) const {
    return in_range(c) && (bounded.empty() || c.nranks != 1);
  }
  [[nodiscard]] std::string scope_names() const {
    std::vector<std::string> scopes;
    scopes.reserve(bounded.size());
    for (const auto scope : bounded)
      scopes.emplace_back(scope == CollectiveScope::kNode ? "node" : "cluster");
    return join(scopes, " or ");
  }
};

JudgedRange judged_range(const JudgeContext& context, const std::string& check) {
  JudgedRange range;
  const CollectiveSpec* spec = context.baseline.collective(check);
  range.require_check = spec ? spec->require_check : true;
  range.min_bytes = spec ? spec->min_bytes : CollectiveSpec{}.min_bytes;
  for (const auto scope : {CollectiveScope::kNode, CollectiveScope::kCluster}) {
    const auto name = scope == CollectiveScope::kNode ? "node" : "cluster";
    if (context.baseline.bound(fmt::format("{}.busbw.{}", check, name)))
      range.bounded.insert(scope);
  }
  return range;
}

// What a communicator's (or a node's) collective records show.
struct Coverage {
  bool any = false, measured = false, checked = false, judgeable = false;
  // Why checked measurements were not judgeable, for the reason's message: one was in the
  // judged scopes and sizes but ran on one rank; one was in a judged scope at all.
  bool one_rank_in_range = false, in_judged_scope = false;
  std::uint64_t largest = 0;  // of the checked measurements in a judged scope
  std::optional<EvidenceRef> skipped_ref;
  std::string skipped;
};

// Per (run, communicator): its coverage and one of its records.
using CommunicatorCoverage = std::map<std::pair<std::uint32_t, std::uint64_t>,
                                      std::pair<Coverage, const CollectiveEvidence*>>;

// Aggregated per communicator of a run first: a cluster-wide run has thousands of records for
// the same participants.
CommunicatorCoverage coverage_per_communicator(const Evidence& evidence,
                                               std::optional<StringId> collective_id,
                                               const JudgedRange& range) {
  CommunicatorCoverage groups;
  if (!collective_id) return groups;
  for (const auto& c : evidence.collectives) {
    // Pairs are localization evidence, not a check's: judged against each other only.
    if (c.collective != *collective_id || c.scope == CollectiveScope::kOther ||
        c.scope == CollectiveScope::kPairs || c.scope == CollectiveScope::kGroups) {
      continue;
    }
    auto& [g, sample] = groups[{c.run, Evidence::communicator(c)}];
    sample = &c;
    g.any = true;
    if (measured(c.status)) {
      g.measured = true;
      if (c.checked || !range.require_check) {
        g.checked = true;
        if (range.bounded.empty() || range.bounded.count(c.scope) > 0) {
          g.in_judged_scope = true;
          g.largest = std::max(g.largest, c.bytes);
        }
        if (range.judgeable(c)) {
          g.judgeable = true;
        } else if (range.in_range(c)) {
          g.one_rank_in_range = true;
        }
      }
    } else if (g.skipped.empty() && c.reason != kNoString) {
      g.skipped = std::string(evidence.text(c.reason));
      g.skipped_ref = c.ref;
    }
  }
  return groups;
}

struct NodeCoverage {
  std::unordered_map<NodeId, Coverage> nodes;
  std::unordered_map<NodeId, std::set<std::uint32_t>> runs_of;
  std::unordered_set<NodeId> named_only;  // participants the run does not show took part
};

NodeCoverage coverage_per_node(const Evidence& evidence, const CommunicatorCoverage& groups,
                               const std::unordered_set<NodeId>& confirmed) {
  NodeCoverage out;
  for (const auto& [key, value] : groups) {
    const auto& [g, sample] = value;
    const RunEvidence& run = evidence.runs[key.first];
    for (const NodeId node : evidence.participants(*sample)) {
      // With a rank map, only the nodes it lists took part in the run; without one, only
      // the nodes that speak for themselves somewhere.
      const bool took_part = run.has_rank_map
                                 ? std::binary_search(run.nodes.begin(), run.nodes.end(), node)
                                 : confirmed.count(node) > 0;
      if (!took_part) {
        out.named_only.insert(node);
        continue;
      }
      Coverage& n = out.nodes[node];
      n.any |= g.any;
      n.measured |= g.measured;
      n.checked |= g.checked;
      n.judgeable |= g.judgeable;
      n.one_rank_in_range |= g.one_rank_in_range;
      n.in_judged_scope |= g.in_judged_scope;
      n.largest = std::max(n.largest, g.largest);
      if (n.skipped.empty()) {
        n.skipped = g.skipped;
        n.skipped_ref = g.skipped_ref;
      }
      out.runs_of[node].insert(key.first);
    }
  }
  return out;
}

// Timeouts and errors of runs that involve a node explain its gaps best; their runs are added to
// the runs of the nodes they involve.
struct RunFailures {
  std::unordered_map<std::uint32_t, const TimeoutEvidence*> timeout_of_run;
  std::unordered_map<std::uint32_t, const StageError*> error_of_run;
};

RunFailures collective_run_failures(const Evidence& evidence, const std::string& check,
                                    std::unordered_map<NodeId, std::set<std::uint32_t>>& runs_of) {
  RunFailures out;
  for (const auto& t : evidence.timeouts) {
    if (check_of_operation(t.operation) == check ||
        check_of_operation(t.operation) == "collective") {
      out.timeout_of_run.try_emplace(t.run, &t);
      for (const NodeId node : evidence.runs[t.run].nodes)
        runs_of[node].insert(t.run);
    }
  }
  for (const auto& e : evidence.collective_errors) {
    out.error_of_run.try_emplace(e.run, &e);
    for (const NodeId node : evidence.runs[e.run].nodes)
      runs_of[node].insert(e.run);
    runs_of[e.node].insert(e.run);
  }
  return out;
}

// Why checked measurements of a node could not be judged.
std::string not_judgeable_detail(const Coverage& n, const JudgedRange& range) {
  if (n.one_rank_in_range) {
    return fmt::format(
        ": its measurements at >= {} in scope {} ran on a one-rank communicator, which has "
        "no bus bandwidth (run two or more ranks per communicator: one per GPU, or -g N)",
        format_bytes(range.min_bytes), range.scope_names());
  }
  if (!n.in_judged_scope) {
    return fmt::format(
        ": the baseline judges busbw in scope {}; no checked measurement here "
        "is in that scope",
        range.scope_names());
  }
  return fmt::format(
      ": the baseline judges busbw at >= {} in scope {}; the largest checked "
      "measurement there is {}",
      format_bytes(range.min_bytes), range.scope_names(), format_bytes(n.largest));
}

// Why a node has no judgeable measurement of a collective, the likeliest cause first.
Cause collective_gap(const Evidence& evidence, const CheckInfo& info, const Coverage& n,
                     bool named_only, const TimeoutEvidence* timeout, const StageError* error,
                     const JudgedRange& range) {
  const auto run_name = [&](std::uint32_t run) {
    return std::string(evidence.text(evidence.runs[run].run_id));
  };
  if (!n.any && named_only) {
    return {"evidence.missing",
            fmt::format(" ({} records name this node only inside other nodes' records: no "
                        "rank map of their run lists it and it wrote none there)",
                        info.collective),
            std::nullopt};
  }
  if (timeout) {
    return {"evidence.timeout",
            fmt::format("; run {} timed out: {}", run_name(timeout->run), timeout->reason),
            timeout->ref};
  }
  if (error) {
    return {"evidence.error", fmt::format(" (run {}): {}", run_name(error->run), error->reason),
            error->ref};
  }
  if (n.measured && !n.checked) {
    return {"evidence.unchecked", " (the sweep ran with -c 0)", std::nullopt};
  }
  if (n.checked) return {"evidence.not_judgeable", not_judgeable_detail(n, range), std::nullopt};
  if (n.any) {
    return {"evidence.skipped", n.skipped.empty() ? std::string() : ": " + n.skipped,
            n.skipped_ref};
  }
  return {"evidence.missing", fmt::format(" (no {} record names this node)", info.collective),
          std::nullopt};
}

// The one rule every verdict obeys (docs/validator.md, "The rule"), enforced here and nowhere
// else: a node is certified only when each check its suite requires has at least one finished,
// well-formed record attributed to that node with positive evidence. This rule names what is
// missing and, where a record says so, why (an error, a skipped stage, a timeout). Evidence
// must also be judgeable: a size and scope the baseline bounds, verified outputs, and a figure
// for every metric group the baseline bounds. Evidence is attributed only to nodes that speak
// for themselves (a record they wrote, or a rank map entry), and evidence from a run that never
// finished certifies no node unless certify --allow-partial says to judge it anyway.
// (Well-formed: the reader turns a record whose fields are missing, of the wrong type or
// contradictory into lost input, which makes the nodes it was about inconclusive.)
class RequiredEvidenceRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.required_evidence"; }
  std::span<const GpuCountLimit> gpu_limits() const override { return kEvidenceLimits; }

  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    unfinished_runs(context, out);
    const std::unordered_set<NodeId> confirmed = speaking_for_themselves(context.evidence);
    for (const auto& check : context.required) {
      const CheckInfo* info = find_check(check);
      if (!info) continue;
      switch (info->kind) {
        case CheckKind::kCollective:
          collective(context, *info, confirmed, out);
          break;
        case CheckKind::kBurn:
          per_gpu(context, check, context.evidence.burns, out);
          break;
        case CheckKind::kMembw:
          per_gpu(context, check, context.evidence.membws, out);
          break;
        case CheckKind::kHealthGpu:
          per_gpu(context, check, context.evidence.gpu_health, out);
          break;
        case CheckKind::kHealthIb:
          ib_ports(context, out);
          break;
        case CheckKind::kHealthNode:
          node_record(context, out);
          break;
        case CheckKind::kLinks:
          links(context, out);
          break;
        case CheckKind::kP2p:
          p2p(context, out);
          break;
      }
    }
  }

 private:
  Finding gap(NodeId node, std::string_view check, const Cause& cause) const {
    Finding f;
    f.code = cause.code;
    f.node = node;
    f.check = std::string(check);
    f.rule = std::string(id());
    if (cause.ref) f.evidence.push_back(*cause.ref);
    f.fields = {{"where", ""}, {"check", std::string(check)}, {"detail", cause.detail}};
    return f;
  }

  // Nodes that wrote a record or that a rank map names. A node named only inside other nodes'
  // records (a `group_nodes`, `wrong_ranks`, `straggler` or `not_arrived` entry) never said it
  // took part: no positive evidence is attributed to it.
  static std::unordered_set<NodeId> speaking_for_themselves(const Evidence& evidence) {
    std::unordered_set<NodeId> out;
    // A run that never finished speaks for nobody (its nodes are inconclusive anyway).
    const auto finished = [&](const EvidenceRef& ref) {
      const auto& file = evidence.files[ref.file];
      return file.unfinished.empty() || file.partial_allowed;
    };
    for (const auto& run : evidence.runs) {
      if (run.has_rank_map && finished(run.ref))
        out.insert(run.rank_nodes.begin(), run.rank_nodes.end());
    }
    const auto add = [&](const auto& records, auto node_of) {
      for (const auto& r : records) {
        if (finished(r.ref)) out.insert(node_of(r));
      }
    };
    add(evidence.collectives, [](const CollectiveEvidence& r) { return r.writer; });
    add(evidence.timeouts, [](const TimeoutEvidence& r) { return r.writer; });
    add(evidence.collective_errors, [](const StageError& r) { return r.node; });
    add(evidence.health_failures, [](const StageError& r) { return r.node; });
    add(evidence.burns, [](const BurnEvidence& r) { return r.node; });
    add(evidence.membws, [](const MembwEvidence& r) { return r.node; });
    add(evidence.gpu_health, [](const GpuHealthEvidence& r) { return r.node; });
    add(evidence.ib_ports, [](const IbPortEvidence& r) { return r.node; });
    add(evidence.node_health, [](const NodeHealthEvidence& r) { return r.node; });
    add(evidence.links, [](const LinkEvidence& r) { return r.writer; });
    add(evidence.p2p, [](const P2pEvidence& r) { return r.node; });
    return out;
  }

  // Evidence of a run that never finished (meta.json or suite.json still says running) makes
  // every node it is about inconclusive; with --allow-partial it is judged, with a warning.
  void unfinished_runs(const JudgeContext& context, std::vector<Finding>& out) const {
    const Evidence& evidence = context.evidence;
    for (std::uint32_t file = 0; file < evidence.files.size(); ++file) {
      const auto& summary = evidence.files[file];
      if (summary.unfinished.empty()) continue;
      for (const NodeId node : evidence.file_nodes[file]) {
        Finding f;
        f.code = summary.partial_allowed ? ReasonCode("input.run_partial")
                                         : ReasonCode("input.run_unfinished");
        f.node = node;
        f.check = "input";
        f.rule = std::string(id());
        f.evidence.push_back({file, 0});
        f.fields = {{"file", summary.path}, {"detail", summary.unfinished}};
        out.push_back(std::move(f));
      }
    }
  }

  // A health stage that failed before it looked at any component explains every health gap.
  static std::unordered_map<NodeId, Cause> health_failures(const Evidence& evidence) {
    std::unordered_map<NodeId, Cause> out;
    for (const auto& f : evidence.health_failures) {
      out.try_emplace(f.node, cause_of(f.status, f.reason, f.ref));
    }
    return out;
  }

  // Bounded metric groups of a check, with a label for messages.
  static std::map<std::string, std::string> bounded_groups(const JudgeContext& context,
                                                           std::string_view check) {
    std::map<std::string, std::vector<std::string>> labels;
    for (const auto& [metric, bound] : context.baseline.bounds) {
      const auto info = metric_info(metric);
      if (info && info->check == check) labels[info->group].push_back(info->label);
    }
    std::map<std::string, std::string> groups;
    for (const auto& [group, list] : labels) {
      groups[group] = list.size() == 1 ? list.front() : fmt::format("one of: {}", join(list));
    }
    return groups;
  }

  void collective(const JudgeContext& context, const CheckInfo& info,
                  const std::unordered_set<NodeId>& confirmed, std::vector<Finding>& out) const {
    const Evidence& evidence = context.evidence;
    const std::string check(info.id);
    const JudgedRange range = judged_range(context, check);
    NodeCoverage coverage = coverage_per_node(
        evidence,
        coverage_per_communicator(evidence, evidence.strings.find(info.collective), range),
        confirmed);
    const RunFailures failures = collective_run_failures(evidence, check, coverage.runs_of);
    for (const NodeId node : context.nodes) {
      const Coverage n = coverage.nodes.count(node) ? coverage.nodes[node] : Coverage{};
      if (n.judgeable) continue;
      const TimeoutEvidence* timeout = nullptr;
      const StageError* error = nullptr;
      for (const std::uint32_t run : coverage.runs_of[node]) {
        if (!timeout && failures.timeout_of_run.count(run))
          timeout = failures.timeout_of_run.at(run);
        if (!error && failures.error_of_run.count(run)) error = failures.error_of_run.at(run);
      }
      out.push_back(gap(node, check,
                        collective_gap(evidence, info, n, coverage.named_only.count(node) > 0,
                                       timeout, error, range)));
    }
  }

  template <typename Record>
  void per_gpu(const JudgeContext& context, std::string_view check,
               const std::vector<Record>& records, std::vector<Finding>& out) const {
    const bool health = check == "health.gpu";
    auto failures = health_failures(context.evidence);
    const auto positive = [&](RecordStatus s) {
      return health ? s == RecordStatus::kOk : measured(s);
    };
    struct NodeState {
      std::set<int> good;
      std::map<int, Cause> causes;  // by GPU index; -1 for records naming no GPU
    };
    std::unordered_map<NodeId, NodeState> nodes;
    for (const auto& r : records) {
      NodeState& n = nodes[r.node];
      if (const auto refused = below_required_level(context, r)) {
        n.causes.try_emplace(r.gpu.index, *refused);
      } else if (positive(r.status) && r.gpu.index >= 0) {
        n.good.insert(r.gpu.index);
      } else if (!positive(r.status)) {
        n.causes.try_emplace(r.gpu.index, cause_of(r.status, r.reason, r.ref));
      }
    }
    // Which bounded figure groups each (node, GPU) has.
    const auto groups = bounded_groups(context, check);
    std::map<std::tuple<NodeId, int, std::string>, bool> figures;
    for (const auto& series : context.metrics.series()) {
      if (series.info.check != check || !groups.count(series.info.group)) continue;
      if (!context.baseline.bound(series.info.id)) continue;
      for (const auto& s : series.samples)
        figures[{s.node, s.gpu.index, series.info.group}] = true;
    }

    const int expected = context.baseline.gpus_per_node.value_or(0);
    for (const NodeId node : context.nodes) {
      const NodeState n = nodes.count(node) ? nodes[node] : NodeState{};
      std::vector<int> missing;
      for (int i = 0; i < expected; ++i) {
        if (!n.good.count(i)) missing.push_back(i);
      }
      if (expected == 0 && n.good.empty()) missing.push_back(-1);
      if (!missing.empty()) {
        // The first missing GPU's own record explains the gap, else a record naming no GPU;
        // where the baseline counts no GPUs, any GPU's record of the node does.
        Cause cause = expected == 0 && !n.causes.empty() ? n.causes.begin()->second : Cause{};
        for (const int i : missing) {
          for (const int key : {i, -1}) {
            if (const auto it = n.causes.find(key);
                it != n.causes.end() && cause.code == "evidence.missing") {
              cause = it->second;
            }
          }
        }
        if (health && cause.code == "evidence.missing" && failures.count(node)) {
          cause = failures[node];
        }
        const std::string which =
            expected == 0 ? std::string(n.causes.empty() ? " (no record for this node)" : "")
            : missing.size() == static_cast<std::size_t>(expected)
                ? fmt::format(" for all {} GPUs", expected)
                : fmt::format(" for gpu {} (of {})", index_list(missing), expected);
        cause.detail = which + cause.detail;
        out.push_back(gap(node, check, cause));
      }
      for (const auto& [group, label] : groups) {
        std::vector<int> lacking;
        for (const int i : n.good) {
          if (!figures.count({node, i, group})) lacking.push_back(i);
        }
        if (lacking.empty()) continue;
        Finding f = gap(
            node, check,
            {"evidence.no_figure", fmt::format(" for gpu {}", index_list(lacking)), std::nullopt});
        f.fields.emplace_back("metric", label);
        out.push_back(std::move(f));
      }
    }
  }

  // A node needs one measured link test with any partner; the link rules judge how it went.
  // Without one, the first record that names the node and measured nothing says why. Over
  // verbs every NIC is a rail of its own: a node tested over verbs needs a measurement on each
  // of the RDMA ports its baseline says it has, or its untested NICs would pass unseen (a job
  // of one process per node drives one NIC). A verbs record without a rail counts for no rail.
  void links(const JudgeContext& context, std::vector<Finding>& out) const {
    const Evidence& evidence = context.evidence;
    std::unordered_set<NodeId> measured_nodes;
    std::unordered_map<NodeId, std::set<int>> verbs_rails;  // every node measured over verbs
    std::unordered_map<NodeId, EvidenceRef> railless;       // its first verbs record without rail
    std::unordered_map<NodeId, Cause> causes;
    for (const auto& r : evidence.links) {
      if (r.measured()) {
        for (const NodeId node : {r.from, r.to}) {
          measured_nodes.insert(node);
          if (evidence.text(r.transport) != "verbs") continue;
          auto& rails = verbs_rails[node];
          if (r.rail >= 0) {
            rails.insert(r.rail);
          } else {
            railless.try_emplace(node, r.ref);
          }
        }
        continue;
      }
      for (const NodeId node : {r.from, r.to}) {
        if (node != kNoString) causes.try_emplace(node, cause_of(r.status, r.reason, r.ref));
      }
    }
    const int ports = context.baseline.ib_ports_per_node.value_or(0);
    for (const NodeId node : context.nodes) {
      if (!measured_nodes.count(node)) {
        out.push_back(gap(node, "links", causes.count(node) ? causes[node] : Cause{}));
        continue;
      }
      const auto rails = verbs_rails.find(node);
      if (rails == verbs_rails.end() || ports <= 0) continue;
      std::vector<int> untested;
      for (int rail = 0; rail < ports; ++rail) {
        if (!rails->second.count(rail)) untested.push_back(rail);
      }
      if (untested.empty()) continue;
      Cause cause = causes.count(node) ? causes[node] : Cause{};
      std::string why = "run one process per NIC (one per GPU)";
      if (const auto it = railless.find(node); it != railless.end()) {
        why = fmt::format("a verbs record without a rail ({}:{}) counts for none; {}",
                          evidence.files.at(it->second.file).path, it->second.line, why);
        if (!cause.ref) cause.ref = it->second;
      }
      cause.detail =
          fmt::format(" over verbs for rail {} (of {}): {}", index_list(untested), ports, why) +
          (cause.code == "evidence.missing" ? std::string() : cause.detail);
      out.push_back(gap(node, "links", cause));
    }
  }

  // A node needs one measured p2p record, and one measured GPU pair unless its baseline says it
  // has one GPU: a pair record that says `skipped: one GPU` (or no peer access) certifies no
  // pair. The p2p rules judge how the measurements went.
  void p2p(const JudgeContext& context, std::vector<Finding>& out) const {
    const Evidence& evidence = context.evidence;
    const bool pairs_required = context.baseline.gpus_per_node.value_or(2) >= 2;
    std::unordered_set<NodeId> measured_nodes;
    std::unordered_set<NodeId> pair_nodes;
    std::unordered_map<NodeId, Cause> causes;
    std::unordered_map<NodeId, Cause> pair_causes;
    for (const auto& r : evidence.p2p) {
      const bool pair = evidence.text(r.path) == "gpu_gpu";
      if (r.measured()) {
        measured_nodes.insert(r.node);
        if (pair) pair_nodes.insert(r.node);
        continue;
      }
      causes.try_emplace(r.node, cause_of(r.status, r.reason, r.ref));
      if (pair) {
        Cause cause = cause_of(r.status, r.reason, r.ref);
        cause.detail = " for GPU pairs" + cause.detail;
        pair_causes.try_emplace(r.node, std::move(cause));
      }
    }
    for (const NodeId node : context.nodes) {
      if (!measured_nodes.count(node)) {
        out.push_back(gap(node, "p2p", causes.count(node) ? causes[node] : Cause{}));
      } else if (pairs_required && !pair_nodes.count(node)) {
        Cause cause = pair_causes.count(node)
                          ? pair_causes[node]
                          : Cause{"evidence.missing", " for GPU pairs (no gpu_gpu record)", {}};
        out.push_back(gap(node, "p2p", cause));
      }
    }
  }

  void ib_ports(const JudgeContext& context, std::vector<Finding>& out) const {
    const Evidence& evidence = context.evidence;
    struct NodeState {
      std::set<std::pair<StringId, int>> good;
      std::optional<Cause> cause;
    };
    std::unordered_map<NodeId, NodeState> nodes;
    for (const auto& r : evidence.ib_ports) {
      if (!context.baseline.ib_health.judges(evidence.text(r.link_layer))) continue;
      NodeState& n = nodes[r.node];
      if (r.status == RecordStatus::kOk) {
        n.good.insert({r.device, r.port});
      } else if (!n.cause) {
        n.cause = cause_of(r.status, r.reason, r.ref);
      }
    }
    const auto groups = bounded_groups(context, "health.ib");
    std::set<std::tuple<NodeId, StringId, int>> rated;
    if (const auto* series = context.metrics.find("health.ib.rate")) {
      for (const auto& s : series->samples)
        rated.insert({s.node, s.device, s.port});
    }
    const int expected = context.baseline.ib_ports_per_node.value_or(0);
    auto failures = health_failures(evidence);
    for (const NodeId node : context.nodes) {
      const NodeState n = nodes.count(node) ? nodes[node] : NodeState{};
      const auto have = static_cast<int>(n.good.size());
      if (have < std::max(expected, 1)) {
        Cause cause = n.cause.value_or(Cause{});
        if (cause.code == "evidence.missing" && failures.count(node)) cause = failures[node];
        cause.detail =
            fmt::format(" ({} of {} ports reported){}", have, std::max(expected, 1), cause.detail);
        out.push_back(gap(node, "health.ib", cause));
      }
      if (groups.count("health.ib.rate")) {
        std::vector<std::string> lacking;
        for (const auto& [device, port] : n.good) {
          if (!rated.count({node, device, port}))
            lacking.push_back(fmt::format("{} port {}", evidence.text(device), port));
        }
        if (!lacking.empty()) {
          Finding f =
              gap(node, "health.ib", {"evidence.no_figure", " for " + join(lacking), std::nullopt});
          f.fields.emplace_back("metric", "port rate");
          out.push_back(std::move(f));
        }
      }
    }
  }

  void node_record(const JudgeContext& context, std::vector<Finding>& out) const {
    auto failures = health_failures(context.evidence);
    std::unordered_map<NodeId, std::optional<Cause>> nodes;  // nullopt: a good record exists
    for (const auto& r : context.evidence.node_health) {
      auto [it, inserted] = nodes.try_emplace(r.node, cause_of(r.status, r.reason, r.ref));
      if (r.status == RecordStatus::kOk) it->second.reset();
    }
    for (const NodeId node : context.nodes) {
      const auto it = nodes.find(node);
      if (it != nodes.end() && !it->second) continue;
      Cause cause = it != nodes.end() ? *it->second : Cause{};
      if (cause.code == "evidence.missing" && failures.count(node)) cause = failures[node];
      if (cause.code == "evidence.missing") cause.detail = " (no node health record)";
      out.push_back(gap(node, "health.node", cause));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_required_evidence_rule() {
  return std::make_unique<RequiredEvidenceRule>();
}

}  // namespace commcert::rules
