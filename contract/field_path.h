// Dotted field paths name a member of a tool input from its root: "amount_cents",
// "card.number". A path is one or more non-empty segments separated by '.'; it never descends
// into arrays (the same rule base/intent_hash.h uses for secret fields). Contracts use them for
// secret fields and approval conditions. Stateless and thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace reckon {

bool IsValidFieldPath(std::string_view path);

// "card.number" -> {"card", "number"}. Precondition: IsValidFieldPath(path).
std::vector<std::string> SplitFieldPath(std::string_view path);

// The member of `input` at `path`, or nullptr if any segment is absent or not an object.
// The pointer is valid as long as `input` is alive and unmodified.
const boost::json::value* FindField(const boost::json::value& input, std::string_view path);

// What a JSON Schema (as written, not compiled) declares about a path.
struct DeclaredField {
  const boost::json::value* schema = nullptr;  // the subschema; nullptr if not declared
  bool required = false;  // every segment is listed in its parent's "required"
};

// Follows nested "properties" from the root of `schema`. `schema` is nullptr in the result if
// some segment is not declared.
DeclaredField FindDeclaredField(const boost::json::value& schema, std::string_view path);

// Every declared leaf path, depth first in declaration order: a property whose subschema
// declares "properties" contributes its children instead of itself.
std::vector<std::string> DeclaredFieldPaths(const boost::json::value& schema);

}  // namespace reckon
