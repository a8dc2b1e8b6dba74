#include <algorithm>

#include "records/collective.hpp"
#include "validate/checks.hpp"
#include "validate/detail/record_common.hpp"

namespace commcert::detail {
namespace {

using R = CollectiveRecord;
using M = CollectiveResult;
using T = CollectiveTimeoutRecord;

CollectiveScope parse_scope(std::string_view text) {
  if (text == R::kScopeCluster) return CollectiveScope::kCluster;
  if (text == R::kScopeNode) return CollectiveScope::kNode;
  if (text == R::kScopePairs) return CollectiveScope::kPairs;
  if (text == R::kScopeGroups) return CollectiveScope::kGroups;
  return CollectiveScope::kOther;
}

void read_wrong_ranks(ParseState& state, od::value& value) {
  using W = WrongRankEntry;
  for_each_element(array(value, M::kWrongRanks), M::kWrongRanks, [&](od::value& element) {
    WrongRank w;
    for_each_field(object_of(element), M::kWrongRanks, [&](std::string_view k, od::value& v) {
      if (k == W::kRank) {
        w.rank = small_int(v, {M::kWrongRanks, W::kRank, true});
      } else if (k == W::kHost) {
        w.node = state.evidence.nodes.intern(node_name(v, {M::kWrongRanks, W::kHost, true}));
      } else if (k == W::kWrongElements) {
        w.elements = integer(v, {M::kWrongRanks, W::kWrongElements, true});
      } else if (k == W::kWrongIterations) {
        w.iterations = integer(v, {M::kWrongRanks, W::kWrongIterations, true});
      }
    });
    if (w.node == kNoString) record_error({M::kWrongRanks, W::kHost, true}, "missing");
    state.wrong.push_back(w);
  });
}

void read_not_arrived(ParseState& state, od::value& value, TimeoutEvidence& timeout) {
  using N = NotArrivedEntry;
  for_each_element(array(value, T::kNotArrived), T::kNotArrived, [&](od::value& element) {
    int rank = -1;
    NodeId node = kNoString;
    for_each_field(object_of(element), T::kNotArrived, [&](std::string_view k, od::value& v) {
      if (k == N::kRank) {
        rank = small_int(v, {T::kNotArrived, N::kRank, true});
      } else if (k == N::kHost) {
        node = state.evidence.nodes.intern(node_name(v, {T::kNotArrived, N::kHost, true}));
      }
    });
    if (node == kNoString) record_error({T::kNotArrived, N::kHost, true}, "missing");
    timeout.not_arrived.emplace_back(rank, node);
  });
}

// What the rules read of a collective record, measured or timed out; the rest (times,
// iteration statistics) is skipped.
struct CollectiveFields {
  std::optional<std::string_view> collective;
  CollectiveScope scope = CollectiveScope::kCluster;
  bool in_place = false;
  bool check = false;
  bool pair_list = false;
  int round = -1;
  std::uint32_t nranks = 0;
  std::optional<std::uint64_t> bytes;
  std::optional<double> busbw;
  double median_s = 0;
  int straggler_rank = -1;
  NodeId straggler = kNoString;
  double lead_s = 0;
  TimeoutEvidence timeout;
  bool has_group = false;
  bool has_scope = false;
  bool has_wrong_elements = false;
  std::optional<std::int64_t> wrong_elements;
  std::optional<double> target_ci_pct;  // `adaptive`: what the user asked for, and what came
  std::optional<double> achieved_ci_pct;
  std::string_view stopped_by;

  void read_adaptive(od::value& value) {
    using A = AdaptiveStop;
    if (is_null(value, M::kAdaptive)) return;
    for_each_field(object_of(value), M::kAdaptive, [&](std::string_view k, od::value& v) {
      if (k == A::kTargetCiPct) {
        target_ci_pct = number(v, {M::kAdaptive, A::kTargetCiPct});
      } else if (k == A::kAchievedCiPct) {
        achieved_ci_pct = optional_number(v, {M::kAdaptive, A::kAchievedCiPct});
      } else if (k == A::kStoppedBy) {
        stopped_by = string(v, {M::kAdaptive, A::kStoppedBy});
      }
    });
  }

