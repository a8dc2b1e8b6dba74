#include "topology/detail/input_lines.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/node_identity.hpp"
#include "core/printable.hpp"

namespace commcert::topology_detail {

std::string line_origin(std::string_view origin, std::size_t line) {
  return fmt::format("{}:{}", origin, line);
}

std::string excerpt(std::string_view text) {
  constexpr std::size_t kLongest = 80;
  if (text.size() <= kLongest) return printable(text);
  return printable(text.substr(0, kLongest)) + "...";
}

void validate_name_on_one_line(std::string_view name, std::string_view origin) {
  try {
    validate_node_name(name, origin);
  } catch (const UsageError& error) {
    throw UsageError(printable(error.what()));
  }
}

std::string_view trim_blanks(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

}  // namespace commcert::topology_detail
