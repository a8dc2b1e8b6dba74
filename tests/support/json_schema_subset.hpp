#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "core/json.hpp"

namespace commcert::test_support {

// A JSON Schema (draft 2020-12) validator for exactly the keywords docs/schema/record.schema.json
// uses, so the C++ tests can hold records to the schema without a Python interpreter:
// type, enum, const, required, properties, additionalProperties, items, minItems, maxItems,
// minimum, exclusiveMinimum, minLength, pattern, allOf, anyOf, oneOf, if/then/else and
// $ref into the document's own $defs. Annotations ($schema, $id, title, description) are ignored.
//
// The constructor throws std::invalid_argument for any other keyword, or a $ref it cannot
// resolve: a schema that starts using something this validator does not check must fail the
// tests, not pass records unchecked.
class JsonSchemaSubset {
 public:
  explicit JsonSchemaSubset(Json schema);

  // Every violation as "<JSON pointer into the instance>: <what is wrong>"; empty when valid.
  [[nodiscard]] std::vector<std::string> errors(const Json& instance) const;

  // The schema at docs/schema/record.schema.json of this source tree.
  [[nodiscard]] static JsonSchemaSubset record_schema();

 private:
  void check_keywords(const Json& schema, const std::string& where);
  void validate(const Json& schema, const Json& instance, const std::string& path,
                std::vector<std::string>& out) const;
  [[nodiscard]] bool valid(const Json& schema, const Json& instance) const;
  [[nodiscard]] const Json& resolve(const std::string& ref) const;

  Json root_;
  std::map<std::string, std::regex> patterns_;
};

}  // namespace commcert::test_support
