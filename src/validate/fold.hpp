#pragma once

#include <span>
#include <string>
#include <vector>

#include "validate/evidence.hpp"
#include "validate/finding.hpp"
#include "validate/verdict.hpp"

namespace commcert {

// Folds findings into one verdict per node, fail closed:
//   quarantined  any finding whose catalog effect is quarantine (severity: the worst);
//   inconclusive otherwise, any inconclusive finding (missing, unreadable or unattributable
//                evidence); the rule that demands evidence for required checks runs first;
//   certified    otherwise; warnings are kept as reasons but change nothing.
// Every node in `nodes` gets a verdict, findings or not.
[[nodiscard]] std::vector<NodeVerdict> fold(const Evidence& evidence, std::vector<Finding> findings,
                                            std::span<const NodeId> nodes,
                                            std::span<const std::string> required);

// A finding rendered with its catalog row.
[[nodiscard]] Reason to_reason(const Evidence& evidence, const Finding& finding);

}  // namespace commcert
