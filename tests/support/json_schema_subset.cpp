#include "json_schema_subset.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace commcert::test_support {
namespace {

const std::set<std::string, std::less<>> kTypeNames = {"null",   "boolean", "integer", "number",
                                                       "string", "array",   "object"};

// Annotations: they change nothing about what is valid.
const std::set<std::string, std::less<>> kAnnotations = {"$schema", "$id", "title", "description",
                                                         "$comment"};

// JSON Schema's "integer" is any number without a fractional part, 1.0 included.
bool is_integer(const Json& value) {
  if (value.is_number_integer()) return true;
  if (!value.is_number_float()) return false;
  const double d = value.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool has_type(const Json& value, std::string_view type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "number") return value.is_number();
  return type == "integer" && is_integer(value);
}

// minLength counts characters (code points), not bytes.
std::size_t code_points(const std::string& text) {
  std::size_t count = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) ++count;
  }
  return count;
}

std::string pointer_escape(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string shown(const std::string& path) {
  return path.empty() ? std::string("(record)") : path;
}

}  // namespace

JsonSchemaSubset::JsonSchemaSubset(Json schema) : root_(std::move(schema)) {
  check_keywords(root_, "#");
}

JsonSchemaSubset JsonSchemaSubset::record_schema() {
  const std::string path = std::string(COMMCERT_SOURCE_DIR) + "/docs/schema/record.schema.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return JsonSchemaSubset(Json::parse(in));
}

void JsonSchemaSubset::check_keywords(const Json& schema, const std::string& where) {
  if (schema.is_boolean()) return;
  if (!schema.is_object()) {
    throw std::invalid_argument(fmt::format("{}: a schema must be an object or a boolean", where));
  }
  const auto each_schema_in = [&](const Json& list, const std::string& at) {
    if (!list.is_array() || list.empty()) {
      throw std::invalid_argument(fmt::format("{}: must be a non-empty array of schemas", at));
    }
    for (std::size_t i = 0; i < list.size(); ++i)
      check_keywords(list[i], fmt::format("{}/{}", at, i));
  };
  for (const auto& [key, value] : schema.items()) {
    const std::string at = where + "/" + key;
    if (kAnnotations.contains(key)) continue;
    if (key == "type") {
      const Json names = value.is_array() ? value : Json::array({value});
      for (const auto& name : names) {
        if (!name.is_string() || !kTypeNames.contains(name.get<std::string>())) {
          throw std::invalid_argument(fmt::format("{}: unknown type {}", at, name.dump()));
        }
      }
    } else if (key == "properties" || key == "$defs") {
      for (const auto& [name, sub] : value.items())
        check_keywords(sub, at + "/" + name);
    } else if (key == "additionalProperties" || key == "items" || key == "if" || key == "then" ||
               key == "else") {
      // 2020-12's `items` is one schema; the older array form (tuple items) is not supported.
      check_keywords(value, at);
    } else if (key == "allOf" || key == "anyOf" || key == "oneOf") {
      each_schema_in(value, at);
    } else if (key == "$ref") {
      (void)resolve(value.get<std::string>());
    } else if (key == "pattern") {
      const std::string pattern = value.get<std::string>();
      patterns_.try_emplace(pattern, pattern, std::regex::ECMAScript);
    } else if (key == "required" || key == "enum") {
      if (!value.is_array()) throw std::invalid_argument(at + ": must be an array");
    } else if (key == "minimum" || key == "exclusiveMinimum") {
      if (!value.is_number()) throw std::invalid_argument(at + ": must be a number");
    } else if (key == "minItems" || key == "maxItems" || key == "minLength") {
      if (!value.is_number_unsigned()) throw std::invalid_argument(at + ": must be >= 0");
    } else if (key != "const") {
      throw std::invalid_argument(
          fmt::format("{}: keyword '{}' is outside the subset this validator checks", at, key));
    }
  }
}

const Json& JsonSchemaSubset::resolve(const std::string& ref) const {
  constexpr std::string_view kPrefix = "#/$defs/";
  if (ref.rfind(kPrefix, 0) != 0) {
    throw std::invalid_argument(fmt::format("$ref '{}': only #/$defs/NAME is supported", ref));
  }
  const std::string name = ref.substr(kPrefix.size());
  if (!root_.contains("$defs") || !root_.at("$defs").contains(name)) {
    throw std::invalid_argument(fmt::format("$ref '{}': no such definition", ref));
  }
  return root_.at("$defs").at(name);
}

std::vector<std::string> JsonSchemaSubset::errors(const Json& instance) const {
  std::vector<std::string> out;
  validate(root_, instance, "", out);
  return out;
}

bool JsonSchemaSubset::valid(const Json& schema, const Json& instance) const {
  std::vector<std::string> scratch;
  validate(schema, instance, "", scratch);
  return scratch.empty();
}

