#include "reckon/contract/secret_fields.h"

#include <boost/json/serialize.hpp>
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
    std::string text = redactor.Text(std::string(*s));
    for (const std::string& secret : redactor.values) {
      if (text == secret) text = kSecretPlaceholder;
    }
    *s = text;
  } else if (json::object* object = value.if_object()) {
    for (auto& member : *object) RedactStrings(member.value(), redactor);
  } else if (json::array* array = value.if_array()) {
    for (json::value& element : *array) RedactStrings(element, redactor);
  }
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

json::value SecretRedactor::Output(const json::value& output) const {
  json::value redacted = RemoveSecretFields(output, secret_fields);
  if (!values.empty()) RedactStrings(redacted, *this);
  return redacted;
}

std::string SecretRedactor::Text(std::string text) const {
  for (const std::string& secret : values) {
    if (secret.size() < kMinSubstringBytes) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kSecretPlaceholder.size())) {
      text.replace(at, secret.size(), kSecretPlaceholder);
    }
  }
  return text;
}

}  // namespace reckon
