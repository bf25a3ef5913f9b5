#include "reckon/base/json_schema.h"

#include <boost/json/parse.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace reckon {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

boost::json::value J(const char* text) { return boost::json::parse(text); }

JsonSchema MustCompile(const char* schema) {
  auto compiled = JsonSchema::Compile(J(schema));
  EXPECT_TRUE(compiled.has_value()) << compiled.error().ToString();
  return compiled.value();
}

// The error message for `instance`, or "" if it is valid.
std::string Check(const char* schema, const char* instance) {
  auto result = MustCompile(schema).Validate(J(instance));
  if (result) return "";
  EXPECT_EQ(result.error().code(), Errc::kInvalidArgument);
  return result.error().message();
}

std::string CompileError(const char* schema) {
  auto compiled = JsonSchema::Compile(J(schema));
  if (compiled) return "";
  EXPECT_EQ(compiled.error().code(), Errc::kInvalidArgument);
  return compiled.error().message();
}

TEST(JsonSchemaTest, TypeNamesTheInstanceTypeInTheMessage) {
  EXPECT_EQ(Check(R"({"type":"object"})", "[]"), "(root): must be an object, got array");
  EXPECT_EQ(Check(R"({"type":"string"})", "1"), "(root): must be a string, got integer");
  EXPECT_EQ(Check(R"({"type":"boolean"})", "null"), "(root): must be a boolean, got null");
  EXPECT_EQ(Check(R"({"type":"null"})", "false"), "(root): must be null, got boolean");
  EXPECT_EQ(Check(R"({"type":"array"})", "{}"), "(root): must be an array, got object");
  EXPECT_EQ(Check(R"({"type":"number"})", R"("1")"), "(root): must be a number, got string");
  EXPECT_EQ(Check(R"({"type":"string"})", R"("x")"), "");
}

TEST(JsonSchemaTest, IntegerAcceptsWholeDoublesAndBothIntegerKinds) {
  const char* schema = R"({"type":"integer"})";
  EXPECT_EQ(Check(schema, "-5"), "");
  EXPECT_EQ(Check(schema, "18446744073709551615"), "");  // uint64
  EXPECT_EQ(Check(schema, "2.0"), "");
  EXPECT_EQ(Check(schema, "1e3"), "");
  EXPECT_EQ(Check(schema, "2.5"), "(root): must be an integer, got number");
  EXPECT_EQ(Check(R"({"type":"number"})", "2.5"), "");
  EXPECT_EQ(Check(R"({"type":"number"})", "7"), "");
}

TEST(JsonSchemaTest, TypeArrayAcceptsAnyListedType) {
  const char* schema = R"({"type":["string","null"]})";
  EXPECT_EQ(Check(schema, R"("a")"), "");
  EXPECT_EQ(Check(schema, "null"), "");
  EXPECT_EQ(Check(schema, "3"), "(root): must be a string or null, got integer");
  EXPECT_EQ(Check(R"({"type":["object","array","boolean"]})", "1.5"),
            "(root): must be an object, an array or a boolean, got number");
}

TEST(JsonSchemaTest, RequiredPropertiesAndNestedPaths) {
  const char* schema = R"({
    "type":"object",
    "required":["amount_cents","reason","card"],
    "properties":{
      "amount_cents":{"type":"integer"},
      "reason":{"type":"string"},
      "card":{"type":"object","required":["number"],
              "properties":{"number":{"type":"string"},"exp":{"type":"string"}}}
    }})";
  EXPECT_EQ(Check(schema, R"({"amount_cents":"12","card":{"exp":1}})"),
            "reason: missing required property; amount_cents: must be an integer, got string; "
            "card.number: missing required property; card.exp: must be a string, got integer");
  EXPECT_EQ(Check(schema, R"({"amount_cents":1,"reason":"r","card":{"number":"4"}})"), "");
}

