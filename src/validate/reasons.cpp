#include "validate/reasons.hpp"

#include <algorithm>

namespace commcert {
namespace {

using enum Effect;
using enum Severity;

}  // namespace

std::string_view to_string(Effect effect) {
  switch (effect) {
    case kWarn:
      return "warn";
    case kInconclusive:
      return "inconclusive";
    case kQuarantine:
      return "quarantine";
  }
  return "inconclusive";
}

std::string_view to_string(Severity severity) {
  switch (severity) {
    case kNone:
      return "none";
    case kMonitor:
      return "monitor";
    case kUnknown:
      return "unknown";
    case kTriage:
      return "triage";
    case kReset:
      return "reset";
    case kIsolate:
      return "isolate";
  }
  return "unknown";
}

std::span<const ReasonSpec> reason_catalog() {
  return kReasonCatalog;
}

const ReasonSpec& reason_spec(ReasonCode code) {
  return kReasonCatalog[detail::reason_row(code.view())];
}

std::string render_template(std::string_view text, const ReasonFields& fields) {
  std::string out;
  out.reserve(text.size() + 32);
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) break;
    out.append(text.substr(i, open - i));
    const std::string_view name = text.substr(open + 1, close - open - 1);
    const auto it = std::find_if(fields.begin(), fields.end(),
                                 [&](const auto& field) { return field.first == name; });
    if (it != fields.end()) {
      out += it->second;
    } else {
      out.append(text.substr(open, close - open + 1));
    }
    i = close + 1;
  }
  out.append(text.substr(std::min(i, text.size())));
  return out;
}

}  // namespace commcert
