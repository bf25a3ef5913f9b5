// GCC 12 reports a false -Wmaybe-uninitialized inside libstdc++'s <regex> (std::function moves
// in the NFA builder) when optimizing with sanitizers (GCC bug 105562). It must be silenced
// before any header pulls in <functional>.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "reckon/base/json_schema.h"

#include <boost/json/serialize.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <regex>
#include <string_view>
#include <utility>

namespace reckon {
namespace json_schema_internal {

enum TypeBit : unsigned {
  kObject = 1u << 0,
  kArray = 1u << 1,
  kString = 1u << 2,
  kInteger = 1u << 3,
  kNumber = 1u << 4,  // includes integers
  kBoolean = 1u << 5,
  kNull = 1u << 6,
};

struct Node {
  std::optional<bool> boolean_schema;  // set for the schemas `true` and `false`
  unsigned types = 0;                  // 0: any type
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> properties;
  std::vector<std::string> required;
  bool additional_properties = true;
  std::unique_ptr<Node> items;
  std::optional<boost::json::array> enum_values;
  std::optional<boost::json::value> const_value;
  std::optional<boost::json::value> minimum, maximum, exclusive_minimum, exclusive_maximum;
  std::optional<std::uint64_t> min_length, max_length, min_items, max_items;
  std::optional<std::regex> pattern;
  std::string pattern_source;
};

}  // namespace json_schema_internal

namespace {

using json_schema_internal::Node;
namespace json = boost::json;

struct TypeName {
  std::string_view name;
  unsigned bit;
  std::string_view with_article;
};

constexpr TypeName kTypeNames[] = {
    {"object", json_schema_internal::kObject, "an object"},
    {"array", json_schema_internal::kArray, "an array"},
    {"string", json_schema_internal::kString, "a string"},
    {"integer", json_schema_internal::kInteger, "an integer"},
    {"number", json_schema_internal::kNumber, "a number"},
    {"boolean", json_schema_internal::kBoolean, "a boolean"},
    {"null", json_schema_internal::kNull, "null"},
};

constexpr std::string_view kAnnotations[] = {"$schema", "$id",     "title",
                                             "description", "default", "examples"};

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  for (char c : token) {
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

Error SchemaError(const std::string& pointer, std::string_view problem) {
  std::string message(problem);
  message += " at schema path ";
  message += pointer.empty() ? "(root)" : pointer;
  return Err(Errc::kInvalidArgument, std::move(message));
}

bool IsIntegral(const json::value& v) {
  if (v.is_int64() || v.is_uint64()) return true;
  if (!v.is_double()) return false;
  double d = v.get_double();
  return std::isfinite(d) && std::trunc(d) == d;
}

Result<std::uint64_t> NonNegativeInteger(const json::value& v, std::string_view keyword,
                                         const std::string& pointer) {
  if (v.is_uint64()) return v.get_uint64();
  if (v.is_int64() && v.get_int64() >= 0) return static_cast<std::uint64_t>(v.get_int64());
  if (v.is_double() && IsIntegral(v) && v.get_double() >= 0 && v.get_double() < 1.8e19) {
    return static_cast<std::uint64_t>(v.get_double());
  }
  return SchemaError(pointer, "'" + std::string(keyword) + "' must be a non-negative integer");
}

Result<unsigned> CompileType(const json::value& v, const std::string& pointer) {
  auto one = [&](const json::value& name) -> Result<unsigned> {
    if (name.is_string()) {
      for (const TypeName& t : kTypeNames) {
        if (name.get_string() == t.name) return t.bit;
      }
    }
    return SchemaError(pointer, "'type' names an unknown type " + json::serialize(name) +
                                    " (use object, array, string, integer, number, boolean "
                                    "or null)");
  };
  if (v.is_string()) return one(v);
  if (!v.is_array() || v.get_array().empty()) {
    return SchemaError(pointer, "'type' must be a type name or a non-empty array of names");
  }
  unsigned bits = 0;
  for (const json::value& name : v.get_array()) {
    RECKON_TRY(unsigned bit, one(name));
    if (bits & bit) return SchemaError(pointer, "'type' lists " + json::serialize(name) + " twice");
    bits |= bit;
  }
  return bits;
}

Result<std::unique_ptr<Node>> CompileNode(const json::value& schema, const std::string& pointer);

Result<void> CompileKeyword(Node& node, std::string_view key, const json::value& v,
                            const std::string& pointer) {
  const std::string quoted = "'" + std::string(key) + "'";
  if (key == "type") {
    RECKON_TRY(node.types, CompileType(v, pointer));
  } else if (key == "properties") {
    if (!v.is_object()) return SchemaError(pointer, "'properties' must be an object");
    for (const auto& member : v.get_object()) {
      std::string child = pointer + "/properties/" + EscapePointerToken(member.key());
      RECKON_TRY(auto compiled, CompileNode(member.value(), child));
      node.properties.emplace_back(std::string(member.key()), std::move(compiled));
    }
  } else if (key == "required") {
    if (!v.is_array()) return SchemaError(pointer, "'required' must be an array of names");
    for (const json::value& name : v.get_array()) {
      if (!name.is_string()) return SchemaError(pointer, "'required' must be an array of names");
      std::string s(name.get_string());
      for (const std::string& seen : node.required) {
        if (seen == s) return SchemaError(pointer, "'required' lists '" + s + "' twice");
      }
      node.required.push_back(std::move(s));
    }
  } else if (key == "additionalProperties") {
    if (!v.is_bool()) {
      return SchemaError(pointer, "'additionalProperties' must be true or false (a schema "
                                  "there is not supported)");
    }
    node.additional_properties = v.get_bool();
  } else if (key == "items") {
    if (v.is_array()) {
      return SchemaError(pointer, "'items' must be a single schema (the array form is not "
                                  "supported)");
    }
    RECKON_TRY(node.items, CompileNode(v, pointer + "/items"));
  } else if (key == "enum") {
    if (!v.is_array() || v.get_array().empty()) {
      return SchemaError(pointer, "'enum' must be a non-empty array");
    }
    node.enum_values = v.get_array();
  } else if (key == "const") {
    node.const_value = v;
  } else if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
             key == "exclusiveMaximum") {
    if (!v.is_number()) {
      std::string hint = v.is_bool() ? " (the draft-04 boolean form is not supported)" : "";
      return SchemaError(pointer, quoted + " must be a number" + hint);
    }
    auto& slot = key == "minimum"            ? node.minimum
                 : key == "maximum"          ? node.maximum
                 : key == "exclusiveMinimum" ? node.exclusive_minimum
                                             : node.exclusive_maximum;
    slot = v;
  } else if (key == "minLength" || key == "maxLength" || key == "minItems" ||
             key == "maxItems") {
    RECKON_TRY(std::uint64_t n, NonNegativeInteger(v, key, pointer));
    auto& slot = key == "minLength"   ? node.min_length
                 : key == "maxLength" ? node.max_length
                 : key == "minItems"  ? node.min_items
                                      : node.max_items;
    slot = n;
  } else if (key == "pattern") {
    if (!v.is_string()) return SchemaError(pointer, "'pattern' must be a string");
    node.pattern_source = std::string(v.get_string());
    try {
      node.pattern.emplace(node.pattern_source, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      // std::regex reports bad patterns only by throwing; this is the boundary.
      return SchemaError(pointer, "'pattern' is not a valid ECMAScript regular expression (" +
                                      std::string(e.what()) + ")");
    }
  } else {
    for (std::string_view annotation : kAnnotations) {
      if (key == annotation) return Ok();
    }
    return SchemaError(pointer, "unsupported keyword " + quoted);
  }
  return Ok();
}

Result<std::unique_ptr<Node>> CompileNode(const json::value& schema, const std::string& pointer) {
  auto node = std::make_unique<Node>();
  if (schema.is_bool()) {
    node->boolean_schema = schema.get_bool();
    return node;
  }
  if (!schema.is_object()) return SchemaError(pointer, "a schema must be an object or a boolean");
  for (const auto& member : schema.get_object()) {
    RECKON_TRY(CompileKeyword(*node, member.key(), member.value(), pointer));
  }
  if (!node->additional_properties) {
    for (const std::string& name : node->required) {
      bool declared = false;
      for (const auto& property : node->properties) declared |= property.first == name;
      if (!declared) {
        return SchemaError(pointer, "required property '" + name +
                                        "' is not in 'properties' while additionalProperties "
                                        "is false, so nothing can match");
      }
    }
  }
  return node;
}

// ---- validation ----

std::string Child(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "." + std::string(name);
}

std::string Element(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string TypeList(unsigned bits) {
  std::vector<std::string_view> names;
  for (const TypeName& t : kTypeNames) {
    // "integer" is implied by "number"; name it only when "number" is absent.
    if (t.bit == json_schema_internal::kInteger && (bits & json_schema_internal::kNumber)) continue;
    if (bits & t.bit) names.push_back(t.with_article);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

bool MatchesType(unsigned bits, const json::value& v) {
  using namespace json_schema_internal;
  switch (v.kind()) {
    case json::kind::object: return bits & kObject;
    case json::kind::array: return bits & kArray;
    case json::kind::string: return bits & kString;
    case json::kind::bool_: return bits & kBoolean;
    case json::kind::null: return bits & kNull;
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return (bits & kNumber) || ((bits & kInteger) && IsIntegral(v));
  }
  return false;
}

std::uint64_t CodePoints(json::string_view s) {
  std::uint64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string Plural(std::uint64_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

class Validator {
 public:
  void Check(const Node& node, const json::value& v, const std::string& path) {
    if (node.boolean_schema) {
      if (!*node.boolean_schema) Add(path, "not allowed (the schema is false)");
      return;
    }
    if (node.types != 0 && !MatchesType(node.types, v)) {
      Add(path, "must be " + TypeList(node.types) + ", got " + JsonTypeName(v));
      return;  // the remaining rules would only restate the type mismatch
    }
    if (node.enum_values) {
      bool found = false;
      for (const json::value& option : *node.enum_values) found |= JsonSchemaEqual(v, option);
      if (!found) Add(path, "must be one of " + json::serialize(*node.enum_values));
    }
    if (node.const_value && !JsonSchemaEqual(v, *node.const_value)) {
      Add(path, "must equal " + json::serialize(*node.const_value));
    }
    if (v.is_number()) CheckNumber(node, v, path);
    if (v.is_string()) CheckString(node, v.get_string(), path);
    if (v.is_array()) CheckArray(node, v.get_array(), path);
    if (v.is_object()) CheckObject(node, v.get_object(), path);
  }

  std::vector<SchemaViolation> Take() { return std::move(violations_); }

 private:
  void Add(const std::string& path, std::string message) {
    violations_.push_back({path.empty() ? "(root)" : path, std::move(message)});
  }

  void CheckNumber(const Node& node, const json::value& v, const std::string& path) {
    auto bound = [&](const std::optional<json::value>& limit, std::string_view op,
                     bool (*ok)(int)) {
      if (limit && !ok(CompareJsonNumbers(v, *limit))) {
        Add(path, "must be " + std::string(op) + " " + json::serialize(*limit));
      }
    };
    bound(node.minimum, ">=", [](int c) { return c >= 0; });
    bound(node.maximum, "<=", [](int c) { return c <= 0; });
    bound(node.exclusive_minimum, ">", [](int c) { return c > 0; });
    bound(node.exclusive_maximum, "<", [](int c) { return c < 0; });
  }

  void CheckString(const Node& node, json::string_view s, const std::string& path) {
    std::uint64_t length = CodePoints(s);
    if (node.min_length && length < *node.min_length) {
      Add(path, "must be at least " + Plural(*node.min_length, "character") + " long");
    }
    if (node.max_length && length > *node.max_length) {
      Add(path, "must be at most " + Plural(*node.max_length, "character") + " long");
    }
    if (node.pattern && !std::regex_search(s.begin(), s.end(), *node.pattern)) {
      Add(path, "must match pattern '" + node.pattern_source + "'");
    }
  }

  void CheckArray(const Node& node, const json::array& a, const std::string& path) {
    if (node.min_items && a.size() < *node.min_items) {
      Add(path, "must have at least " + Plural(*node.min_items, "element"));
    }
    if (node.max_items && a.size() > *node.max_items) {
      Add(path, "must have at most " + Plural(*node.max_items, "element"));
    }
    if (node.items) {
      for (std::size_t i = 0; i < a.size(); ++i) Check(*node.items, a[i], Element(path, i));
    }
  }

  void CheckObject(const Node& node, const json::object& o, const std::string& path) {
    for (const std::string& name : node.required) {
      if (!o.contains(name)) Add(Child(path, name), "missing required property");
    }
    for (const auto& member : o) {
      const Node* declared = nullptr;
      for (const auto& property : node.properties) {
        if (property.first == member.key()) declared = property.second.get();
      }
      if (declared != nullptr) {
        Check(*declared, member.value(), Child(path, member.key()));
      } else if (!node.additional_properties) {
        Add(Child(path, member.key()), "property not allowed (additionalProperties is false)");
      }
    }
  }

  std::vector<SchemaViolation> violations_;
};

constexpr std::size_t kMaxViolationsInMessage = 20;

}  // namespace

Result<JsonSchema> JsonSchema::Compile(const boost::json::value& schema) {
  RECKON_TRY(auto root, CompileNode(schema, ""));
  return JsonSchema(std::shared_ptr<const Node>(std::move(root)));
}

std::vector<SchemaViolation> JsonSchema::Violations(const boost::json::value& instance) const {
  Validator validator;
  validator.Check(*root_, instance, "");
  return validator.Take();
}

Result<void> JsonSchema::Validate(const boost::json::value& instance) const {
  std::vector<SchemaViolation> violations = Violations(instance);
  if (violations.empty()) return Ok();
  std::string message;
  for (std::size_t i = 0; i < violations.size() && i < kMaxViolationsInMessage; ++i) {
    if (i > 0) message += "; ";
    message += violations[i].ToString();
  }
  if (violations.size() > kMaxViolationsInMessage) {
    message += "; and " + std::to_string(violations.size() - kMaxViolationsInMessage) + " more";
  }
  return Err(Errc::kInvalidArgument, std::move(message));
}

int CompareJsonNumbers(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_int64() && b.is_int64()) {
    return a.get_int64() < b.get_int64() ? -1 : a.get_int64() > b.get_int64();
  }
  if (a.is_uint64() && b.is_uint64()) {
    return a.get_uint64() < b.get_uint64() ? -1 : a.get_uint64() > b.get_uint64();
  }
  // long double holds every int64 and uint64 exactly on the platforms we build for (x86-64
  // extended precision); elsewhere values beyond 2^53 may compare approximately.
  auto wide = [](const boost::json::value& v) -> long double {
    if (v.is_int64()) return static_cast<long double>(v.get_int64());
    if (v.is_uint64()) return static_cast<long double>(v.get_uint64());
    return static_cast<long double>(v.get_double());
  };
  long double x = wide(a);
  long double y = wide(b);
  return x < y ? -1 : x > y;
}

bool JsonSchemaEqual(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_number() && b.is_number()) return CompareJsonNumbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case boost::json::kind::object: {
      const auto& x = a.get_object();
      const auto& y = b.get_object();
      if (x.size() != y.size()) return false;
      for (const auto& member : x) {
        const boost::json::value* other = y.if_contains(member.key());
        if (other == nullptr || !JsonSchemaEqual(member.value(), *other)) return false;
      }
      return true;
    }
    case boost::json::kind::array: {
      const auto& x = a.get_array();
      const auto& y = b.get_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!JsonSchemaEqual(x[i], y[i])) return false;
      }
      return true;
    }
    default:
      return a == b;
  }
}

const char* JsonTypeName(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::object: return "object";
    case boost::json::kind::array: return "array";
    case boost::json::kind::string: return "string";
    case boost::json::kind::int64:
    case boost::json::kind::uint64: return "integer";
    case boost::json::kind::double_: return "number";
    case boost::json::kind::bool_: return "boolean";
    case boost::json::kind::null: return "null";
  }
  return "unknown";
}

}  // namespace reckon
