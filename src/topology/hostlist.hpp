#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// The most names one hostlist expression may expand to, and by default the most all hostlists
// of one topology file may expand to together. The largest Slurm clusters hold tens of thousands
// of nodes; a million names is far above them and still a bounded amount of memory (tens of
// MiB), so `gpu[1-999999999]` written by mistake is refused before anything is allocated.
inline constexpr std::size_t kMaxHostlistNames = 1'000'000;

// Expands a hostlist expression as Slurm writes one (docs/topology.md): comma-separated terms,
// each a name with any number of bracketed ranges, `gpu[001-032]`, `node[1-3,7,10-12]`. Several
// brackets in one term expand as a cross product, the leftmost varying slowest (`a[1-2]b[3-4]`
// is a1b3, a1b4, a2b3, a2b4). A range is zero-padded to the width its lower bound is written
// in, as Slurm pads it: `[001-010]` gives 001 to 010, `[8-10]` gives 8, 9, 10. Names come out
// exactly as written, in order, duplicates kept, and each must be a valid node name
// (validate_node_name): they are the names records and Slurm use.
//
// Throws UsageError "ORIGIN: hostlist 'EXPRESSION': WHY" for an empty or malformed expression
// (unbalanced or nested brackets, an empty or reversed range, a bound that is not a number) or
// one that would expand to more than `limit` names; the count is known before any name is made.
[[nodiscard]] std::vector<std::string> expand_hostlist(std::string_view expression,
                                                       std::string_view origin,
                                                       std::size_t limit = kMaxHostlistNames);

}  // namespace commcert
