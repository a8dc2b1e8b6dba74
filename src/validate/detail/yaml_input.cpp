#include "validate/detail/yaml_input.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace commcert::detail {

std::string join_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return fmt::format("{}.{}", parent, key);
}

YAML::Node YamlInput::load(std::string_view text) const {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& error) {
    throw UsageError(fmt::format("{}:{}:{}: YAML syntax error: {}", origin_, error.mark.line + 1,
                                 error.mark.column + 1, error.msg));
  }
  std::size_t visited = 0;
  reject_duplicate_keys(root, "", visited);
  return root;
}

// yaml-cpp keeps both entries of a repeated key and node["key"] returns the first, so
// `floor: 900` followed later by `floor: 9` would silently judge against 900. A repeated key is
// a mistake in the file whichever entry was meant: it is refused where it is repeated.
// Aliases make the document a graph that a walk sees as a tree: nested aliases (a "billion
// laughs" file) would make this walk exponential, so it stops after kMaxYamlEntries entries.
void YamlInput::reject_duplicate_keys(const YAML::Node& node, std::string_view path,
                                      std::size_t& visited) const {
  if (++visited > kMaxYamlEntries) {
    fail(node, path,
         fmt::format("more than {} entries (counting each use of an alias): not a suite or "
                     "baseline",
                     kMaxYamlEntries));
  }
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      reject_duplicate_keys(node[i], fmt::format("{}[{}]", path, i), visited);
    }
    return;
  }
  if (!node.IsMap()) return;
  std::unordered_set<std::string> keys;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) continue;  // allow_keys names keys that are not plain names
    if (!keys.insert(key.Scalar()).second) {
      fail(key, join_path(path, key.Scalar()),
           fmt::format("duplicate key (given earlier in the same mapping, at {})",
                       where(first_key(node, key.Scalar()))));
    }
    reject_duplicate_keys(entry.second, join_path(path, key.Scalar()), visited);
  }
}

YAML::Node YamlInput::first_key(const YAML::Node& map, const std::string& name) {
  for (const auto& entry : map) {
    if (entry.first.IsScalar() && entry.first.Scalar() == name) return entry.first;
  }
  return YAML::Node();
}

std::string YamlInput::where(const YAML::Node& at) const {
  const YAML::Mark mark = at.Mark();
  if (mark.is_null()) return origin_;
  return fmt::format("{}:{}", origin_, mark.line + 1);
}

void YamlInput::fail(const YAML::Node& at, std::string_view path, std::string_view problem) const {
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  if (mark.is_null()) throw UsageError(fmt::format("{}: {}: {}", origin_, path, problem));
  throw UsageError(
      fmt::format("{}:{}:{}: {}: {}", origin_, mark.line + 1, mark.column + 1, path, problem));
}

void YamlInput::expect_map(const YAML::Node& node, std::string_view path) const {
  if (!node.IsMap()) fail(node, path, "expected a mapping (key: value lines)");
}

void YamlInput::allow_keys(const YAML::Node& map, std::string_view path,
                           const std::vector<std::string>& allowed) const {
  for (const auto& entry : map) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) fail(key, path, "keys must be plain names");
    const std::string name = key.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    std::string known;
    for (const auto& a : allowed)
      known += (known.empty() ? "" : ", ") + a;
    fail(key, join_path(path, name), fmt::format("unknown key (known: {})", known));
  }
}

std::string YamlInput::scalar(const YAML::Node& node, std::string_view path,
                              std::string_view expected) const {
  if (!node.IsScalar()) {
    fail(node, path,
         fmt::format("expected {}, got {}", expected,
                     node.IsSequence() ? "a list"
                     : node.IsMap()    ? "a mapping"
                                       : "nothing"));
  }
  return node.Scalar();
}

double YamlInput::number(const YAML::Node& node, std::string_view path) const {
  const std::string text = scalar(node, path, "a number");
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    fail(node, path, fmt::format("expected a number, got '{}'", text));
  }
  return value;
}

std::int64_t YamlInput::integer(const YAML::Node& node, std::string_view path) const {
  const std::string text = scalar(node, path, "an integer");
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    fail(node, path, fmt::format("expected an integer, got '{}'", text));
  }
  return value;
}

bool YamlInput::boolean(const YAML::Node& node, std::string_view path) const {
  const std::string text = scalar(node, path, "true or false");
  if (text == "true") return true;
  if (text == "false") return false;
  fail(node, path, fmt::format("expected true or false, got '{}'", text));
}

std::string YamlInput::string(const YAML::Node& node, std::string_view path) const {
  return scalar(node, path, "a string");
}

std::uint64_t YamlInput::size(const YAML::Node& node, std::string_view path) const {
  const std::string text = scalar(node, path, "a size such as 1G");
  try {
    return parse_size(text, path);
  } catch (const UsageError& error) {
    fail(node, path, error.what());
  }
}

std::vector<std::string> YamlInput::strings(const YAML::Node& node, std::string_view path) const {
  if (!node.IsSequence()) fail(node, path, "expected a list, e.g. [a, b]");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    out.push_back(string(node[i], fmt::format("{}[{}]", path, i)));
  }
  return out;
}

std::vector<int> YamlInput::integers(const YAML::Node& node, std::string_view path) const {
  if (!node.IsSequence()) fail(node, path, "expected a list, e.g. [48, 79]");
  std::vector<int> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::int64_t value = integer(node[i], fmt::format("{}[{}]", path, i));
    if (value < 0 || value > 100000) fail(node[i], path, "out of range");
    out.push_back(static_cast<int>(value));
  }
  return out;
}

}  // namespace commcert::detail