  void field(ParseState& state, std::string_view key, od::value& value) {
    Evidence& evidence = state.evidence;
    switch (key_id(key)) {
      case key_id(R::kCollective):
        if (key == R::kCollective) collective = string(value, key);
        break;
      case key_id(R::kScope):
        if (key != R::kScope) break;
        scope = parse_scope(string(value, key));
        has_scope = true;
        break;
      case key_id(R::kInPlace):
        if (key == R::kInPlace) in_place = boolean(value, key);
        break;
      case key_id(M::kCheck):
        if (key == M::kCheck) check = boolean(value, key);
        break;
      case key_id(R::kBytes):
        if (key == R::kBytes) bytes = take(value.get_uint64(), key);
        break;
      case key_id(R::kNranks):
        if (key == R::kNranks)
          nranks = static_cast<std::uint32_t>(std::max(0, small_int(value, key)));
        break;
      case key_id(R::kPairList):
        if (key == R::kPairList) pair_list = boolean(value, key);
        break;
      case key_id(R::kRound):
        if (key == R::kRound && !is_null(value, key)) round = small_int(value, key);
        break;
      case key_id(M::kBusbw):
        if (key == M::kBusbw) busbw = number(value, key);
        break;
      case key_id(M::kRankTime):
        // null in records read in from other tools (`source`), which print no per-rank times.
        if (key != M::kRankTime || is_null(value, key)) break;
        for_each_field(object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k == RankTimeSpread::kMedianS)
            median_s = number(v, {M::kRankTime, RankTimeSpread::kMedianS});
        });
        break;
      case key_id(M::kStraggler):
        if (key != M::kStraggler || is_null(value, key)) break;
        for_each_field(object_of(value), key, [&](std::string_view k, od::value& v) {
          using S = CollectiveStraggler;
          if (k == S::kRank) {
            straggler_rank = small_int(v, {M::kStraggler, S::kRank});
          } else if (k == S::kHost) {
            straggler = evidence.nodes.intern(node_name(v, {M::kStraggler, S::kHost}));
          } else if (k == S::kLeadS) {
            lead_s = number(v, {M::kStraggler, S::kLeadS});
          }
        });
        break;
      case key_id(M::kWrongRanks):
        if (key == M::kWrongRanks) read_wrong_ranks(state, value);
        break;
      case key_id(M::kAdaptive):
        if (key == M::kAdaptive) read_adaptive(value);
        break;
      case key_id(M::kWrongElements):
        if (key != M::kWrongElements) break;
        has_wrong_elements = true;
        wrong_elements = optional_count(value, key);
        break;
      case key_id(T::kOperation):
        if (key == T::kOperation) timeout.operation = string(value, key);
        break;
      case key_id(T::kTimeoutS):
        if (key == T::kTimeoutS) timeout.timeout_s = number(value, key);
        break;
      case key_id(T::kAttributed):
        if (key == T::kAttributed) timeout.attributed = boolean(value, key);
        break;
      case key_id(T::kNotArrived):
        if (key == T::kNotArrived) read_not_arrived(state, value, timeout);
        break;
      case key_id(R::kGroupNodes):
        if (key != R::kGroupNodes) break;
        state.group_nodes.clear();
        has_group = true;
        for_each_element(array(value, key), key, [&](od::value& element) {
          state.group_nodes.push_back(
              evidence.nodes.intern(node_name(element, {R::kGroupNodes, "", true})));
        });
        if (state.group_nodes.empty()) record_error(key, "empty");
        break;
      case key_id(T::kRankStates):
        if (key != T::kRankStates) break;
        for_each_element(array(value, key), key, [&](od::value& element) {
          for_each_field(object_of(element), key, [&](std::string_view k, od::value& v) {
            if (k == RankStateEntry::kHost)
              timeout.members.push_back(evidence.nodes.intern(node_name(v, k)));
          });
        });
        break;
      default:
        break;
    }
  }
};

// The check a collective's fault is about: collective.<name> for a collective the validator
// knows, else "collective".
std::string check_of(std::string_view collective) {
  std::string check = "collective." + std::string(collective);
  return find_check(check) ? check : std::string("collective");
}

void store_timeout(ParseState& state, CollectiveFields& f, const CommonFields& c, EvidenceRef ref) {
  // rule.collective_timeout judges it: the ranks that never arrived when peers could say so,
  // else every node of the run and of its rank states.
  FaultRecord& fault = state.add_fault(
      c, ref, R::kKind, check_of(f.timeout.operation.substr(0, f.timeout.operation.find(' '))));
  fault.judged_by = FaultRecord::KindRule::kAll;
  fault.named = f.timeout.members;
  fault.ranks.clear();
  fault.whole_run = true;
  if (f.timeout.attributed) {
    for (const auto& [rank, node] : f.timeout.not_arrived)
      fault.culprits.push_back(node);
  }
  TimeoutEvidence& timeout = f.timeout;
  timeout.ref = ref;
  timeout.run = state.evidence.run_index(*c.run_id);
  timeout.writer = state.evidence.nodes.intern(*c.host);
  timeout.scope = f.scope;
  timeout.reason = c.reason;
  std::sort(timeout.members.begin(), timeout.members.end());
  timeout.members.erase(std::unique(timeout.members.begin(), timeout.members.end()),
                        timeout.members.end());
  state.evidence.timeouts.push_back(std::move(timeout));
}

