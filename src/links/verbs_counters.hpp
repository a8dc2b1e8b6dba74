#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/link.hpp"

namespace commcert {

// Port error counters around the verbs tests of one round (docs/links.md, "Port counters").

// The width in bits the InfiniBand PortCounters attribute gives an error counter (4, 8 or 16);
// sysfs shows that value, which stops at its maximum instead of wrapping. 0 for a counter
// outside that list (the data and packet counters are 64-bit).
[[nodiscard]] int error_counter_bits(std::string_view name);

// The error counters of `after` that sit at their maximum: they may have grown during the test
// without showing it, so their delta is only a lower bound.
[[nodiscard]] std::vector<std::string> saturated_counters(
    const std::map<std::string, std::uint64_t>& after);

// One end's deltas as the line exchanged between the two ends of a pair, and back. decode
// returns nullopt for an empty line (the end read nothing) and throws std::invalid_argument
// for anything else that is not such a line.
[[nodiscard]] std::string encode_counter_end(const LinkCounterDeltas& end);
[[nodiscard]] std::optional<LinkCounterDeltas> decode_counter_end(std::string_view text);

}  // namespace commcert
