#include <fmt/format.h>

#include "core/printable.hpp"
#include "report/verdict_reporter.hpp"

namespace commcert {
namespace {

// A single line, so a wrapper can hand it to `scontrol ... Reason=` as it is: every control
// character escaped (a node name from a record may hold a newline or an escape sequence).
std::string one_line(const std::string& text) {
  return printable(text);
}

// LBNL NHC's output convention, for use as (or under) Slurm's HealthCheckProgram: one
// "ERROR: commcert: ..." line per node that is not certified; one SUCCESS line when all are.
class NhcReporter final : public VerdictReporter {
 public:
  std::string render(const Report& report) const override {
    const FleetVerdict& v = report.verdict;
    std::string out;
    for (const auto& node : v.nodes) {
      const Reason* first = node.first_reason();
      if (!first) continue;
      out += one_line(fmt::format("ERROR: commcert: {}: {} ({}): {} [{}]", node.node,
                                  to_string(node.state), to_string(node.severity), first->message,
                                  first->code));
      out += '\n';
    }
    if (out.empty()) {
      out = fmt::format("SUCCESS: commcert: {} node(s) certified against {}\n", v.nodes.size(),
                        printable(v.sku));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<VerdictReporter> make_nhc_reporter() {
  return std::make_unique<NhcReporter>();
}

}  // namespace commcert
