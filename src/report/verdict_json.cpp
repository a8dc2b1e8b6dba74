#include "report/verdict_reporter.hpp"

namespace commcert {
namespace {

// verdict.json on stdout, for pipes (jq) and wrappers.
class JsonReporter final : public VerdictReporter {
 public:
  std::string render(const Report& report) const override {
    const FleetVerdict& verdict = report.verdict;
    return to_json(verdict).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  }
};

}  // namespace

std::unique_ptr<VerdictReporter> make_json_reporter() {
  return std::make_unique<JsonReporter>();
}

}  // namespace commcert
