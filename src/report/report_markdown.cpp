#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/markup.hpp"
#include "report/verdict_reporter.hpp"

namespace commcert {
namespace {

// Text that ends up inside a Markdown table cell or list item of a ticket (escape_markdown): a
// name or reason can neither break the table nor inject a link or markup, and reads as written.
std::string cell(std::string_view text) {
  return escape_markdown(text);
}

std::string reason_text(const Reason& reason) {
  std::string text = fmt::format("{}: {}", cell(reason.code), cell(reason.message));
  if (reason.measured) {
    text += fmt::format(" (measured {}{}", format_number(reason.measured, 4),
                        reason.unit.empty() ? "" : " " + cell(reason.unit));
    if (reason.limit) text += fmt::format(", limit {}", format_number(reason.limit, 4));
    text += ")";
  }
  return text;
}

// A node list and its reasons for pasting into a ticket: counts, the nodes that need someone
// (every reason with its figures and the action), the judged busbw per collective, the GPUs whose
// burn or memory stage did not pass, and what ran.
class MarkdownReporter final : public VerdictReporter {
 public:
  std::string render(const Report& report) const override {
    const FleetVerdict& v = report.verdict;
    std::string out = fmt::format("## commcert verdict: {}\n\n", cell(v.sku));
    out += fmt::format("**{}** nodes: {} certified, {} quarantined, {} inconclusive",
                       v.nodes.size(), v.count(NodeState::kCertified),
                       v.count(NodeState::kQuarantined), v.count(NodeState::kInconclusive));
    if (!v.suite_name.empty()) out += fmt::format(" (suite {})", cell(v.suite_name));
    out += fmt::format(". Baseline: {}.\n\n", cell(v.baseline_path));

    out += "| node | state | severity | reasons | action |\n|---|---|---|---|---|\n";
    for (const auto& node : v.nodes) {
      if (node.state == NodeState::kCertified && node.reasons.empty()) continue;
      std::string reasons;
      for (const auto& reason : node.reasons)
        reasons += (reasons.empty() ? "" : "<br>") + reason_text(reason);
      const Reason* first = node.first_reason();
      out += fmt::format("| {} | {} | {} | {} | {} |\n", cell(node.node), to_string(node.state),
                         to_string(node.severity), reasons.empty() ? "–" : reasons,
                         first ? cell(first->action) : "–");
    }
    const auto certified = std::count_if(v.nodes.begin(), v.nodes.end(), [](const auto& node) {
      return node.state == NodeState::kCertified && node.reasons.empty();
    });
    if (certified > 0)
      out += fmt::format("\n{} further nodes certified without remarks.\n", certified);
    // A suspect switch path blames none of its nodes: named once, on a line of its own.
    const auto switch_paths = suspect_switch_paths(v);
    if (!switch_paths.empty()) out += "\n";
    for (const auto& path : switch_paths)
      out += fmt::format("- suspect switch path: {}\n", cell(path));
    out += notes_section(v);
    if (report.run) out += run_sections(*report.run);
    return out;
  }

 private:
  // What the input said beside the nodes' verdicts (a missed --target-ci, a run that owned up to
  // a fault, injected faults): one list item each, as the HTML report's "Notes on the input".
  static std::string notes_section(const FleetVerdict& v) {
    if (v.notes.empty()) return {};
    std::string out = "\n### Notes on the input\n\n";
    for (const auto& note : v.notes) {
      out += fmt::format("- `{}` {}{}\n", note.code, cell(note.place()), cell(note.message));
    }
    return out;
  }

  static std::string run_sections(const RunDetails& run) {
    std::string out;
    if (!run.judged.empty()) {
      out +=
          "\n### Bus bandwidth the nodes were judged on\n\n"
          "| collective | scope | size | nodes | min | median | max |\n"
          "|---|---|---|---|---|---|---|\n";
      std::map<std::pair<std::string, std::string>, std::vector<const JudgedBusbw*>> groups;
      for (const auto& figure : run.judged)
        groups[{figure.collective, figure.scope}].push_back(&figure);
      for (const auto& [key, figures] : groups) {
        std::vector<double> values;
        for (const auto* figure : figures)
          values.push_back(figure->busbw_bytes_per_s);
        std::sort(values.begin(), values.end());
        out += fmt::format(
            "| {} | {} | {} | {} | {} | {} | {} |\n", cell(key.first), cell(key.second),
            format_bytes(figures.front()->bytes), figures.size(), format_gb_per_s(values.front()),
            format_gb_per_s(values[values.size() / 2]), format_gb_per_s(values.back()));
      }
    }
    std::string gpus;
    for (const auto& gpu : run.burns) {
      if (gpu.status == "ok") continue;
      gpus += fmt::format("| {} | {} | burn {} | {} | {} |\n", cell(gpu.node), gpu.gpu,
                          cell(gpu.kernel), cell(gpu.status), cell(gpu.reason));
    }
    for (const auto& gpu : run.membws) {
      if (gpu.status == "ok") continue;
      gpus += fmt::format("| {} | {} | membw | {} | {} |\n", cell(gpu.node), gpu.gpu,
                          cell(gpu.status), cell(gpu.reason));
    }
    if (!gpus.empty()) {
      out +=
          "\n### GPU stages that did not pass\n\n| node | gpu | stage | status | reason |\n"
          "|---|---|---|---|---|\n" +
          gpus;
    }
    for (const auto& matrix : run.pairs) {
      if (matrix.bad_nodes.empty() && std::none_of(matrix.cells.begin(), matrix.cells.end(),
                                                   [](const auto& c) { return c.suspect_link; }))
        continue;
      out += fmt::format("\n### Pairwise {} at {}\n\n", cell(matrix.collective),
                         format_bytes(matrix.bytes));
      for (const auto& node : matrix.bad_nodes)
        out += fmt::format("- bad node: {}\n", cell(node));
      for (const auto& c : matrix.cells) {
        if (c.suspect_link)
          out += fmt::format("- suspect link: {} – {} at {}\n", cell(c.a), cell(c.b),
                             format_gb_per_s(c.busbw_bytes_per_s));
      }
    }
    if (!run.runs.empty()) {
      out += "\n### Runs\n\n";
      for (const auto& meta : run.runs) {
        out += fmt::format("- {}: {}{}", cell(meta.run_id), cell(meta.status),
                           meta.suite.empty() ? "" : ", suite " + cell(meta.suite));
        if (!meta.start_time.empty())
          out += fmt::format(", {} – {}", cell(meta.start_time), cell(meta.end_time));
        if (!meta.fault_injection.empty())
          out += fmt::format(", **fault injection** {}", cell(meta.fault_injection));
        out += "\n";
      }
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<VerdictReporter> make_markdown_reporter() {
  return std::make_unique<MarkdownReporter>();
}

}  // namespace commcert
