#pragma once

#include <string>
#include <string_view>

namespace commcert {

// `text` with every control character (below 0x20, and 0x7f) written as an escape: \n, \r, \t,
// else \xNN; a backslash stays as it is. For human-readable lines that show names and messages
// taken from input files: a node name holding a newline must not split a summary into two
// lines, nor an escape sequence rewrite the terminal. Text without control characters (every
// valid node name) comes back unchanged.
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace commcert
