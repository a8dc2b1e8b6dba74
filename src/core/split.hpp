#pragma once

#include <string_view>
#include <vector>

namespace commcert {

// Splits `text` at every `separator`, keeping empty pieces ("a,,b" -> "a", "", "b"; "" -> one
// empty piece), so that a caller can report an empty list entry instead of passing over it.
[[nodiscard]] inline std::vector<std::string_view> split_at(std::string_view text,
                                                            char separator = ',') {
  std::vector<std::string_view> pieces;
  while (true) {
    const auto at = text.find(separator);
    pieces.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return pieces;
    text.remove_prefix(at + 1);
  }
}

}  // namespace commcert
