#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace commcert {

// A file compiled into the binary (cmake/EmbedFiles.cmake): its stem and its text.
struct EmbeddedFile {
  std::string_view name;
  std::string_view text;
};

// suites/*.yaml and suites/baselines/*.yaml as they were when commcert was built.
[[nodiscard]] std::span<const EmbeddedFile> embedded_suites();
[[nodiscard]] std::span<const EmbeddedFile> embedded_baselines();

[[nodiscard]] inline std::optional<std::string_view> find_embedded(
    std::span<const EmbeddedFile> files, std::string_view name) {
  for (const auto& file : files) {
    if (file.name == name) return file.text;
  }
  return std::nullopt;
}

}  // namespace commcert
