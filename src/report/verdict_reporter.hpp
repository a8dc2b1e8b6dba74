#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "report/run_details.hpp"
#include "validate/verdict.hpp"

namespace commcert {

// The report model every format renders: the verdict, and what the run measured beside it
// (curves, matrices, per-GPU figures, meta) when the caller collected it. Converts from a verdict
// alone, which is all the text, json, nhc and nodes formats read.
struct Report {
  // NOLINTNEXTLINE(google-explicit-constructor): a verdict is a report without run details.
  Report(const FleetVerdict& judged, const RunDetails* measured = nullptr)
      : verdict(judged), run(measured) {}
  const FleetVerdict& verdict;
  const RunDetails* run;  // nullptr: not collected; formats show the verdict alone
};

// One way of showing a verdict. verdict.json is always written as well; a reporter is what a
// person, a scheduler hook or another tool reads. All render from the same report, so they say
// the same thing.
class VerdictReporter {
 public:
  virtual ~VerdictReporter() = default;
  [[nodiscard]] virtual std::string render(const Report& report) const = 0;
};

// A format's row in the one table of formats (verdict_formats.cpp): the name `--format` and
// `--report NAME=PATH` take, a line for --help and docs, and how to make its reporter. Adding a
// format is its own file and its row; the flags, their check and their help read the table.
struct VerdictFormat {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<VerdictReporter> (*make)();
  // The format shows what the run measured (RunDetails), so the caller collects it first; the
  // others cost nothing beyond the verdict.
  bool reads_run = false;
};

// The suspect switch paths the verdict names (localization.suspect_switch reasons, their
// link's path in words: "leaf-a <-> spine1, spine2 (uplink of leaf-a)", or "between {n0, n1}
// and {n2, n3}" without a topology), each once, in the order the nodes carry them. Every format
// shows each on a line of its own.
[[nodiscard]] std::vector<std::string> suspect_switch_paths(const FleetVerdict& verdict);

// Every format, in the order --help lists them.
[[nodiscard]] std::span<const VerdictFormat> verdict_formats();
// nullptr when no format has that name.
[[nodiscard]] const VerdictFormat* find_verdict_format(std::string_view name);
// "text, json, nhc": for help and error text.
[[nodiscard]] std::string verdict_format_names();
// "text (…), json (…), nhc (…)": every name with its description, for help text.
[[nodiscard]] std::string verdict_format_help();
// "unknown format 'x' (known: text, json, nhc)".
[[nodiscard]] std::string unknown_verdict_format(std::string_view name);
// Throws UsageError with unknown_verdict_format's message.
[[nodiscard]] std::unique_ptr<VerdictReporter> make_verdict_reporter(std::string_view name);

}  // namespace commcert
