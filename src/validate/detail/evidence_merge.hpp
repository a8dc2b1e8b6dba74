#pragma once

#include "validate/evidence.hpp"

namespace commcert::detail {

// Appends what `part` read (the lines after everything `into` holds) to `into`, translating its
// node, string, run and group ids, so that `into` ends as it would have had it read those lines
// itself: the same ids, the same order. `part` is left empty or moved from. Both must be
// unfinished (Evidence::finish() not yet called); `part` holds no files of its own.
void append_evidence(Evidence& into, Evidence&& part);

}  // namespace commcert::detail
