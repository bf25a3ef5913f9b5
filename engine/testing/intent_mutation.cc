#include "reckon/engine/testing/intent_mutation.h"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "reckon/base/jcs.h"

namespace reckon::testing {
namespace json = boost::json;
namespace {

constexpr std::string_view kAlphabet =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_- ";

int Draw(Rng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
bool Coin(Rng& rng) { return Draw(rng, 0, 1) == 1; }

char RandomChar(Rng& rng) { return kAlphabet[Draw(rng, 0, int(kAlphabet.size()) - 1)]; }

// ASCII, with now and then a two-byte character (counted as one by minLength / maxLength).
std::string RandomString(Rng& rng, int min_length, int max_length) {
  const int length = Draw(rng, min_length, std::max(min_length, max_length));
  std::string out;
  for (int i = 0; i < length; ++i) {
    if (Draw(rng, 0, 15) == 0) {
      out += "\xc3\xa9";  // é
    } else {
      out += RandomChar(rng);
    }
  }
  return out;
}

int IntMember(const json::object& schema, std::string_view name, int fallback) {
  const json::value* v = schema.if_contains(name);
  return v && v->is_int64() ? int(v->as_int64()) : fallback;
}

std::string TypeOf(const json::object& schema) {
  if (const json::value* type = schema.if_contains("type"); type && type->is_string()) {
    return std::string(type->as_string());
  }
  return schema.contains("properties") ? "object" : "string";
}

json::value RandomScalar(Rng& rng) {
  if (Coin(rng)) return json::value(std::int64_t(Draw(rng, -100, 100000)));
  return json::value(json::string(RandomString(rng, 0, 8)));
}

struct Node {
  JsonPath path;
  json::value* value;
};

void Collect(json::value& value, JsonPath& path, std::vector<Node>& out) {
  out.push_back(Node{path, &value});
  if (json::object* object = value.if_object()) {
    for (auto& member : *object) {
      path.emplace_back(std::string(member.key()));
      Collect(member.value(), path, out);
      path.pop_back();
    }
  } else if (json::array* array = value.if_array()) {
    for (std::size_t i = 0; i < array->size(); ++i) {
      path.emplace_back(i);
      Collect((*array)[i], path, out);
      path.pop_back();
    }
  }
}

std::string KindName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::object: return "object";
    case json::kind::array: return "array";
    case json::kind::string: return "string";
    case json::kind::bool_: return "boolean";
    case json::kind::null: return "null";
    default: return "number";
  }
}

json::value EditedNumber(const json::value& v, Rng& rng) {
  int delta = Draw(rng, 1, 3) * (Coin(rng) ? 1 : -1);
  if (Draw(rng, 0, 3) == 0) delta *= 10000;
  if (v.is_double()) return json::value(v.as_double() + delta + 0.5);
  const std::int64_t n = v.is_int64() ? v.as_int64() : std::int64_t(v.as_uint64());
  return json::value(n + delta);
}

json::value StringToNumber(const json::string& s) {
  std::int64_t n = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (error == std::errc() && end == s.data() + s.size()) return json::value(n);
  return json::value(std::int64_t(s.size()));
}

// Applies `option` (one of OptionsFor(node)) at `node`, which lies in m.input.
void Apply(Node& node, const std::string& option, std::span<const std::string> member_names,
           Rng& rng, Mutation& m) {
  json::value& v = *node.value;
  m.path = node.path;
  m.what = option;
  if (option == "add member") {
    json::object& object = v.as_object();
    std::string name = member_names.empty()
                           ? std::string("extra")
                           : member_names[Draw(rng, 0, int(member_names.size()) - 1)];
    if (object.contains(name)) name = "extra_" + RandomString(rng, 1, 4);
    while (object.contains(name)) name += RandomChar(rng);
    object[name] = RandomScalar(rng);
    m.path.emplace_back(name);
  } else if (option == "remove member") {
    json::object& object = v.as_object();
    auto it = object.begin() + Draw(rng, 0, int(object.size()) - 1);
    m.path.emplace_back(std::string(it->key()));
    object.erase(it);
  } else if (option == "append element") {
    json::array& array = v.as_array();
    json::value element = array.empty() ? RandomScalar(rng) : array[Draw(rng, 0, int(array.size()) - 1)];
    m.path.emplace_back(array.size());
    array.push_back(std::move(element));
  } else if (option == "remove element") {
    json::array& array = v.as_array();
    const std::size_t i = std::size_t(Draw(rng, 0, int(array.size()) - 1));
    m.path.emplace_back(i);
    array.erase(array.begin() + std::ptrdiff_t(i));
  } else if (option == "edit string") {
    json::string& s = v.as_string();
    const std::string c(1, RandomChar(rng));
    if (Coin(rng)) {
      s.append(c);
    } else {
      s.insert(0, c);
    }
  } else if (option == "edit number") {
    v = EditedNumber(v, rng);
  } else if (option == "flip boolean") {
    v = !v.as_bool();
  } else if (option.ends_with("-> null")) {
    v = nullptr;
  } else if (option.ends_with("-> string")) {
    v = json::value(json::string(v.is_null() ? std::string() : json::serialize(v)));
  } else if (option.ends_with("-> number")) {
    v = v.is_string() ? StringToNumber(v.as_string()) : json::value(std::int64_t(0));
  } else if (option.ends_with("-> boolean")) {
    v = Coin(rng);
  } else if (option.ends_with("-> array")) {
    json::array array;
    if (json::object* object = v.if_object()) {
      for (auto& member : *object) array.push_back(member.value());
    } else {
      array.push_back(v);
    }
    v = std::move(array);
  } else if (option.ends_with("-> object")) {
    json::object object;
    if (json::array* array = v.if_array()) {
      for (std::size_t i = 0; i < array->size(); ++i) object[std::to_string(i)] = (*array)[i];
    } else if (!v.is_null()) {
      object["value"] = v;
    }
    v = std::move(object);
  } else {
    throw std::logic_error("unknown mutation " + option);
  }
}

std::vector<std::string> OptionsFor(const json::value& v, bool root) {
  const std::string kind = KindName(v);
  if (root) {
    std::vector<std::string> options{"add member"};
    if (!v.as_object().empty()) options.push_back("remove member");
    return options;
  }
  std::vector<std::string> options;
  if (v.is_object()) {
    options = {"object -> array", "object -> null", "object -> string", "add member"};
    if (!v.as_object().empty()) options.push_back("remove member");
  } else if (v.is_array()) {
    options = {"array -> object", "array -> null", "array -> string", "append element"};
    if (!v.as_array().empty()) options.push_back("remove element");
  } else if (v.is_string()) {
    options = {"edit string",      "string -> number", "string -> null",
               "string -> boolean", "string -> object", "string -> array"};
  } else if (v.is_bool()) {
    options = {"flip boolean", "boolean -> string", "boolean -> null", "boolean -> number"};
  } else if (v.is_null()) {
    options = {"null -> number", "null -> string", "null -> object", "null -> array"};
  } else {
    options = {"edit number", "number -> string", "number -> null", "number -> array",
               "number -> object"};
  }
  return options;
}

}  // namespace

