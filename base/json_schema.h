// A JSON Schema validator for a documented subset of draft 2020-12, over boost::json::value.
//
// Supported keywords:
//   type                 a name or a non-empty array of names: object, array, string, integer,
//                        number, boolean, null. "integer" accepts int64/uint64 and finite
//                        doubles with no fraction; "number" accepts all three.
//   properties           object of member name -> schema
//   required             array of unique member names
//   additionalProperties boolean only (a schema here is refused, not ignored)
//   items                one schema, applied to every element (the tuple form is refused)
//   enum, const          equality as JSON Schema defines it (see JsonSchemaEqual)
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum   numbers (draft-04 booleans refused)
//   minLength, maxLength length in Unicode code points
//   pattern              std::regex ECMAScript, partial match (search), over UTF-8 bytes
//   minItems, maxItems
// Annotations, accepted and ignored: $schema, $id, title, description, default, examples.
// `true` and `false` are accepted as schemas (accept everything / nothing).
//
// Any other keyword makes the schema invalid, so a schema never silently validates less than
// its author meant ("unsupported keyword 'oneOf' at schema path /properties/x").
//
// Violation messages name the instance path ("lines[2].sku", "(root)") and the rule, and never
// quote the instance's values: inputs may hold secrets, and these messages reach journals and
// traces. They quote the schema instead ("must be >= 1").
//
// A JsonSchema is immutable after Compile; copies share the compiled tree, and every method is
// safe to call from many threads at once.
#pragma once

#include <boost/json/value.hpp>

#include <memory>
#include <string>
#include <vector>

#include "reckon/base/error.h"

namespace reckon {

namespace json_schema_internal {
struct Node;
}  // namespace json_schema_internal

// One failed rule: where in the instance, and what the rule says.
struct SchemaViolation {
  std::string instance_path;  // "amount_cents", "card.number", "lines[2]"; "(root)" for the root
  std::string message;        // "must be an integer, got string"

  std::string ToString() const { return instance_path + ": " + message; }
  friend bool operator==(const SchemaViolation&, const SchemaViolation&) = default;
};

class JsonSchema {
 public:
  // Compiles `schema`. Fails with Errc::kInvalidArgument naming the schema path (a JSON
  // Pointer, "(root)" for the root) of the first problem: an unsupported keyword, a keyword
  // with a value of the wrong shape, a pattern that is not a valid regular expression.
  static Result<JsonSchema> Compile(const boost::json::value& schema);

  // Success if `instance` satisfies the schema. Otherwise Errc::kInvalidArgument whose message
  // lists every violation found, joined with "; " ("amount_cents: must be an integer, got
  // string; reason: missing required property").
  Result<void> Validate(const boost::json::value& instance) const;

  // Every violation, depth first: at each object its missing required properties, then its
  // members in the instance's order. Empty when `instance` is valid.
  std::vector<SchemaViolation> Violations(const boost::json::value& instance) const;

 private:
  explicit JsonSchema(std::shared_ptr<const json_schema_internal::Node> root)
      : root_(std::move(root)) {}

  // Shared, never mutated: copying a compiled schema must be cheap (contracts are copied into
  // registries), and the tree is immutable, so sharing is safe across threads.
  std::shared_ptr<const json_schema_internal::Node> root_;
};

// Equality as JSON Schema defines it for enum and const: numbers by mathematical value (1 and
// 1.0 are equal), objects regardless of member order, arrays element by element.
bool JsonSchemaEqual(const boost::json::value& a, const boost::json::value& b);

// Compares two numbers (int64, uint64 or double) by value: negative, zero or positive.
// Precondition: both are numbers.
int CompareJsonNumbers(const boost::json::value& a, const boost::json::value& b);

// The JSON type name of a value as the messages use it: "object", "array", "string",
// "integer" (an int64/uint64), "number" (a double), "boolean", "null".
const char* JsonTypeName(const boost::json::value& value);

}  // namespace reckon