// A measurement's figures, its check and its wrong ranks; the errors of a record that lacks them.
void read_measurement(ParseState& state, const CollectiveFields& f, const CommonFields& c,
                      EvidenceRef ref, CollectiveEvidence& record) {
  Evidence& evidence = state.evidence;
  if (!f.bytes) record_error(R::kBytes, "missing");
  if (!f.busbw) record_error(M::kBusbw, "missing");
  // Who a measurement speaks for is never guessed (docs/validator.md, "The rule"): a record
  // without its scope, or a node-scope record without the node it measured (process 0
  // writes every node's record), cannot be attributed.
  if (!f.has_scope) record_error(R::kScope, "missing");
  if (f.scope == CollectiveScope::kNode && !f.has_group) record_error(R::kGroupNodes, "missing");
  // Checked outputs come with their count of wrong elements; one wrong element is a failure
  // whatever the status says.
  if (f.check && !f.wrong_elements) {
    record_error(M::kWrongElements, f.has_wrong_elements ? "null in a checked record" : "missing");
  }
  if (f.wrong_elements && *f.wrong_elements > 0 && record.status == RecordStatus::kOk) {
    record.status = RecordStatus::kFail;
    if (c.reason.empty()) {
      record.reason = evidence.strings.intern(
          fmt::format("status ok but {} wrong elements", *f.wrong_elements));
    }
  }
  record.checked = f.check;
  record.busbw_bytes_per_s = *f.busbw;
  record.straggler = f.straggler;
  record.straggler_rank = f.straggler_rank;
  record.straggler_lead_fraction =
      f.median_s > 0 ? static_cast<float>(f.lead_s / f.median_s) : 0.0f;
  record.wrong_begin = static_cast<std::uint32_t>(evidence.wrong_ranks.size());
  record.wrong_count = static_cast<std::uint32_t>(state.wrong.size());
  evidence.wrong_ranks.insert(evidence.wrong_ranks.end(), state.wrong.begin(), state.wrong.end());
  if (f.target_ci_pct && !(f.achieved_ci_pct && *f.achieved_ci_pct <= *f.target_ci_pct)) {
    evidence.ci_misses.push_back({ref, record.run, record.collective, record.bytes,
                                  *f.target_ci_pct, f.achieved_ci_pct,
                                  evidence.strings.intern(f.stopped_by)});
  }
}

// The fault a failed or wrong collective is.
void add_collective_fault(ParseState& state, const CollectiveFields& f, const CommonFields& c,
                          EvidenceRef ref, const CollectiveEvidence& record) {
  Evidence& evidence = state.evidence;
  // rule.collective_wrong_data judges it: the nodes of its wrong ranks, or every node of its
  // communicator when it names none or all of them. Its writer is not its subject.
  FaultRecord& fault = state.add_fault(c, ref, R::kKind, check_of(*f.collective));
  fault.status = record.status;
  fault.judged_by = FaultRecord::KindRule::kAll;
  fault.named.clear();
  fault.ranks.clear();
  fault.group = record.group;
  if (record.group == kNoString && record.scope == CollectiveScope::kNode) {
    fault.named.push_back(record.writer);
  } else if (record.group == kNoString) {
    fault.whole_run = true;
  }
  for (const auto& w : state.wrong)
    fault.culprits.push_back(w.node);
  fault.blames_all_or_none = true;
  if (record.reason != kNoString) fault.reason = evidence.text(record.reason);
}

}  // namespace

void parse_collective(ParseState& state, od::object& object, EvidenceRef ref) {
  Evidence& evidence = state.evidence;
  CollectiveFields f;
  state.wrong.clear();
  const CommonFields c = state.read(
      object, [&](std::string_view key, od::value& value) { f.field(state, key, value); });

  if (*c.status == RecordStatus::kTimeout) {
    store_timeout(state, f, c, ref);
    return;
  }
  const std::uint32_t run = evidence.run_index(*c.run_id);
  const NodeId writer = evidence.nodes.intern(*c.host);
  if (*c.status == RecordStatus::kError) {
    evidence.collective_errors.push_back(
        {ref, run, writer, std::string(c.reason), RecordStatus::kError});
    // An error names the node that saw it (its host and rank) and the group it ran in.
    FaultRecord& fault =
        state.add_fault(c, ref, R::kKind, f.collective ? check_of(*f.collective) : "collective");
    if (f.has_group) fault.group = evidence.group_index(state.group_nodes);
    return;
  }
  if (!f.collective) record_error(R::kCollective, "missing");
  CollectiveEvidence record;
  record.ref = ref;
  record.run = run;
  record.writer = writer;
  record.collective = evidence.strings.intern(*f.collective);
  record.status = *c.status;
  record.scope = f.scope;
  record.in_place = f.in_place;
  record.pair_list = f.pair_list;
  record.round = f.round;
  record.nranks = f.nranks;
  record.bytes = f.bytes.value_or(0);
  if (record.measured()) read_measurement(state, f, c, ref, record);
  if (f.has_group) {
    // The records of one group follow each other: skip the lookup while it repeats.
    if (state.group_nodes != state.last_group_nodes) {
      state.last_group_nodes = state.group_nodes;
      state.last_group = evidence.group_index(state.group_nodes);
    }
    record.group = state.last_group;
  }
  if (!c.reason.empty()) record.reason = evidence.strings.intern(c.reason);
  if (is_fault(record.status)) add_collective_fault(state, f, c, ref, record);
  evidence.collectives.push_back(record);
}

}  // namespace commcert::detail
