#include "reckon/contract/approval_rule.h"

#include <boost/json/serialize.hpp>

#include "reckon/base/json_schema.h"
#include "reckon/contract/field_path.h"

namespace reckon {
namespace {

constexpr std::pair<ApprovalKind, std::string_view> kKinds[] = {
    {ApprovalKind::kNone, "none"},
    {ApprovalKind::kAlways, "always"},
    {ApprovalKind::kWhen, "when"},
};

constexpr std::pair<CompareOp, std::string_view> kOps[] = {
    {CompareOp::kGreater, ">"}, {CompareOp::kGreaterEqual, ">="}, {CompareOp::kLess, "<"},
    {CompareOp::kLessEqual, "<="}, {CompareOp::kEqual, "=="},     {CompareOp::kNotEqual, "!="}};

Result<bool> Holds(const ApprovalCondition& condition, const boost::json::value& input) {
  const boost::json::value* actual = FindField(input, condition.field);
  if (actual == nullptr) {
    return Err(Errc::kInvalidArgument, "approval condition '" + DescribeCondition(condition) +
                                           "': field '" + condition.field +
                                           "' is missing from the input");
  }
  if (!IsOrdering(condition.op)) {
    bool equal = JsonSchemaEqual(*actual, condition.value);
    return condition.op == CompareOp::kEqual ? equal : !equal;
  }
  if (!actual->is_number() || !condition.value.is_number()) {
    return Err(Errc::kInvalidArgument, "approval condition '" + DescribeCondition(condition) +
                                           "': field '" + condition.field + "' is " +
                                           JsonTypeName(*actual) + ", not a number");
  }
  int c = CompareJsonNumbers(*actual, condition.value);
  switch (condition.op) {
    case CompareOp::kGreater: return c > 0;
    case CompareOp::kGreaterEqual: return c >= 0;
    case CompareOp::kLess: return c < 0;
    case CompareOp::kLessEqual: return c <= 0;
    case CompareOp::kEqual:
    case CompareOp::kNotEqual: break;
  }
  return Err(Errc::kInternal, "unreachable comparison");
}

}  // namespace

std::string_view ApprovalKindName(ApprovalKind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "invalid";
}

Result<ApprovalKind> ParseApprovalKind(std::string_view name) {
  for (const auto& [k, n] : kKinds) {
    if (n == name) return k;
  }
  return Err(Errc::kInvalidArgument,
             "unknown approval kind '" + std::string(name) + "' (use none, always or when)");
}

std::string_view CompareOpSymbol(CompareOp op) {
  for (const auto& [o, symbol] : kOps) {
    if (o == op) return symbol;
  }
  return "?";
}

Result<CompareOp> ParseCompareOp(std::string_view symbol) {
  for (const auto& [o, s] : kOps) {
    if (s == symbol) return o;
  }
  return Err(Errc::kInvalidArgument, "unknown comparison '" + std::string(symbol) +
                                         "' (use >, >=, <, <=, == or !=)");
}

bool IsOrdering(CompareOp op) { return op != CompareOp::kEqual && op != CompareOp::kNotEqual; }

std::string DescribeCondition(const ApprovalCondition& condition) {
  return condition.field + " " + std::string(CompareOpSymbol(condition.op)) + " " +
         boost::json::serialize(condition.value);
}

std::string DescribeApprovalRule(const ApprovalRule& rule) {
  switch (rule.kind) {
    case ApprovalKind::kNone: return "never";
    case ApprovalKind::kAlways: return "always";
    case ApprovalKind::kWhen: break;
  }
  std::string out = "when";
  for (std::size_t i = 0; i < rule.when.size(); ++i) {
    out += i == 0 ? " " : " or ";
    out += DescribeCondition(rule.when[i]);
  }
  return out;
}

Result<bool> ApprovalRequired(const ApprovalRule& rule, const boost::json::value& input) {
  switch (rule.kind) {
    case ApprovalKind::kNone: return false;
    case ApprovalKind::kAlways: return true;
    case ApprovalKind::kWhen: break;
  }
  // Every condition is evaluated, so a malformed input is reported even when an earlier
  // condition already holds.
  bool required = false;
  for (const ApprovalCondition& condition : rule.when) {
    RECKON_TRY(bool holds, Holds(condition, input));
    required = required || holds;
  }
  return required;
}

}  // namespace reckon
