#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace commcert::topology_detail {

// Calls fn(line_number, line) for every line of `text`, numbered from 1, without its '\n' or a
// '\r' before it (a file written on Windows reads the same).
template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  std::size_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(++number, line);
    start = end + 1;
  }
}

// "origin:line", how every error names where it is.
[[nodiscard]] std::string line_origin(std::string_view origin, std::size_t line);

// Part of an input line for an error message: at most 80 characters, control characters
// escaped, so a message stays one line whatever the input holds.
[[nodiscard]] std::string excerpt(std::string_view text);

// validate_node_name, with its message kept on one line: a name read from a file may hold a
// newline, which the message quotes.
void validate_name_on_one_line(std::string_view name, std::string_view origin);

// `text` without the spaces and tabs at either end.
[[nodiscard]] std::string_view trim_blanks(std::string_view text);

}  // namespace commcert::topology_detail
