// When a tool call needs a person's yes before its first attempt.
//
// The rule is declarative data, not a callback: the engine never runs user code, yet it must
// evaluate the rule, journal it (inside the contract hash) and print it on the contract card.
// A rule is `none`, `always`, or `when` any of a list of conditions holds, a condition being
// {dotted field path, comparison, JSON value} over the validated tool input
// ("amount_cents > 10000").
//
// A grant binds one operation id and one intent hash and lives for `grant_ttl`. Waiting for the
// decision is durable; past `wait_deadline` (if set) the operation is rejected, which is safe
// because nothing was attempted. Plain values; the functions are stateless and thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"

namespace reckon {

enum class ApprovalKind { kNone, kAlways, kWhen };

std::string_view ApprovalKindName(ApprovalKind kind);  // "none", "always", "when"
Result<ApprovalKind> ParseApprovalKind(std::string_view name);

enum class CompareOp { kGreater, kGreaterEqual, kLess, kLessEqual, kEqual, kNotEqual };

std::string_view CompareOpSymbol(CompareOp op);  // ">", ">=", "<", "<=", "==", "!="
Result<CompareOp> ParseCompareOp(std::string_view symbol);
bool IsOrdering(CompareOp op);  // > >= < <=: defined on numbers only

struct ApprovalCondition {
  std::string field;          // dotted path into the input: "amount_cents"
  CompareOp op = CompareOp::kEqual;
  boost::json::value value;   // compared with JSON Schema equality / numeric order

  friend bool operator==(const ApprovalCondition&, const ApprovalCondition&) = default;
};

struct ApprovalRule {
  ApprovalKind kind = ApprovalKind::kNone;
  std::vector<ApprovalCondition> when;  // any-of; read only when kind == kWhen
  std::chrono::seconds grant_ttl{0};    // a grant older than this is expired; > 0 unless kNone
  std::optional<std::chrono::seconds> wait_deadline;  // absent: wait for a decision forever
  // Separation of duties: by default the principal that started a run may not approve, deny
  // or resolve its operations (engine/decider.h). A contract may allow it.
  bool allow_self_approval = false;

  friend bool operator==(const ApprovalRule&, const ApprovalRule&) = default;
};

// "amount_cents > 10000"; string values are quoted as JSON ("reason == \"fraud\"").
std::string DescribeCondition(const ApprovalCondition& condition);

// "never", "always", "when amount_cents > 10000 or reason == \"fraud\"".
std::string DescribeApprovalRule(const ApprovalRule& rule);

// Whether `input` (already validated against the tool's schema) needs approval. Fails with
// Errc::kInvalidArgument if a condition's field is absent from the input, or if an ordering
// comparison meets a value that is not a number: the input does not match the contract the
// rule was checked against, and guessing "no approval" would loosen it.
Result<bool> ApprovalRequired(const ApprovalRule& rule, const boost::json::value& input);

}  // namespace reckon
