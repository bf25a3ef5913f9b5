#include "reckon/tools/http/http_template.h"

#include <boost/json/serialize.hpp>

#include "reckon/contract/field_path.h"
#include "reckon/contract/operation_id_facts.h"
#include "reckon/tools/http/http_url.h"

namespace reckon::tools {
namespace {

namespace json = boost::json;

// The text an input value stands for inside a string: strings as they are, other scalars as
// JSON; objects and arrays are refused.
Result<std::string> ScalarText(const json::value& value, const std::string& path) {
  if (value.is_string()) return std::string(value.as_string());
  if (value.is_object() || value.is_array()) {
    return Err(Errc::kInvalidArgument, "{input." + path + "} is an " +
                                           (value.is_object() ? "object" : "array") +
                                           " and cannot be put into text");
  }
  return json::serialize(value);
}

}  // namespace

TextTemplate TextTemplate::Parse(std::string_view text, const TemplateScope& scope,
                                 const std::string& field, std::vector<std::string>& problems) {
  TextTemplate parsed;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) parsed.parts_.push_back(Part{Kind::kText, std::move(literal)});
    literal.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        literal += '}';
        ++i;
      } else {
        problems.push_back(field + ": a lone '}' (write '}}' for a literal brace)");
        return parsed;
      }
      continue;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      literal += '{';
      ++i;
      continue;
    }
    const std::size_t close = text.find('}', i);
    if (close == std::string_view::npos) {
      problems.push_back(field + ": '{' without its '}' (write '{{' for a literal brace)");
      return parsed;
    }
    const std::string ref(text.substr(i + 1, close - i - 1));
    i = close;
    if (ref == kOperationIdTemplateName) {
      flush();
      parsed.parts_.push_back(Part{Kind::kOperationId, {}});
    } else if (ref.rfind("input.", 0) == 0) {
      const std::string path = ref.substr(6);
      if (!IsValidFieldPath(path)) {
        problems.push_back(field + ": {" + ref + "} is not a dotted input path");
      } else if (scope.input_schema != nullptr &&
                 FindDeclaredField(*scope.input_schema, path).schema == nullptr) {
        problems.push_back(field + ": {" + ref + "}: the contract's input_schema declares no '" +
                           path + "'");
      }
      flush();
      parsed.parts_.push_back(Part{Kind::kInput, path});
    } else if (ref.rfind("secret.", 0) == 0) {
      const std::string name = ref.substr(7);
      if (scope.secrets == nullptr || scope.secrets->count(name) == 0) {
        problems.push_back(field + ": {" + ref + "}: no secret '" + name +
                           "' is declared in the file's \"secrets\"");
      }
      flush();
      parsed.parts_.push_back(Part{Kind::kSecret, name});
    } else if (ref.rfind("env.", 0) == 0) {
      const std::string name = ref.substr(4);
      std::optional<std::string> value = scope.env ? scope.env(name) : std::nullopt;
      if (!value) {
        problems.push_back(field + ": {" + ref + "}: the environment variable " + name +
                           " is not set in the worker's environment");
      } else {
        literal += *value;
      }
    } else {
      problems.push_back(field + ": unknown reference {" + ref +
                         "} (use {input.PATH}, {secret.NAME}, {env.NAME} or {operation_id})");
    }
  }
  flush();
  return parsed;
}

bool TextTemplate::RefersToOperationId() const {
  for (const Part& part : parts_) {
    if (part.kind == Kind::kOperationId) return true;
  }
  return false;
}

bool TextTemplate::RefersToInput() const {
  for (const Part& part : parts_) {
    if (part.kind == Kind::kInput) return true;
  }
  return false;
}

