// The run-time helpers of plan.h: references resolved against the outputs so far, and
// conditions evaluated.
#include <boost/json/serialize.hpp>

#include <algorithm>

#include "reckon/base/json_schema.h"
#include "reckon/plan/plan.h"
#include "reckon/plan/plan_refs.h"

namespace reckon {
namespace json = boost::json;
using namespace plan_detail;

namespace {

Result<json::value> Lookup(const PlanRef& ref,
                           const std::map<std::string, json::value>& outputs) {
  auto it = outputs.find(ref.step);
  if (it == outputs.end()) {
    return Err(Errc::kNotFound, "reference '" + ref.text + "': step '" + ref.step +
                                    "' has no output (it did not succeed)");
  }
  const json::value* node = &it->second;
  for (const std::string& field : ref.path) {
    if (node->is_object()) {
      node = node->get_object().if_contains(field);
    } else if (node->is_array() && !field.empty() &&
               std::all_of(field.begin(), field.end(), ::isdigit) &&
               std::stoul(field) < node->get_array().size()) {
      node = &node->get_array()[std::stoul(field)];
    } else {
      node = nullptr;
    }
    if (node == nullptr) {
      return Err(Errc::kNotFound, "reference '" + ref.text + "': the output of step '" +
                                      ref.step + "' has no field '" + field + "'");
    }
  }
  return *node;
}

}  // namespace

Result<json::value> ResolveRefs(const json::value& input,
                                const std::map<std::string, json::value>& outputs) {
  if (IsRefObject(input)) {
    const json::value& text = input.get_object().at("$ref");
    std::string why;
    auto ref = text.is_string() ? ParseRefText(std::string(text.get_string()), &why)
                                : std::nullopt;
    if (!ref) return Err(Errc::kInvalidArgument, "malformed reference " + json::serialize(text));
    return Lookup(*ref, outputs);
  }
  if (input.is_object()) {
    json::object out;
    for (const auto& [key, value] : input.get_object()) {
      RECKON_TRY(json::value resolved, ResolveRefs(value, outputs));
      out[key] = std::move(resolved);
    }
    return out;
  }
  if (input.is_array()) {
    json::array out;
    for (const json::value& value : input.get_array()) {
      RECKON_TRY(json::value resolved, ResolveRefs(value, outputs));
      out.push_back(std::move(resolved));
    }
    return out;
  }
  return input;
}

Result<bool> EvaluateCondition(const PlanCondition& condition,
                               const std::map<std::string, json::value>& outputs) {
  auto value = Lookup(condition.ref, outputs);
  if (condition.op == ConditionOp::kExists) return value.has_value();
  if (!value) return value.error();
  const json::value& v = value.value();
  switch (condition.op) {
    case ConditionOp::kEq: return JsonSchemaEqual(v, condition.value);
    case ConditionOp::kNe: return !JsonSchemaEqual(v, condition.value);
    default: break;
  }
  if (!v.is_number()) {
    return Err(Errc::kInvalidArgument, "condition on '" + condition.ref.text + "' compares with " +
                                           std::string(ConditionOpName(condition.op)) +
                                           " but the value is " + JsonTypeName(v));
  }
  const int c = CompareJsonNumbers(v, condition.value);
  switch (condition.op) {
    case ConditionOp::kLt: return c < 0;
    case ConditionOp::kLe: return c <= 0;
    case ConditionOp::kGt: return c > 0;
    case ConditionOp::kGe: return c >= 0;
    default: return false;
  }
}
}  // namespace reckon
