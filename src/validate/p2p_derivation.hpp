#pragma once

#include <map>
#include <set>
#include <string>

#include "validate/baseline.hpp"
#include "validate/evidence.hpp"

namespace commcert {

// `checks.p2p` limits from a healthy fleet's p2p records (docs/validator.md "Deriving a
// baseline"): each floor is the lowest median, over the series it applies to, of the figures of
// nodes not in `broken`, less `margin_pct`; the pair latency ceiling the highest median plus it.
// Series are GPU pairs (per method, access and direction; every copy method shares one floor),
// host<->GPU from the GPU's own socket and from the other one, and copies within a GPU. A limit
// with no figure is left as `spec` has it. Writes a comment per derived key into `comments`.
// Returns whether any figure was found.
bool derive_p2p_limits(const Evidence& evidence, const std::set<std::string>& broken,
                       double margin_pct, P2pSpec& spec,
                       std::map<std::string, std::string>& comments);

}  // namespace commcert
