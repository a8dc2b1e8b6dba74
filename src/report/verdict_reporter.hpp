#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "validate/verdict.hpp"

namespace commcert {

// One way of showing a verdict on stdout. verdict.json is always written as well; a reporter
// is what a person or a scheduler hook reads. All render from the same FleetVerdict, so they
// say the same thing.
class VerdictReporter {
 public:
  virtual ~VerdictReporter() = default;
  [[nodiscard]] virtual std::string_view format() const = 0;  // the --format value
  [[nodiscard]] virtual std::string render(const FleetVerdict& verdict) const = 0;
};

// Every reporter, in the order --help lists them (verdict_reporter.cpp).
[[nodiscard]] std::vector<std::unique_ptr<VerdictReporter>> make_verdict_reporters();
// Throws UsageError naming the known formats.
[[nodiscard]] std::unique_ptr<VerdictReporter> make_verdict_reporter(std::string_view format);

std::unique_ptr<VerdictReporter> make_text_reporter();
std::unique_ptr<VerdictReporter> make_json_reporter();
std::unique_ptr<VerdictReporter> make_nhc_reporter();

}  // namespace commcert
