#include "records/stage.hpp"
#include "validate/detail/record_common.hpp"

namespace commcert::detail {
namespace {

// kind "run" is defined in records/stage.hpp (RunRecord); these are the names inside each entry
// of its rank map (core/rank_identity.cpp writes them) that the validator reads.
constexpr const char* kRanks = RunRecord::kRanks;
constexpr const char* kRank = "rank";
constexpr const char* kNode = "node";

}  // namespace

void parse_run(ParseState& state, od::object& object, EvidenceRef ref) {
  Evidence& evidence = state.evidence;
  std::vector<std::pair<int, std::string_view>> ranks;
  const CommonFields c = state.read(object, [&](std::string_view key, od::value& value) {
    if (key != kRanks) return;
    for_each_element(array(value, key), key, [&](od::value& element) {
      int rank = -1;
      std::string_view node;
      for_each_field(object_of(element), {kRanks, "", true}, [&](std::string_view k, od::value& v) {
        if (k == kRank) {
          rank = small_int(v, {kRanks, kRank, true});
        } else if (k == kNode) {
          node = string(v, {kRanks, kNode, true});
        }
      });
      if (rank < 0 || node.empty()) record_error({kRanks, "", true}, "entry without rank or node");
      check_node_name(node, {kRanks, kNode, true});
      ranks.emplace_back(rank, node);
    });
  });
  // Every rank once, 0 to n-1: a rank given twice leaves another without a node, and the run's
  // evidence is only changed by a rank map that passed.
  std::vector<bool> given(ranks.size(), false);
  for (const auto& [rank, node] : ranks) {
    if (static_cast<std::size_t>(rank) >= ranks.size()) record_error({kRanks, kRank, true}, "gap");
    if (given[static_cast<std::size_t>(rank)]) {
      record_error({kRanks, kRank, true}, fmt::format("rank {} given twice", rank));
    }
    given[static_cast<std::size_t>(rank)] = true;
  }
  auto& run = evidence.runs[evidence.run_index(*c.run_id)];
  run.has_rank_map = true;
  run.ref = ref;
  run.rank_nodes.assign(ranks.size(), kNoString);
  for (const auto& [rank, node] : ranks)
    run.rank_nodes[static_cast<std::size_t>(rank)] = evidence.nodes.intern(node);
  // A run record of a fault names every node of its rank map.
  if (is_fault(*c.status)) state.add_fault(c, ref, RunRecord::kKind, "run").whole_run = true;
}

}  // namespace commcert::detail
