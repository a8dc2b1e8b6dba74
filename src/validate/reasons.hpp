#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "validate/reason_catalog.hpp"
#include "validate/reason_spec.hpp"

namespace commcert {

namespace detail {
// The code's row in the catalog, or the catalog's size. An index, not a pointer: GCC's
// UBSan instrumentation makes a pointer's comparison with nullptr no constant expression.
[[nodiscard]] constexpr std::size_t reason_row(std::string_view code) {
  std::size_t row = 0;
  while (row < kReasonCatalog.size() && kReasonCatalog[row].code != code)
    ++row;
  return row;
}
}  // namespace detail

// A code of the reason catalog, checked when the program is compiled: a rule that names a
// code the catalog lacks (a typo, a row removed) does not build, instead of failing when a
// node first meets that rule.
class ReasonCode {
 public:
  // Implicit, so a rule writes `finding.code = "collective.wrong_data";` and the compiler checks
  // the literal.
  consteval ReasonCode(const char* code) : code_(code) {  // NOLINT(google-explicit-constructor)
    if (detail::reason_row(code_) == kReasonCatalog.size()) {
      throw "reason code not in the catalog";
    }
  }
  [[nodiscard]] constexpr std::string_view view() const { return code_; }
  [[nodiscard]] std::string str() const { return std::string(code_); }
  friend constexpr bool operator==(ReasonCode a, ReasonCode b) { return a.code_ == b.code_; }
  friend constexpr auto operator<=>(ReasonCode a, ReasonCode b) { return a.code_ <=> b.code_; }

 private:
  std::string_view code_;
};

[[nodiscard]] std::span<const ReasonSpec> reason_catalog();
[[nodiscard]] const ReasonSpec& reason_spec(ReasonCode code);

using ReasonFields = std::vector<std::pair<std::string, std::string>>;

// Replaces every {name} that has a field; leaves unknown placeholders as they are, so a missing
// field shows in the output instead of vanishing.
[[nodiscard]] std::string render_template(std::string_view text, const ReasonFields& fields);

}  // namespace commcert
