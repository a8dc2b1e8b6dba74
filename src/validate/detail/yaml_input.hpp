#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace commcert::detail {

// Entries (scalars, lists, mappings) one suite or baseline may hold, aliases counted at each use.
// The largest built-in file has a few hundred; a suite at its stage limit a few thousand.
inline constexpr std::size_t kMaxYamlEntries = 1000000;

// Reads typed values out of a YAML document and reports every problem as a UsageError
// "origin:line:column: key.path: problem" (line and column 1-based, from yaml-cpp's Mark).
class YamlInput {
 public:
  explicit YamlInput(std::string origin) : origin_(std::move(origin)) {}

  // Parses the whole text; YAML syntax errors carry yaml-cpp's line and column.
  [[nodiscard]] YAML::Node load(std::string_view text) const;

  [[noreturn]] void fail(const YAML::Node& at, std::string_view path,
                         std::string_view problem) const;
  // "origin:line" of a node, for remembering where a value was declared.
  [[nodiscard]] std::string where(const YAML::Node& at) const;

  void expect_map(const YAML::Node& node, std::string_view path) const;
  // Fails on the first key not in `allowed`, pointing at that key.
  void allow_keys(const YAML::Node& map, std::string_view path,
                  const std::vector<std::string>& allowed) const;

  [[nodiscard]] double number(const YAML::Node& node, std::string_view path) const;
  [[nodiscard]] std::int64_t integer(const YAML::Node& node, std::string_view path) const;
  [[nodiscard]] bool boolean(const YAML::Node& node, std::string_view path) const;
  [[nodiscard]] std::string string(const YAML::Node& node, std::string_view path) const;
  // "1G", "64MiB" or a plain integer number of bytes.
  [[nodiscard]] std::uint64_t size(const YAML::Node& node, std::string_view path) const;
  [[nodiscard]] std::vector<std::string> strings(const YAML::Node& node,
                                                 std::string_view path) const;
  [[nodiscard]] std::vector<int> integers(const YAML::Node& node, std::string_view path) const;

 private:
  void reject_duplicate_keys(const YAML::Node& node, std::string_view path,
                             std::size_t& visited) const;
  [[nodiscard]] static YAML::Node first_key(const YAML::Node& map, const std::string& name);
  [[nodiscard]] std::string scalar(const YAML::Node& node, std::string_view path,
                                   std::string_view expected) const;
  std::string origin_;
};

// "a.b" + "c" -> "a.b.c".
[[nodiscard]] std::string join_path(std::string_view parent, std::string_view key);

}  // namespace commcert::detail
