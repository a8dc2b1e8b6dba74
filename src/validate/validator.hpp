#pragma once

#include <vector>

#include "topology/topology.hpp"
#include "validate/baseline.hpp"
#include "validate/evidence.hpp"
#include "validate/suite.hpp"
#include "validate/verdict.hpp"

namespace commcert {

// Judges the evidence of one fleet (every node in it, against one baseline): builds the metric
// table, runs every rule of the registry, folds the findings into node verdicts. The required
// checks are the suite's when one is given, else the baseline's. A `topology` (optional) names
// the switch of a suspect switch path (docs/localization.md); without one the groups are named by
// their nodes.
[[nodiscard]] FleetVerdict judge(const Evidence& evidence, const Baseline& baseline,
                                 const Suite* suite, std::vector<InputNote> notes = {},
                                 const Topology* topology = nullptr);

}  // namespace commcert
