#include "report/markup.hpp"

#include <span>

#include <fmt/format.h>

namespace commcert {
namespace {

struct Entity {
  char character;
  const char* reference;
};

// What markup and a Markdown table cell both write as references.
constexpr Entity kHtmlEntities[] = {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}};
// What markup writes as references besides: quotes, and the white space an attribute keeps.
constexpr Entity kAttributeEntities[] = {
    {'"', "&quot;"}, {'\'', "&#39;"}, {'\t', "&#9;"}, {'\n', "&#10;"}, {'\r', "&#13;"}};

const char* reference_of(char c, std::span<const Entity> entities) {
  for (const Entity& entity : entities) {
    if (entity.character == c) return entity.reference;
  }
  return nullptr;
}

// `c` as itself, or, where `hidden` (a control character), as the text \xNN.
void append_visible(std::string& out, char c, bool hidden) {
  if (hidden) {
    out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  } else {
    out += c;
  }
}

bool is_control(char c) {
  return static_cast<unsigned char>(c) < 0x20;
}

}  // namespace

std::string escape_markup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (const char* reference = reference_of(c, kHtmlEntities)) {
      out += reference;
    } else if (const char* attribute_reference = reference_of(c, kAttributeEntities)) {
      out += attribute_reference;
    } else {
      append_visible(out, c, is_control(c));
    }
  }
  return out;
}

std::string escape_markdown(std::string_view text) {
  // Table cell ends, code, emphasis, links, strikethrough, and the escape character itself.
  constexpr std::string_view kBackslashed = "|\\`*_[]~";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (const char* reference = reference_of(c, kHtmlEntities)) {
      out += reference;
    } else if (c == '\t') {
      out += ' ';
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;  // CRLF is one line break
      out += "<br>";
    } else if (kBackslashed.find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      append_visible(out, c, is_control(c) || c == '\x7f');
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
