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

// Figures as people read them in reports: 463.21 GB/s (10^9 bytes/s, nccl-tests' unit), "–"
// for a missing one.
[[nodiscard]] std::string format_gb_per_s(std::optional<double> bytes_per_s);
[[nodiscard]] std::string format_number(std::optional<double> value, int decimals = 2);

}  // namespace commcert