void JsonSchemaSubset::validate(const Json& schema, const Json& instance, const std::string& path,
                                std::vector<std::string>& out) const {
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) out.push_back(shown(path) + ": not allowed here (schema false)");
    return;
  }
  const auto fail = [&](const std::string& message) {
    out.push_back(fmt::format("{}: {}", shown(path), message));
  };
  for (const auto& [key, value] : schema.items()) {
    if (key == "type") {
      const Json names = value.is_array() ? value : Json::array({value});
      bool any = false;
      for (const auto& name : names)
        any = any || has_type(instance, name.get<std::string>());
      if (!any) fail(fmt::format("{} is not of type {}", instance.dump(), value.dump()));
    } else if (key == "enum") {
      bool found = false;
      for (const auto& allowed : value)
        found = found || allowed == instance;
      if (!found) fail(fmt::format("{} is not one of {}", instance.dump(), value.dump()));
    } else if (key == "const") {
      if (instance != value) fail(fmt::format("{} is not {}", instance.dump(), value.dump()));
    } else if (key == "required") {
      if (!instance.is_object()) continue;
      for (const auto& name : value) {
        if (!instance.contains(name.get<std::string>())) {
          fail(fmt::format("required field '{}' is missing", name.get<std::string>()));
        }
      }
    } else if (key == "properties") {
      if (!instance.is_object()) continue;
      for (const auto& [name, sub] : value.items()) {
        if (instance.contains(name)) {
          validate(sub, instance.at(name), path + "/" + pointer_escape(name), out);
        }
      }
    } else if (key == "additionalProperties") {
      if (!instance.is_object()) continue;
      for (const auto& [name, member] : instance.items()) {
        if (schema.contains("properties") && schema.at("properties").contains(name)) continue;
        validate(value, member, path + "/" + pointer_escape(name), out);
      }
    } else if (key == "items") {
      if (!instance.is_array()) continue;
      for (std::size_t i = 0; i < instance.size(); ++i)
        validate(value, instance[i], fmt::format("{}/{}", path, i), out);
    } else if (key == "minItems" || key == "maxItems") {
      if (!instance.is_array()) continue;
      const auto bound = value.get<std::size_t>();
      if (key == "minItems" && instance.size() < bound) {
        fail(fmt::format("{} item(s), at least {} required", instance.size(), bound));
      } else if (key == "maxItems" && instance.size() > bound) {
        fail(fmt::format("{} item(s), at most {} allowed", instance.size(), bound));
      }
    } else if (key == "minimum" || key == "exclusiveMinimum") {
      if (!instance.is_number()) continue;
      const double number = instance.get<double>();
      const double bound = value.get<double>();
      if (key == "minimum" && number < bound) {
        fail(fmt::format("{} is less than the minimum {}", instance.dump(), value.dump()));
      } else if (key == "exclusiveMinimum" && number <= bound) {
        fail(fmt::format("{} is not greater than {}", instance.dump(), value.dump()));
      }
    } else if (key == "minLength") {
      if (instance.is_string() &&
          code_points(instance.get<std::string>()) < value.get<std::size_t>())
        fail(fmt::format("{} is shorter than {} character(s)", instance.dump(), value.dump()));
    } else if (key == "pattern") {
      if (!instance.is_string()) continue;
      // JSON Schema patterns are not anchored: search, not match.
      if (!std::regex_search(instance.get<std::string>(), patterns_.at(value.get<std::string>()))) {
        fail(fmt::format("{} does not match {}", instance.dump(), value.get<std::string>()));
      }
    } else if (key == "$ref") {
      validate(resolve(value.get<std::string>()), instance, path, out);
    } else if (key == "allOf") {
      for (const auto& sub : value)
        validate(sub, instance, path, out);
    } else if (key == "anyOf" || key == "oneOf") {
      std::size_t matches = 0;
      std::vector<std::string> why;
      for (std::size_t i = 0; i < value.size(); ++i) {
        std::vector<std::string> alternative;
        validate(value[i], instance, path, alternative);
        if (alternative.empty()) {
          ++matches;
        } else {
          why.push_back(fmt::format("[{}] {}", i, alternative.front()));
        }
      }
      if (matches == 0) {
        fail(fmt::format("matches none of the {} alternatives: {}", key, fmt::join(why, "; ")));
      } else if (key == "oneOf" && matches > 1) {
        fail(fmt::format("matches {} of the oneOf alternatives, exactly one allowed", matches));
      }
    } else if (key == "if") {
      const bool condition = valid(value, instance);
      if (condition && schema.contains("then")) {
        validate(schema.at("then"), instance, path, out);
      } else if (!condition && schema.contains("else")) {
        validate(schema.at("else"), instance, path, out);
      }
    }
    // then/else act through `if`; annotations change nothing.
  }
}

}  // namespace commcert::test_support
