#pragma once

#include <string>
#include <string_view>

namespace commcert {

// `text` with every control character (below 0x20, and 0x7f) written as an escape: \n, \r, \t,
// else \xNN; the C1 controls (U+0080-U+009F), the line and paragraph separators (U+2028,
// U+2029) and the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) as \uNNNN;
// a backslash stays as it is. For human-readable lines that show names and messages taken from
// input files: a node name holding a newline must not split a summary into two lines, an escape
// sequence rewrite the terminal, nor a right-to-left override make a line read otherwise than it
// is. Text without control characters (every valid node name) comes back unchanged.
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace commcert
