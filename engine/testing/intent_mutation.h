// Test-only: random tool inputs and single-field mutations of them, for the approval mutation
// property (engine/approval_mutation_test.cc; docs/TESTING.md "Approval mutation property").
//
// GenerateInput draws a value that satisfies a JSON Schema of the subset the sample contracts
// use (type object / array / string / integer / boolean, enum, required, properties,
// minLength, maxLength, minimum, minItems, items). MutateOneField changes exactly one place of
// an input: a member's or an array element's value at any depth, its type (string <-> number,
// object <-> array, anything -> null, ...), or adds or removes one member or element. The
// result always differs from the input in canonical JSON.
//
// Everything is drawn from the caller's generator, so a seed reproduces a case exactly on the
// same standard library. Stateless; thread-safe as long as each thread has its own generator.
#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <random>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace reckon::testing {

using Rng = std::mt19937_64;

// One step of a path into a JSON value: a member name or an array index.
using PathStep = std::variant<std::string, std::size_t>;
using JsonPath = std::vector<PathStep>;

// "messages[2].role", "card_token"; "" for the root.
std::string PathText(const JsonPath& path);

// Whether `path` names a secret field or lies inside one: its leading member names, joined by
// dots, start with one of `secret_fields` (dotted, as in ToolContract::secret_fields) at a
// step boundary. Secret paths do not descend into arrays (base/intent_hash.h).
bool UnderSecretField(const JsonPath& path, std::span<const std::string> secret_fields);

boost::json::value GenerateInput(const boost::json::value& schema, Rng& rng);

struct Mutation {
  boost::json::value input;  // the mutated copy
  JsonPath path;             // the place that changed (for an added/removed member: the member)
  std::string what;          // "string -> number", "edit integer", "remove member", ...
};

// `member_names`: names an added member may take (the schema's property names, say); a name
// already present, or none given, makes it "extra_<random>".
Mutation MutateOneField(const boost::json::value& input, Rng& rng,
                        std::span<const std::string> member_names = {});

}  // namespace reckon::testing
