#include "reckon/plan/plan_refs.h"

#include <algorithm>
#include <cctype>

namespace reckon::plan_detail {
namespace json = boost::json;

namespace {

bool IdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-';
}

}  // namespace

// Step ids: 1-64 of [A-Za-z0-9_-] (no dot: references use dots).
bool ValidStepId(std::string_view id) {
  return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), IdChar);
}

// Plan ids (they become workflow ids): 1-128 of [A-Za-z0-9_.-], starting with a letter or digit.
bool ValidPlanId(std::string_view id) {
  if (id.empty() || id.size() > 128 || !(std::isalnum(static_cast<unsigned char>(id[0])))) {
    return false;
  }
  return std::all_of(id.begin(), id.end(), [](char c) { return IdChar(c) || c == '.'; });
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

// "steps.lookup.output.amount_cents" -> {lookup, [amount_cents]}.
std::optional<PlanRef> ParseRefText(const std::string& text, std::string* why) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = text.find('.', start);
    parts.push_back(text.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.size() < 3 || parts[0] != "steps" || parts[2] != "output") {
    *why = "must read steps.<step id>.output[.<field>...]";
    return std::nullopt;
  }
  if (!ValidStepId(parts[1])) {
    *why = "names step " + Quote(parts[1]) + ", which is not a valid step id";
    return std::nullopt;
  }
  for (std::size_t i = 3; i < parts.size(); ++i) {
    if (parts[i].empty()) {
      *why = "has an empty field name";
      return std::nullopt;
    }
  }
  return PlanRef{parts[1], std::vector<std::string>(parts.begin() + 3, parts.end()), text};
}

bool IsRefObject(const json::value& v) {
  return v.is_object() && v.get_object().contains("$ref");
}

// Walks `value` (a step input), checking every {"$ref"} object and collecting (field path, ref).
void CollectRefs(const json::value& value, const std::string& path,
                 std::vector<std::pair<std::string, PlanRef>>& refs, Problems& problems,
                 const std::string& where) {
  if (IsRefObject(value)) {
    const json::object& o = value.get_object();
    if (o.size() != 1) {
      problems.push_back(where + path + ": an object with \"$ref\" must have no other members");
      return;
    }
    const json::value& text = o.at("$ref");
    if (!text.is_string()) {
      problems.push_back(where + path + ": \"$ref\" must be a string");
      return;
    }
    std::string why;
    auto ref = ParseRefText(std::string(text.get_string()), &why);
    if (!ref) {
      problems.push_back(where + path + ": reference '" + std::string(text.get_string()) + "' " +
                         why);
      return;
    }
    refs.emplace_back(path, std::move(*ref));
    return;
  }
  if (value.is_object()) {
    for (const auto& [key, member] : value.get_object()) {
      CollectRefs(member, path + "." + std::string(key), refs, problems, where);
    }
  } else if (value.is_array()) {
    const json::array& a = value.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      CollectRefs(a[i], path + "[" + std::to_string(i) + "]", refs, problems, where);
    }
  }
}

Error Invalid(const std::string& plan_id, const Problems& problems) {
  std::string message = "plan" + (plan_id.empty() ? std::string() : " " + Quote(plan_id)) +
                        " is invalid (" + std::to_string(problems.size()) + " problem" +
                        (problems.size() == 1 ? "" : "s") + "):";
  for (const std::string& p : problems) message += "\n  - " + p;
  return Err(Errc::kInvalidArgument, std::move(message));
}

}  // namespace reckon::plan_detail
