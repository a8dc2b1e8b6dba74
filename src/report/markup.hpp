#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace commcert {

// Text from records and the environment (node names, reasons, argv) as character data of HTML or
// XML, in element content and in quoted attributes alike: & < > " ' become references, tab, line
// feed and carriage return become character references (so attribute values keep them), and other
// control characters, which XML 1.0 does not allow at all, are written as the text \xNN. A node
// named <img src=x onerror=alert(1)> is shown as those characters, never parsed as markup.
[[nodiscard]] std::string escape_markup(std::string_view text);

// The same text for Markdown (a ticket): only what the context needs is escaped, so a quote stays
// a quote. `|` gets a backslash (a table cell ends at an unescaped one), and so does `\` (else a
// `\` before a `|` would escape the backslash added for it); `< > &` become references
// (renderers pass inline HTML and entities through); `` ` * _ [ ] ~ `` get a backslash (code,
// emphasis, links, strikethrough). A line feed, carriage return or CRLF becomes `<br>` and a tab
// a space, so a table row stays one line; other control characters (and DEL) are written as the
// text \xNN.
[[nodiscard]] std::string escape_markdown(std::string_view text);

// Figures as people read them in reports: 463.21 GB/s (10^9 bytes/s, nccl-tests' unit), "–"
// for a missing one.
[[nodiscard]] std::string format_gb_per_s(std::optional<double> bytes_per_s);
[[nodiscard]] std::string format_number(std::optional<double> value, int decimals = 2);

}  // namespace commcert
