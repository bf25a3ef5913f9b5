#include "reckon/contract/secret_fields.h"

#include <boost/json/serialize.hpp>
#include <algorithm>
#include <optional>

#include "reckon/base/intent_hash.h"
#include "reckon/contract/field_path.h"

namespace reckon {
namespace json = boost::json;

namespace {

struct Found {
  std::string tool;
  std::string field;
  std::string where;  // "input.customer.card_token", "payload[2].card_token"
};

// The first object in `value` (depth first) that holds a member at a secret path of `contracts`.
std::optional<Found> FindSecretField(const json::value& value, const ContractRegistry& contracts,
                                     const std::string& where) {
  if (const json::object* object = value.if_object()) {
    for (const ToolContract* contract : contracts.All()) {
      for (const std::string& field : contract->secret_fields) {
        if (FindField(value, field) != nullptr) {
          return Found{contract->name, field, where + "." + field};
        }
      }
    }
    for (const auto& [key, member] : *object) {
      if (auto found = FindSecretField(member, contracts, where + "." + std::string(key))) {
        return found;
      }
    }
  } else if (const json::array* array = value.if_array()) {
    for (std::size_t i = 0; i < array->size(); ++i) {
      if (auto found =
              FindSecretField((*array)[i], contracts, where + "[" + std::to_string(i) + "]")) {
        return found;
      }
    }
  }
  return std::nullopt;
}

void CollectStrings(const json::value& value, std::vector<std::string>& out) {
  if (const json::string* s = value.if_string()) {
    if (!s->empty()) out.emplace_back(*s);
  } else if (const json::object* object = value.if_object()) {
    for (const auto& member : *object) CollectStrings(member.value(), out);
  } else if (const json::array* array = value.if_array()) {
    for (const json::value& element : *array) CollectStrings(element, out);
  } else if (!value.is_null()) {
    out.push_back(json::serialize(value));
  }
}

void RedactStrings(json::value& value, const SecretRedactor& redactor) {
  if (json::string* s = value.if_string()) {
    *s = redactor.Text(std::string(*s));
  } else if (json::object* object = value.if_object()) {
    for (auto& member : *object) RedactStrings(member.value(), redactor);
  } else if (json::array* array = value.if_array()) {
    for (json::value& element : *array) RedactStrings(element, redactor);
  }
}

// `value` as a URL carries it: RFC 3986's unreserved characters kept, every other byte as %XX
// with `hex` digits (tools/http/http_url.h, PercentEncode, writes upper case).
std::string PercentEncoded(std::string_view value, const char* hex) {
  std::string out;
  for (unsigned char c : value) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xF];
    }
  }
  return out;
}

// `value` as a JSON string carries it, without the quotes.
std::string JsonEscaped(std::string_view value) {
  const std::string quoted = json::serialize(json::string(value));
  return quoted.substr(1, quoted.size() - 2);
}

}  // namespace

Result<void> RefuseSecretValues(const json::value& value, const ContractRegistry& contracts,
                                std::string_view what) {
  auto found = FindSecretField(value, contracts, "");
  if (!found) return Ok();
  const std::string at = found->where.substr(1);  // without the leading "."
  return Err(Errc::kInvalidArgument,
             std::string(what) + " carries a value for '" + found->field +
                 "', a secret field of tool '" + found->tool + "' (at " + at +
                 "); secrets come from the worker's side: the tool fetches them (e.g. from a "
                 "vault) when it runs, so they are never journaled. Remove '" +
                 at + "'");
}

std::vector<std::string> SecretValuesOf(const json::value& input,
                                        std::span<const std::string> secret_fields) {
  std::vector<std::string> values;
  for (const std::string& field : secret_fields) {
    if (const json::value* value = FindField(input, field)) CollectStrings(*value, values);
  }
  return values;
}

SecretRedactor::SecretRedactor(std::span<const std::string> secret_fields,
                               std::vector<std::string> values)
    : secret_fields_(secret_fields) {
  for (const std::string& value : values) {
    if (value.empty()) continue;
    for (std::string form : {value, JsonEscaped(value), PercentEncoded(value, "0123456789ABCDEF"),
                             PercentEncoded(value, "0123456789abcdef")}) {
      if (std::find(forms_.begin(), forms_.end(), form) == forms_.end()) {
        forms_.push_back(std::move(form));
      }
    }
  }
  // Longest first: a value that holds another is replaced whole.
  std::stable_sort(forms_.begin(), forms_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

json::value SecretRedactor::Output(const json::value& output) const {
  json::value redacted = RemoveSecretFields(output, secret_fields_);
  if (has_values()) RedactStrings(redacted, *this);
  return redacted;
}

std::string SecretRedactor::Text(std::string text) const {
  for (const std::string& secret : forms_) {
    if (text == secret) return std::string(kSecretPlaceholder);
  }
  for (const std::string& secret : forms_) {
    if (secret.size() < kMinSubstringBytes) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kSecretPlaceholder.size())) {
      text.replace(at, secret.size(), kSecretPlaceholder);
    }
  }
  return text;
}

}  // namespace reckon
