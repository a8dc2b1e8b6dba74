#include "report/markup.hpp"

#include <fmt/format.h>

namespace commcert {

std::string escape_markup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string escape_markdown(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\t':
        out += ' ';
        break;
      case '\r':
        if (i + 1 < text.size() && text[i + 1] == '\n') ++i;  // CRLF is one line break
        out += "<br>";
        break;
      case '\n':
        out += "<br>";
        break;
      case '|':
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '~':
        out += '\\';
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string format_gb_per_s(std::optional<double> bytes_per_s) {
  return bytes_per_s ? fmt::format("{:.2f} GB/s", *bytes_per_s / 1e9) : std::string("–");
}

std::string format_number(std::optional<double> value, int decimals) {
  return value ? fmt::format("{:.{}f}", *value, decimals) : std::string("–");
}

}  // namespace commcert
