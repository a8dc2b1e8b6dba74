#pragma once

#include <cmath>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace commcert {

// CLI11's Range and PositiveNumber compare with < and >, which NaN passes (and PositiveNumber
// lets infinity through): `-f nan` or `--target-ci nan` would be accepted and silently change
// what is measured. Every floating-point flag is checked with these instead, which refuse
// anything not finite and name the expected form.
inline CLI::Validator finite_range(double min, double max) {
  const std::string expected = fmt::format("a number from {} to {}", min, max);
  return CLI::Validator(
      [min, max, expected](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value) || !std::isfinite(value) || value < min ||
            value > max) {
          return fmt::format("'{}' is not {}", input, expected);
        }
        return {};
      },
      fmt::format("NUMBER in [{} - {}]", min, max));
}

inline CLI::Validator finite_positive() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value) || !std::isfinite(value) || !(value > 0)) {
          return fmt::format("'{}' is not a finite number above 0", input);
        }
        return {};
      },
      "POSITIVE");
}

}  // namespace commcert