TEST(JsonSchemaTest, AdditionalPropertiesFalseRefusesUndeclaredMembers) {
  const char* closed = R"({"type":"object","properties":{"a":{}},"additionalProperties":false})";
  EXPECT_EQ(Check(closed, R"({"a":1,"b":2})"),
            "b: property not allowed (additionalProperties is false)");
  EXPECT_EQ(Check(R"({"properties":{"a":{}},"additionalProperties":true})", R"({"b":2})"), "");
  EXPECT_EQ(Check(R"({"properties":{"a":{}}})", R"({"b":2})"), "");
}

TEST(JsonSchemaTest, ItemsAppliesToEveryElementWithIndexedPaths) {
  const char* schema = R"({"type":"object","properties":{"lines":{"type":"array",
      "items":{"type":"object","required":["sku"],"properties":{"sku":{"type":"string"}}}}}})";
  EXPECT_EQ(Check(schema, R"({"lines":[{"sku":"a"},{"sku":3},{}]})"),
            "lines[1].sku: must be a string, got integer; lines[2].sku: missing required "
            "property");
  EXPECT_EQ(Check(R"({"items":{"type":"integer"}})", "[1, 2, true]"),
            "[2]: must be an integer, got boolean");
}

TEST(JsonSchemaTest, EnumAndConstUseJsonEquality) {
  EXPECT_EQ(Check(R"({"enum":["a","b",1]})", R"("b")"), "");
  EXPECT_EQ(Check(R"({"enum":["a","b",1]})", "1.0"), "");
  EXPECT_EQ(Check(R"({"enum":["a","b"]})", R"("c")"), R"((root): must be one of ["a","b"])");
  EXPECT_EQ(Check(R"({"const":{"x":[1,2],"y":null}})", R"({"y":null,"x":[1.0,2]})"), "");
  EXPECT_EQ(Check(R"({"const":5})", "6"), "(root): must equal 5");
  EXPECT_EQ(Check(R"({"const":"5"})", "5"), R"((root): must equal "5")");
}

TEST(JsonSchemaTest, NumericBounds) {
  EXPECT_EQ(Check(R"({"minimum":1})", "1"), "");
  EXPECT_EQ(Check(R"({"minimum":1})", "0.5"), "(root): must be >= 1");
  EXPECT_EQ(Check(R"({"maximum":10})", "10"), "");
  EXPECT_EQ(Check(R"({"maximum":10})", "10.01"), "(root): must be <= 10");
  EXPECT_EQ(Check(R"({"exclusiveMinimum":0})", "0"), "(root): must be > 0");
  EXPECT_EQ(Check(R"({"exclusiveMinimum":0})", "1e-9"), "");
  EXPECT_EQ(Check(R"({"exclusiveMaximum":100})", "100"), "(root): must be < 100");
  EXPECT_EQ(Check(R"({"exclusiveMaximum":100})", "99"), "");
  // Bounds apply to numbers only.
  EXPECT_EQ(Check(R"({"minimum":1})", R"("0")"), "");
}

TEST(JsonSchemaTest, BoundsCompareLargeIntegersExactly) {
  EXPECT_EQ(Check(R"({"maximum":9007199254740993})", "9007199254740992"), "");
  EXPECT_EQ(Check(R"({"maximum":9007199254740992})", "9007199254740993"),
            "(root): must be <= 9007199254740992");
  EXPECT_EQ(Check(R"({"minimum":-1})", "18446744073709551615"), "");
  EXPECT_EQ(Check(R"({"maximum":-1})", "18446744073709551615"), "(root): must be <= -1");
}

TEST(JsonSchemaTest, StringLengthCountsCodePoints) {
  // "héllo" is five code points and six bytes; "日本" is two code points and six bytes.
  EXPECT_EQ(Check(R"({"maxLength":5})", "\"h\u00e9llo\""), "");
  EXPECT_EQ(Check(R"({"minLength":3})", "\"\u65e5\u672c\""),
            "(root): must be at least 3 characters long");
  EXPECT_EQ(Check(R"({"maxLength":1})", R"("ab")"), "(root): must be at most 1 character long");
  EXPECT_EQ(Check(R"({"minLength":1})", "[]"), "");
}

