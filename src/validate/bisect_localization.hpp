#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "validate/baseline.hpp"
#include "validate/evidence.hpp"
#include "validate/localization.hpp"

namespace commcert {

// Bisection read from records (docs/localization.md): after a cluster-scope shortfall,
// `commcert run` measures disjoint node groups round by round (`sweep --groups`, records of
// scope `groups` whose `round` is the bisection's round). Which groups a round holds is decided
// by bisect_faults; here the records of a run are replayed through it, so the groups `commcert
// run` measures next and the nodes the validator blames come from one decision procedure.

// One collective's figure for a group at the judged size.
struct GroupFigure {
  std::string collective;
  std::uint64_t bytes = 0;
  double gb_per_s = 0;
  double limit_gb_per_s = 0;
  EvidenceRef ref;
  [[nodiscard]] bool passed() const { return gb_per_s >= limit_gb_per_s; }
};

// A group of one round: it passes when every collective meets its limit.
struct GroupJudgement {
  std::vector<GroupFigure> figures;
  [[nodiscard]] bool passed() const;
};

struct RunBisection {
  std::uint32_t run = 0;
  std::vector<std::string> nodes;  // the run's nodes by name: bisect_faults' node i is nodes[i]
  BisectionResult result;          // node indices into `nodes`
  // (round, node indices ascending) -> what was measured.
  std::map<std::pair<int, std::vector<int>>, GroupJudgement> groups;
  std::vector<std::string> collectives;  // those measured in groups, by name
  std::string problem;  // non-empty: the groups cannot be judged (no limit), said in words

  // The next round to measure, as `sweep --groups` takes it ("a,b;c,d"); empty when finished.
  [[nodiscard]] std::string pending_spec() const;
  // What the bisection did and found, for the verdict's notes and the text summary.
  [[nodiscard]] std::string summary(const Evidence& evidence) const;
  // The figures that blamed `node` (an index into `nodes`): its groups with known-good nodes.
  [[nodiscard]] std::vector<std::pair<std::vector<int>, const GroupJudgement*>> blame(
      int node) const;
};

struct BisectLocalization {
  std::vector<RunBisection> runs;  // every run with records of scope `groups`
  // (run, check) whose cluster-scope shortfall a conclusive bisection explains.
  std::set<std::pair<std::uint32_t, std::string>> explained;
};

// The limit a group's figure must reach for a collective: the floor its cluster-scope figure is
// judged by (and the regression limit, where the baseline has one), and the pairs' absolute
// floor, whichever is highest; nullopt when the baseline has none of them.
[[nodiscard]] std::optional<double> group_limit_gb_per_s(const Baseline& baseline,
                                                         std::string_view collective);

// Replays the bisection of one run (`run` indexes Evidence::runs) over its nodes; its groups
// records so far answer the rounds, the first round without them is `result.pending`.
[[nodiscard]] RunBisection replay_bisection(const Evidence& evidence, const Baseline& baseline,
                                            std::uint32_t run);

// Every run with groups records, replayed.
[[nodiscard]] BisectLocalization localize_bisection(const Evidence& evidence,
                                                    const Baseline& baseline);

}  // namespace commcert
