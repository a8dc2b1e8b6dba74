#include "core/printable.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace commcert {
namespace {

// The code point of a Unicode control that `printable` escapes and that starts at text[at], or
// 0: the C1 controls (U+0080-U+009F; NEL is a line break to some readers, CSI starts a terminal
// sequence), the line and paragraph separators (U+2028, U+2029) and the bidirectional
// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which make a line read
// differently from what it holds. Only valid UTF-8 sequences match; other bytes stay as they are.
char32_t unicode_control_at(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) {
    return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0U;
  };
  if (byte(0) == 0xc2 && byte(1) >= 0x80 && byte(1) <= 0x9f) return byte(1);
  if (byte(0) != 0xe2 || (byte(2) & 0xc0U) != 0x80) return 0;
  const char32_t code = 0x2000U + ((byte(1) & 0x3fU) << 6U) + (byte(2) & 0x3fU);
  const bool line = code == 0x2028 || code == 0x2029;
  const bool bidi = (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
  return (byte(1) == 0x80 || byte(1) == 0x81) && (line || bidi) ? code : 0;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (const char32_t code = unicode_control_at(text, i)) {
      out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(code));
      i += code < 0x100 ? 1 : 2;
    } else if (byte >= 0x20 && byte != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  return out;
}

}  // namespace commcert
