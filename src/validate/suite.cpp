#include "validate/suite.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "validate/checks.hpp"
#include "validate/detail/yaml_input.hpp"

namespace commcert {

Suite parse_suite(std::string_view text, std::string_view origin) {
  const detail::YamlInput in{std::string(origin)};
  const YAML::Node root = in.load(text);
  if (!root.IsDefined() || root.IsNull())
    throw UsageError(fmt::format("{}: the suite is empty", origin));
  in.expect_map(root, "(document)");
  in.allow_keys(root, "", {"schema", "name", "description", "required"});
  if (!root["schema"] || in.integer(root["schema"], "schema") != 1) {
    in.fail(root["schema"] ? root["schema"] : root, "schema",
            "this validator reads suite schema 1");
  }
  Suite suite;
  suite.path = std::string(origin);
  if (!root["name"]) in.fail(root, "name", "missing");
  suite.name = in.string(root["name"], "name");
  if (root["description"]) suite.description = in.string(root["description"], "description");
  if (!root["required"]) in.fail(root, "required", "missing: list the checks the suite runs");
  suite.required = in.strings(root["required"], "required");
  if (suite.required.empty())
    in.fail(root["required"], "required", "an empty list certifies nothing");
  for (std::size_t i = 0; i < suite.required.size(); ++i) {
    if (!find_check(suite.required[i])) {
      in.fail(root["required"][i], fmt::format("required[{}]", i),
              fmt::format("unknown check '{}'", suite.required[i]));
    }
  }
  return suite;
}

Suite load_suite(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) throw UsageError(fmt::format("cannot open suite {}", path.string()));
  std::ostringstream text;
  text << file.rdbuf();
  return parse_suite(text.str(), path.string());
}

}  // namespace commcert