TEST(JsonSchemaTest, PatternIsAPartialMatch) {
  EXPECT_EQ(Check(R"({"pattern":"pay-[0-9]+"})", R"("ref pay-12 x")"), "");
  EXPECT_EQ(Check(R"({"pattern":"^pay-[0-9]+$"})", R"("ref pay-12 x")"),
            "(root): must match pattern '^pay-[0-9]+$'");
  EXPECT_EQ(Check(R"({"pattern":"^pay-"})", "12"), "");
}

TEST(JsonSchemaTest, ItemCounts) {
  EXPECT_EQ(Check(R"({"minItems":1})", "[]"), "(root): must have at least 1 element");
  EXPECT_EQ(Check(R"({"maxItems":2})", "[1,2,3]"), "(root): must have at most 2 elements");
  EXPECT_EQ(Check(R"({"minItems":1,"maxItems":2})", "[1,2]"), "");
}

TEST(JsonSchemaTest, MessagesNeverQuoteInstanceValues) {
  const char* schema = R"({"type":"object","properties":{"card_token":
      {"type":"string","pattern":"^tok_","maxLength":8,"enum":["tok_a"]}}})";
  std::string message = Check(schema, R"({"card_token":"secret-value-123"})");
  EXPECT_THAT(message, HasSubstr("card_token: must match pattern '^tok_'"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("secret-value-123")));
}

TEST(JsonSchemaTest, BooleanSchemasAndAnnotations) {
  EXPECT_EQ(Check("true", R"({"anything":1})"), "");
  EXPECT_EQ(Check(R"({"properties":{"x":false}})", R"({"x":1})"),
            "x: not allowed (the schema is false)");
  EXPECT_EQ(Check(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x",
                      "title":"t","description":"d","default":1,"examples":[1],
                      "type":"integer"})",
                  "3"),
            "");
}

TEST(JsonSchemaTest, ViolationsAreStructured) {
  auto schema = MustCompile(R"({"type":"object","required":["a"],
                                "properties":{"b":{"type":"string"}}})");
  EXPECT_THAT(schema.Violations(J(R"({"b":1})")),
              ElementsAre(SchemaViolation{"a", "missing required property"},
                          SchemaViolation{"b", "must be a string, got integer"}));
  EXPECT_TRUE(schema.Violations(J(R"({"a":0})")).empty());
}

TEST(JsonSchemaTest, LongViolationListsAreCapped) {
  auto schema = MustCompile(R"({"items":{"type":"string"}})");
  boost::json::array many;
  for (int i = 0; i < 25; ++i) many.emplace_back(i);
  auto result = schema.Validate(many);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("[19]: must be a string, got integer; and 5 more"));
  EXPECT_EQ(schema.Violations(many).size(), 25u);
}

TEST(JsonSchemaTest, CopiesShareTheCompiledTree) {
  JsonSchema copy = MustCompile(R"({"type":"string"})");
  JsonSchema other = copy;
  EXPECT_FALSE(other.Validate(J("1")));
  EXPECT_TRUE(copy.Validate(J(R"("s")")));
}

