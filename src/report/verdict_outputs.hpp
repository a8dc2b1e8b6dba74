#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "report/verdict_reporter.hpp"

namespace commcert {

// One rendering of a verdict and where it goes: `--report NAME=PATH` (PATH "-" is stdout).
struct VerdictOutput {
  const VerdictFormat* format = nullptr;
  std::optional<std::filesystem::path> file;  // nullopt: stdout
};

// Parses and checks one NAME=PATH before anything is judged: the name is in the table, the path
// names a file (not a directory) in a directory that exists. Throws UsageError whose message
// (without the flag's name, which the caller adds) says what is wrong.
[[nodiscard]] VerdictOutput parse_verdict_output(std::string_view spec);

// Every output of one command: `--report` specs in the order given, plus `stdout_format` on
// stdout first when given, else `default_format` on stdout when no spec claims it. stdout takes
// one format, and a file one output. Throws UsageError naming the flag.
[[nodiscard]] std::vector<VerdictOutput> plan_verdict_outputs(
    const std::optional<std::string>& stdout_format, const std::vector<std::string>& report_specs,
    std::string_view default_format);

// The format on stdout, or nullptr if none.
[[nodiscard]] const VerdictFormat* stdout_format(std::span<const VerdictOutput> outputs);

struct VerdictOutputFailure {
  std::string format;
  std::filesystem::path file;
  std::string message;
};

// Renders the verdict once per output: stdout in order, each file written atomically (a temporary
// file in its directory, then a rename: a reader sees the old file or the new one, never part).
// A file that cannot be written does not stop the others; its failure is returned.
[[nodiscard]] std::vector<VerdictOutputFailure> write_verdict_outputs(
    const Report& report, std::span<const VerdictOutput> outputs, std::FILE* out);

// Whether an output's format shows what the run measured, so RunDetails must be collected.
[[nodiscard]] bool outputs_read_run(std::span<const VerdictOutput> outputs);

}  // namespace commcert
