#include "report/verdict_reporter.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {

std::vector<std::unique_ptr<VerdictReporter>> make_verdict_reporters() {
  using Factory = std::unique_ptr<VerdictReporter> (*)();
  static constexpr Factory kReporters[] = {&make_text_reporter, &make_json_reporter,
                                           &make_nhc_reporter};
  std::vector<std::unique_ptr<VerdictReporter>> reporters;
  for (const Factory factory : kReporters)
    reporters.push_back(factory());
  return reporters;
}

std::unique_ptr<VerdictReporter> make_verdict_reporter(std::string_view format) {
  std::string known;
  for (auto& reporter : make_verdict_reporters()) {
    if (reporter->format() == format) return std::move(reporter);
    known += (known.empty() ? "" : ", ") + std::string(reporter->format());
  }
  throw UsageError(fmt::format("unknown format '{}' (known: {})", format, known));
}

}  // namespace commcert
