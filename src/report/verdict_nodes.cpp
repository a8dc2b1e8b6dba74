#include <fmt/format.h>

#include "core/printable.hpp"
#include "report/verdict_reporter.hpp"

namespace commcert {
namespace {

// One line per node, four fields separated by one space: node, state, severity and the code of
// its first reason ("-" when it has none), so a script picks nodes with awk or grep without a
// JSON parser: `awk '$2 == "certified" {print $1}'`. A certified node's reason is its first
// warning. Node names are escaped as everywhere else, spaces included, so the fields stay four.
class NodesReporter final : public VerdictReporter {
 public:
  std::string render(const Report& report) const override {
    const FleetVerdict& v = report.verdict;
    std::string out;
    for (const auto& node : v.nodes) {
      std::string name = printable(node.node);
      for (std::size_t at = name.find(' '); at != std::string::npos; at = name.find(' ', at))
        name.replace(at, 1, "\\x20");
      out += fmt::format("{} {} {} {}\n", name, to_string(node.state), to_string(node.severity),
                         node.reasons.empty() ? "-" : node.reasons.front().code);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<VerdictReporter> make_nodes_reporter() {
  return std::make_unique<NodesReporter>();
}

}  // namespace commcert
