#include <fmt/format.h>

#include "report/markup.hpp"
#include "report/verdict_reporter.hpp"

namespace commcert {
namespace {

// JUnit XML as Jenkins, GitLab and GitHub test-report actions read it: one <testsuite> per node,
// one <testcase> per check in the node's verdict (every required check, then any other check a
// reason names, such as `input`), so an acceptance run shows up like a test run.
//
//   pass, warn    -> a passed testcase (warnings in <system-out>: JUnit has no warning state)
//   fail          -> <failure>: the node is quarantined on this check
//   inconclusive  -> <error>, not <skipped>: missing evidence must fail the CI job as a failure
//                    does (skipped testcases leave a pipeline green), yet stay distinguishable
//                    from a measured fault
//
// The message is the check's first reason; the body lists every reason with its figures and
// evidence. No timestamps: the same verdict gives the same file.
class JunitReporter final : public VerdictReporter {
 public:
  std::string render(const Report& report) const override {
    const FleetVerdict& verdict = report.verdict;
    Totals all;
    std::string suites;
    for (const auto& node : verdict.nodes) {
      Totals totals;
      std::string cases;
      for (const auto& [check, status] : node.checks)
        cases += testcase(node, check, status, totals);
      suites += fmt::format(
          "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" "
          "time=\"0\">\n"
          "    <properties>\n"
          "      <property name=\"state\" value=\"{}\"/>\n"
          "      <property name=\"severity\" value=\"{}\"/>\n{}"
          "    </properties>\n{}  </testsuite>\n",
          escape_markup(node.node), totals.tests, totals.failures, totals.errors,
          to_string(node.state), to_string(node.severity), switch_properties(node), cases);
      all.tests += totals.tests;
      all.failures += totals.failures;
      all.errors += totals.errors;
    }
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" "
        "time=\"0\">\n{}</testsuites>\n",
        escape_markup(fmt::format("commcert certify {}", verdict.sku)), all.tests, all.failures,
        all.errors, suites);
  }

 private:
  struct Totals {
    int tests = 0;
    int failures = 0;
    int errors = 0;
  };

  // A suspect switch path the node sits beside (a warning that blames it not): a property line
  // of its own per path, which CI shows with the node.
  static std::string switch_properties(const NodeVerdict& node) {
    std::string out;
    for (const auto& reason : node.reasons) {
      if (reason.code != "localization.suspect_switch" || !reason.link) continue;
      out += fmt::format("      <property name=\"suspect_switch_path\" value=\"{}\"/>\n",
                         escape_markup(reason.link->device));
    }
    return out;
  }

  static std::string reason_line(const Reason& reason) {
    std::string line = fmt::format("{}: {}", reason.code, reason.message);
    if (reason.measured) {
      line += fmt::format(
          " (measured {}{}{})", format_number(reason.measured, 4),
          reason.unit.empty() ? "" : " " + reason.unit,
          reason.limit ? fmt::format(", limit {}", format_number(reason.limit, 4)) : std::string());
    }
    if (!reason.action.empty()) line += fmt::format("\n  action: {}", reason.action);
    for (const auto& where : reason.evidence)
      line += fmt::format("\n  evidence: {}:{}", where.file, where.line);
    return line + "\n";
  }

  static std::string testcase(const NodeVerdict& node, const std::string& check,
                              const std::string& status, Totals& totals) {
    ++totals.tests;
    std::string body;
    const Reason* first = nullptr;
    for (const auto& reason : node.reasons) {
      if (reason.check != check) continue;
      if (!first) first = &reason;
      body += reason_line(reason);
    }
    const std::string head = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
                                         escape_markup(node.node), escape_markup(check));
    const std::string message = first ? escape_markup(first->message) : std::string();
    const std::string type = first ? escape_markup(first->code) : std::string();
    if (status == "fail") {
      ++totals.failures;
      return fmt::format(
          "{}>\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n", head,
          message, type, escape_markup(body));
    }
    if (status == "inconclusive") {
      ++totals.errors;
      return fmt::format(
          "{}>\n      <error message=\"{}\" type=\"{}\">{}</error>\n    </testcase>\n", head,
          message, type, escape_markup(body));
    }
    if (!body.empty()) {
      return fmt::format("{}>\n      <system-out>{}</system-out>\n    </testcase>\n", head,
                         escape_markup(body));
    }
    return head + "/>\n";
  }
};

}  // namespace

std::unique_ptr<VerdictReporter> make_junit_reporter() {
  return std::make_unique<JunitReporter>();
}

}  // namespace commcert
