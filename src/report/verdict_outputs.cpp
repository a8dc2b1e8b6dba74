#include "report/verdict_outputs.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/records_file.hpp"

namespace commcert {
namespace {

// Where a file output lands, for telling two outputs to the same file apart from two that only
// look different (./a and a).
std::filesystem::path comparable(const std::filesystem::path& path) {
  std::error_code error;
  const auto absolute = std::filesystem::absolute(path, error);
  return (error ? path : absolute).lexically_normal();
}

}  // namespace

VerdictOutput parse_verdict_output(std::string_view spec) {
  const auto equals = spec.find('=');
  if (equals == std::string_view::npos) {
    throw UsageError(fmt::format("'{}' is not NAME=PATH (NAME one of {}; PATH - for stdout)", spec,
                                 verdict_format_names()));
  }
  const std::string_view name = spec.substr(0, equals);
  const std::string_view path = spec.substr(equals + 1);
  VerdictOutput output;
  output.format = find_verdict_format(name);
  if (!output.format) throw UsageError(unknown_verdict_format(name));
  if (path.empty()) {
    throw UsageError(fmt::format("'{}' names no file (PATH - for stdout)", spec));
  }
  if (path == "-") return output;
  const std::filesystem::path file(path);
  std::error_code error;
  if (std::filesystem::is_directory(file, error)) {
    throw UsageError(fmt::format("{}: is a directory (name a file in it)", path));
  }
  const std::filesystem::path directory =
      file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(directory, error)) {
    throw UsageError(fmt::format("{}: directory {} does not exist", path, directory.string()));
  }
  output.file = file;
  return output;
}

std::vector<VerdictOutput> plan_verdict_outputs(const std::optional<std::string>& stdout_name,
                                                const std::vector<std::string>& report_specs,
                                                std::string_view default_format) {
  std::vector<VerdictOutput> outputs;
  if (stdout_name) {
    const VerdictFormat* format = find_verdict_format(*stdout_name);
    if (!format)
      throw UsageError(fmt::format("--format: {}", unknown_verdict_format(*stdout_name)));
    outputs.push_back({format, std::nullopt});
  }
  for (const auto& spec : report_specs) {
    VerdictOutput output;
    try {
      output = parse_verdict_output(spec);
    } catch (const UsageError& error) {
      throw UsageError(fmt::format("--report: {}", error.what()));
    }
    for (const auto& earlier : outputs) {
      if (!output.file && !earlier.file) {
        throw UsageError(fmt::format(
            "--report {}: stdout already shows {} (one format on stdout: --format NAME or one "
            "--report NAME=-)",
            spec, earlier.format->name));
      }
      if (output.file && earlier.file && comparable(*output.file) == comparable(*earlier.file)) {
        throw UsageError(fmt::format("--report {}: {} is already written as {}", spec,
                                     output.file->string(), earlier.format->name));
      }
    }
    outputs.push_back(std::move(output));
  }
  if (!stdout_format(outputs)) {
    const VerdictFormat* format = find_verdict_format(default_format);
    if (!format) throw std::logic_error("default verdict format is not in the table");
    outputs.insert(outputs.begin(), {format, std::nullopt});
  }
  return outputs;
}

const VerdictFormat* stdout_format(std::span<const VerdictOutput> outputs) {
  const auto found = std::find_if(outputs.begin(), outputs.end(),
                                  [](const VerdictOutput& output) { return !output.file; });
  return found == outputs.end() ? nullptr : found->format;
}

bool outputs_read_run(std::span<const VerdictOutput> outputs) {
  return std::any_of(outputs.begin(), outputs.end(),
                     [](const VerdictOutput& output) { return output.format->reads_run; });
}

std::vector<VerdictOutputFailure> write_verdict_outputs(const Report& report,
                                                        std::span<const VerdictOutput> outputs,
                                                        std::FILE* out) {
  std::vector<VerdictOutputFailure> failures;
  for (const auto& output : outputs) {
    const std::string text = output.format->make()->render(report);
    if (!output.file) {
      std::fwrite(text.data(), 1, text.size(), out);
      std::fflush(out);
      continue;
    }
    try {
      write_text_file_atomically(*output.file, text);
    } catch (const RuntimeFailure& error) {
      failures.push_back({std::string(output.format->name), *output.file, error.what()});
    }
  }
  return failures;
}

}  // namespace commcert