std::string PathText(const JsonPath& path) {
  std::string out;
  for (const PathStep& step : path) {
    if (const std::string* name = std::get_if<std::string>(&step)) {
      if (!out.empty()) out += '.';
      out += *name;
    } else {
      out += "[" + std::to_string(std::get<std::size_t>(step)) + "]";
    }
  }
  return out;
}

bool UnderSecretField(const JsonPath& path, std::span<const std::string> secret_fields) {
  std::string dotted;
  for (const PathStep& step : path) {
    const std::string* name = std::get_if<std::string>(&step);
    if (name == nullptr) return false;  // secret paths stop at arrays
    dotted += (dotted.empty() ? "" : ".") + *name;
    if (std::find(secret_fields.begin(), secret_fields.end(), dotted) != secret_fields.end()) {
      return true;
    }
  }
  return false;
}

json::value GenerateInput(const json::value& schema_value, Rng& rng) {
  const json::object* schema = schema_value.if_object();
  if (schema == nullptr) return RandomScalar(rng);
  if (const json::value* options = schema->if_contains("enum"); options && options->is_array()) {
    const json::array& values = options->as_array();
    return values[Draw(rng, 0, int(values.size()) - 1)];
  }
  const std::string type = TypeOf(*schema);
  if (type == "object") {
    json::object out;
    std::vector<std::string> required;
    if (const json::value* r = schema->if_contains("required"); r && r->is_array()) {
      for (const json::value& name : r->as_array()) required.emplace_back(name.as_string());
    }
    if (const json::value* props = schema->if_contains("properties"); props && props->is_object()) {
      for (const auto& [name, property] : props->as_object()) {
        const bool needed =
            std::find(required.begin(), required.end(), std::string(name)) != required.end();
        if (needed || Coin(rng)) out[name] = GenerateInput(property, rng);
      }
    }
    return out;
  }
  if (type == "array") {
    json::array out;
    const int count = IntMember(*schema, "minItems", 0) + Draw(rng, 0, 3);
    const json::value* items = schema->if_contains("items");
    for (int i = 0; i < count; ++i) out.push_back(items ? GenerateInput(*items, rng) : RandomScalar(rng));
    return out;
  }
  if (type == "integer") {
    const int minimum = IntMember(*schema, "minimum", -5);
    return json::value(std::int64_t(minimum) + Draw(rng, 0, 20000));
  }
  if (type == "number") return json::value(Draw(rng, -1000, 1000) + 0.25);
  if (type == "boolean") return json::value(Coin(rng));
  const int min_length = IntMember(*schema, "minLength", 0);
  const int max_length = std::min(IntMember(*schema, "maxLength", min_length + 12), min_length + 12);
  return json::value(json::string(RandomString(rng, min_length, max_length)));
}

Mutation MutateOneField(const json::value& input, Rng& rng,
                        std::span<const std::string> member_names) {
  auto before = CanonicalizeJson(input);
  if (!before) throw std::invalid_argument("input is not canonical JSON: " + before.error().message());
  for (int tries = 0; tries < 64; ++tries) {
    Mutation m{input, {}, ""};
    std::vector<Node> nodes;
    JsonPath path;
    Collect(m.input, path, nodes);
    Node& node = nodes[std::size_t(Draw(rng, 0, int(nodes.size()) - 1))];
    const std::vector<std::string> options = OptionsFor(*node.value, node.path.empty());
    const std::string& option = options[std::size_t(Draw(rng, 0, int(options.size()) - 1))];
    Apply(node, option, member_names, rng, m);
    auto after = CanonicalizeJson(m.input);
    if (after && after.value() != before.value()) return m;
  }
  throw std::logic_error("no mutation changed the input " + before.value());
}

}  // namespace reckon::testing
