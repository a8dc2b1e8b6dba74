#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "json_schema_subset.hpp"

namespace commcert::test_support {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

std::vector<std::string> errors_of(const char* schema, const char* instance) {
  return JsonSchemaSubset(Json::parse(schema)).errors(Json::parse(instance));
}

TEST(JsonSchemaSubset, TypeAcceptsAnyListedTypeAndWholeFloatsAsIntegers) {
  EXPECT_THAT(errors_of(R"({"type": "integer"})", "3"), IsEmpty());
  EXPECT_THAT(errors_of(R"({"type": "integer"})", "3.0"), IsEmpty());  // as JSON Schema says
  EXPECT_THAT(errors_of(R"({"type": "integer"})", "3.5"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"type": "number"})", "3"), IsEmpty());
  EXPECT_THAT(errors_of(R"({"type": ["string", "null"]})", "null"), IsEmpty());
  EXPECT_THAT(errors_of(R"({"type": ["string", "null"]})", "0"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"type": "boolean"})", "0"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"type": "object"})", "[]"), SizeIs(1));
}

TEST(JsonSchemaSubset, RequiredAndNestedPropertiesReportWhereTheyFailed) {
  const char* schema = R"({"type": "object", "required": ["a"],
      "properties": {"a": {"type": "object", "properties": {"b": {"minimum": 0}}}}})";
  EXPECT_THAT(errors_of(schema, R"({"a": {"b": 1}})"), IsEmpty());
  EXPECT_THAT(errors_of(schema, R"({"x": 1})"),
              ElementsAre("(record): required field 'a' is missing"));
  EXPECT_THAT(errors_of(schema, R"({"a": {"b": -1}})"),
              ElementsAre("/a/b: -1 is less than the minimum 0"));
}

TEST(JsonSchemaSubset, EnumConstAndNumericBounds) {
  EXPECT_THAT(errors_of(R"({"enum": ["sum", null]})", "null"), IsEmpty());
  EXPECT_THAT(errors_of(R"({"enum": ["sum", null]})", R"("avg")"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"const": 1})", "1"), IsEmpty());
  EXPECT_THAT(errors_of(R"({"const": 1})", "2"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"const": true})", "1"), SizeIs(1));  // no truthiness
  EXPECT_THAT(errors_of(R"({"exclusiveMinimum": 0})", "0"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"exclusiveMinimum": 0})", "1e-9"), IsEmpty());
  // Bounds apply to numbers only: null passes a minimum, as in JSON Schema.
  EXPECT_THAT(errors_of(R"({"type": ["integer", "null"], "minimum": 0})", "null"), IsEmpty());
}

TEST(JsonSchemaSubset, StringsArraysAndAdditionalProperties) {
  EXPECT_THAT(errors_of(R"({"minLength": 1})", R"("")"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"minLength": 3})", R"("µs")"), SizeIs(1));  // characters, not bytes
  EXPECT_THAT(errors_of(R"({"pattern": "^n[0-9]+$"})", R"("n12")"), IsEmpty());
  EXPECT_THAT(errors_of(R"({"pattern": "^n[0-9]+$"})", R"("n1;rm")"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"pattern": "[0-9]"})", R"("abc1")"), IsEmpty());  // not anchored
  EXPECT_THAT(errors_of(R"({"minItems": 1, "items": {"type": "integer"}})", "[]"), SizeIs(1));
  EXPECT_THAT(errors_of(R"({"items": {"type": "integer"}})", R"([1, "2"])"),
              ElementsAre(HasSubstr("/1:")));
  EXPECT_THAT(errors_of(R"({"maxItems": 1})", "[1, 2]"), SizeIs(1));
  const char* counters = R"({"properties": {"name": {"type": "string"}},
                            "additionalProperties": {"type": "integer", "minimum": 0}})";
  EXPECT_THAT(errors_of(counters, R"({"name": "x", "symbol_error": 3})"), IsEmpty());
  EXPECT_THAT(errors_of(counters, R"({"name": "x", "symbol_error": -3})"),
              ElementsAre(HasSubstr("/symbol_error:")));
}

TEST(JsonSchemaSubset, CombinatorsRefsAndConditionals) {
  const char* schema = R"({
    "$defs": {"count": {"type": "integer", "minimum": 0}},
    "properties": {
      "one": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/count"}]},
      "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
      "overlap": {"oneOf": [{"type": "integer"}, {"type": "number"}]}
    },
    "allOf": [{"if": {"properties": {"status": {"const": "fail"}}, "required": ["status"]},
               "then": {"required": ["reason"]}}]})";
  EXPECT_THAT(errors_of(schema, R"({"one": null, "any": 3})"), IsEmpty());
  EXPECT_THAT(errors_of(schema, R"({"one": -1})"), ElementsAre(HasSubstr("matches none")));
  EXPECT_THAT(errors_of(schema, R"({"any": true})"), SizeIs(1));
  EXPECT_THAT(errors_of(schema, R"({"overlap": 2})"), ElementsAre(HasSubstr("exactly one")));
  EXPECT_THAT(errors_of(schema, R"({"status": "ok"})"), IsEmpty());
  EXPECT_THAT(errors_of(schema, R"({"status": "fail"})"),
              ElementsAre("(record): required field 'reason' is missing"));
}

TEST(JsonSchemaSubset, RefusesKeywordsItDoesNotCheckAndUnresolvableRefs) {
  // Otherwise a schema that grew a keyword would pass records this validator never checked.
  EXPECT_THROW(JsonSchemaSubset(Json::parse(R"({"maximum": 3})")), std::invalid_argument);
  EXPECT_THROW(JsonSchemaSubset(Json::parse(R"({"properties": {"a": {"format": "date-time"}}})")),
               std::invalid_argument);
  EXPECT_THROW(JsonSchemaSubset(Json::parse(R"({"$ref": "#/$defs/missing"})")),
               std::invalid_argument);
  EXPECT_THROW(JsonSchemaSubset(Json::parse(R"({"$ref": "other.json#/x"})")),
               std::invalid_argument);
  EXPECT_THROW(JsonSchemaSubset(Json::parse(R"({"type": "float"})")), std::invalid_argument);
}

TEST(JsonSchemaSubset, ReadsTheRecordSchemaAndRejectsWhatItForbids) {
  const JsonSchemaSubset schema = JsonSchemaSubset::record_schema();
  Json burn = Json::parse(R"({"schema": 1, "run_id": "r", "kind": "burn", "status": "ok",
      "time": "2026-11-22T00:00:00.000Z", "host": "n1", "rank": 0, "local_rank": 0,
      "gpu": null, "kernel": "gemm_bf16"})");
  EXPECT_THAT(schema.errors(burn), Not(IsEmpty()));  // a measurement without its fields
  burn["status"] = "skipped";
  EXPECT_THAT(schema.errors(burn), ElementsAre("(record): required field 'reason' is missing"));
  burn["reason"] = "this build has no CUDA support";
  EXPECT_THAT(schema.errors(burn), IsEmpty());
  burn["host"] = "bad name;rm";
  EXPECT_THAT(schema.errors(burn), ElementsAre(HasSubstr("/host:")));
  burn["host"] = "n1";
  burn["kind"] = "health";  // which component was skipped?
  EXPECT_THAT(schema.errors(burn), ElementsAre(HasSubstr("'component' is missing")));
}

}  // namespace
}  // namespace commcert::test_support