Result<std::string> TextTemplate::Expand(const TemplateValues& values,
                                         TemplateEscape escape) const {
  std::string out;
  for (const Part& part : parts_) {
    std::string value;
    switch (part.kind) {
      case Kind::kText:
        out += part.text;
        continue;
      case Kind::kOperationId:
        value = values.operation_id;
        break;
      case Kind::kSecret:
        value = values.secrets->at(part.text);
        break;
      case Kind::kInput: {
        const json::value* member =
            values.input == nullptr ? nullptr : FindField(*values.input, part.text);
        if (member == nullptr) {
          return Err(Errc::kInvalidArgument,
                     "{input." + part.text + "}: the input has no member '" + part.text + "'");
        }
        RECKON_TRY(value, ScalarText(*member, part.text));
        break;
      }
    }
    out += escape == TemplateEscape::kUrl ? PercentEncode(value) : value;
  }
  return out;
}

Result<std::optional<json::value>> TextTemplate::ExpandSingle(const TemplateValues& values) const {
  const Part& part = parts_.front();
  if (part.kind == Kind::kInput) {
    const json::value* member =
        values.input == nullptr ? nullptr : FindField(*values.input, part.text);
    if (member == nullptr) return std::optional<json::value>();
    return std::optional<json::value>(*member);
  }
  RECKON_TRY(std::string text, Expand(values, TemplateEscape::kNone));
  return std::optional<json::value>(json::value(text));
}

JsonTemplate JsonTemplate::Parse(const json::value& value, const TemplateScope& scope,
                                 const std::string& field, std::vector<std::string>& problems) {
  JsonTemplate parsed;
  if (value.is_string()) {
    parsed.kind_ = Kind::kString;
    parsed.text_ = TextTemplate::Parse(value.as_string(), scope, field, problems);
  } else if (value.is_object()) {
    parsed.kind_ = Kind::kObject;
    for (const auto& member : value.as_object()) {
      const std::string name(member.key());
      parsed.members_.emplace_back(
          name, Parse(member.value(), scope, field + "." + name, problems));
    }
  } else if (value.is_array()) {
    parsed.kind_ = Kind::kArray;
    const json::array& items = value.as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      parsed.items_.push_back(
          Parse(items[i], scope, field + "[" + std::to_string(i) + "]", problems));
    }
  } else {
    parsed.scalar_ = value;
  }
  return parsed;
}

bool JsonTemplate::RefersToOperationId() const {
  switch (kind_) {
    case Kind::kScalar: return false;
    case Kind::kString: return text_.RefersToOperationId();
    case Kind::kObject:
      for (const auto& [name, member] : members_) {
        if (member.RefersToOperationId()) return true;
      }
      return false;
    case Kind::kArray:
      for (const JsonTemplate& item : items_) {
        if (item.RefersToOperationId()) return true;
      }
      return false;
  }
  return false;
}

Result<json::value> JsonTemplate::Expand(const TemplateValues& values) const {
  switch (kind_) {
    case Kind::kScalar: return scalar_;
    case Kind::kString: {
      if (text_.IsSingleReference()) {
        RECKON_TRY(std::optional<json::value> single, text_.ExpandSingle(values));
        if (!single) return Err(Errc::kInvalidArgument, "a referenced input member is missing");
        return std::move(*single);
      }
      RECKON_TRY(std::string text, text_.Expand(values, TemplateEscape::kNone));
      return json::value(text);
    }
    case Kind::kObject: {
      json::object object;
      for (const auto& [name, member] : members_) {
        if (member.kind_ == Kind::kString && member.text_.IsSingleReference() &&
            member.text_.RefersToInput()) {
          RECKON_TRY(std::optional<json::value> single, member.text_.ExpandSingle(values));
          if (single) object[name] = std::move(*single);  // absent: an optional field, left out
          continue;
        }
        RECKON_TRY(json::value expanded, member.Expand(values));
        object[name] = std::move(expanded);
      }
      return json::value(std::move(object));
    }
    case Kind::kArray: {
      json::array array;
      for (const JsonTemplate& item : items_) {
        RECKON_TRY(json::value expanded, item.Expand(values));
        array.push_back(std::move(expanded));
      }
      return json::value(std::move(array));
    }
  }
  return json::value();
}

}  // namespace reckon::tools
