#include "validate/suite_baseline_lookup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/embedded_file.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

bool looks_like_path(std::string_view ref) {
  return ref.find('/') != std::string_view::npos || ref.ends_with(".yaml") ||
         ref.ends_with(".yml") || std::filesystem::exists(std::filesystem::path(ref));
}

std::string names(std::span<const EmbeddedFile> files) {
  std::vector<std::string_view> out;
  for (const auto& file : files)
    out.push_back(file.name);
  return fmt::format("{}", fmt::join(out, ", "));
}

}  // namespace

Suite load_suite_ref(std::string_view ref) {
  if (looks_like_path(ref)) return load_suite(std::filesystem::path(ref));
  if (const auto text = find_embedded(embedded_suites(), ref)) {
    return parse_suite(*text, fmt::format("suite '{}' (built in)", ref));
  }
  throw UsageError(
      fmt::format("no suite '{}': give a suite file or one of {}", ref, embedded_suite_names()));
}

Baseline load_baseline_ref(std::string_view ref, const std::filesystem::path& relative_to) {
  if (looks_like_path(ref)) {
    std::filesystem::path path(ref);
    if (path.is_relative() && !relative_to.empty() && !std::filesystem::exists(path)) {
      path = relative_to / path;
    }
    return load_baseline(path);
  }
  if (const auto text = find_embedded(embedded_baselines(), ref)) {
    return parse_baseline(*text, fmt::format("baseline '{}' (built in)", ref));
  }
  throw UsageError(fmt::format("no baseline '{}': give a baseline file or one of {}", ref,
                               embedded_baseline_names()));
}

std::string embedded_suite_names() {
  return names(embedded_suites());
}

std::string embedded_baseline_names() {
  return names(embedded_baselines());
}

}  // namespace commcert