TEST(JsonSchemaCompileTest, UnsupportedKeywordsNameTheSchemaPath) {
  EXPECT_EQ(CompileError(R"({"type":"object","properties":{"x":{"oneOf":[]}}})"),
            "unsupported keyword 'oneOf' at schema path /properties/x");
  EXPECT_EQ(CompileError(R"({"$ref":"#/defs/a"})"),
            "unsupported keyword '$ref' at schema path (root)");
  EXPECT_EQ(CompileError(R"({"properties":{"a/b":{"items":{"format":"email"}}}})"),
            "unsupported keyword 'format' at schema path /properties/a~1b/items");
}

TEST(JsonSchemaCompileTest, KeywordValuesMustHaveTheRightShape) {
  EXPECT_THAT(CompileError(R"({"type":"int"})"), HasSubstr("'type' names an unknown type \"int\""));
  EXPECT_THAT(CompileError(R"({"type":[]})"), HasSubstr("non-empty array"));
  EXPECT_THAT(CompileError(R"({"type":["string","string"]})"), HasSubstr("twice"));
  EXPECT_THAT(CompileError(R"({"properties":[]})"), HasSubstr("'properties' must be an object"));
  EXPECT_THAT(CompileError(R"({"required":"a"})"), HasSubstr("'required' must be an array"));
  EXPECT_THAT(CompileError(R"({"required":["a","a"]})"), HasSubstr("lists 'a' twice"));
  EXPECT_THAT(CompileError(R"({"additionalProperties":{"type":"string"}})"),
              HasSubstr("'additionalProperties' must be true or false"));
  EXPECT_THAT(CompileError(R"({"items":[{"type":"string"}]})"),
              HasSubstr("the array form is not supported"));
  EXPECT_THAT(CompileError(R"({"enum":[]})"), HasSubstr("'enum' must be a non-empty array"));
  EXPECT_THAT(CompileError(R"({"minimum":"1"})"), HasSubstr("'minimum' must be a number"));
  EXPECT_THAT(CompileError(R"({"exclusiveMaximum":true})"), HasSubstr("draft-04"));
  EXPECT_THAT(CompileError(R"({"minLength":-1})"),
              HasSubstr("'minLength' must be a non-negative integer"));
  EXPECT_THAT(CompileError(R"({"maxItems":1.5})"),
              HasSubstr("'maxItems' must be a non-negative integer"));
  EXPECT_THAT(CompileError(R"({"pattern":"(unclosed"})"),
              HasSubstr("'pattern' is not a valid ECMAScript regular expression"));
  EXPECT_THAT(CompileError(R"({"pattern":1})"), HasSubstr("'pattern' must be a string"));
  EXPECT_THAT(CompileError("3"), HasSubstr("a schema must be an object or a boolean"));
  EXPECT_EQ(CompileError(R"({"minLength":2.0,"maxItems":0})"), "");
}

TEST(JsonSchemaCompileTest, RefusesRequiredPropertiesThatCanNeverBePresent) {
  EXPECT_THAT(CompileError(R"({"properties":{"a":{}},"required":["b"],
                               "additionalProperties":false})"),
              HasSubstr("required property 'b' is not in 'properties'"));
  EXPECT_EQ(CompileError(R"({"required":["b"]})"), "");
}

TEST(JsonSchemaHelpersTest, EqualityAndComparison) {
  EXPECT_TRUE(JsonSchemaEqual(J("1"), J("1.0")));
  EXPECT_TRUE(JsonSchemaEqual(J(R"({"a":1,"b":2})"), J(R"({"b":2,"a":1})")));
  EXPECT_FALSE(JsonSchemaEqual(J("[1,2]"), J("[2,1]")));
  EXPECT_FALSE(JsonSchemaEqual(J(R"({"a":1})"), J(R"({"a":1,"b":2})")));
  EXPECT_FALSE(JsonSchemaEqual(J("true"), J("1")));
  EXPECT_LT(CompareJsonNumbers(J("-1"), J("18446744073709551615")), 0);
  EXPECT_GT(CompareJsonNumbers(J("2.5"), J("2")), 0);
  EXPECT_EQ(CompareJsonNumbers(J("3"), J("3.0")), 0);
  EXPECT_STREQ(JsonTypeName(J("3")), "integer");
  EXPECT_STREQ(JsonTypeName(J("3.5")), "number");
}

}  // namespace
}  // namespace reckon
