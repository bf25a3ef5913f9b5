// Agent plans: what an LLM proposes, checked before anything runs. docs/PLANS.md describes the
// format and its JSON Schema; this header is its parser, validator and run-time helpers.
//
//   {"plan_id": "refund-pay-3",
//    "steps": [
//      {"id": "lookup", "tool": "lookup_payment", "input": {"payment_id": "pay-3"}},
//      {"id": "refund", "tool": "send_refund", "depends_on": ["lookup"],
//       "input": {"payment_id": {"$ref": "steps.lookup.output.payment_id"},
//                 "amount_cents": {"$ref": "steps.lookup.output.amount_cents"},
//                 "reason": "duplicate charge"},
//       "condition": {"$ref": "steps.lookup.output.status", "op": "==", "value": "captured"},
//       "overrides": {"max_attempts": 1, "require_approval": true}}]}
//
// Contract: ParsePlan accepts exactly this shape (unknown keys are errors) and ValidatePlan
// checks it against the tools' contracts. Both report every problem at once, each naming the
// step and the field ("step 'refund': input.amount_cents: must be >= 1"), as one
// Errc::kInvalidArgument. A plan that passes runs without a structural surprise: every tool has
// a contract, every reference names a step it depends on, directly or not (and, where the tool
// declares an output schema, a field it returns), there is no cycle, and overrides only
// tighten contracts. What cannot be known before running (a field of a tool without an output
// schema, a value's range) is checked when the step is reached, and a step that fails it fails
// without calling its tool.
#pragma once

#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/call_overrides.h"
#include "reckon/contract/contract_registry.h"

namespace reckon {

// {"$ref": "steps.<step id>.output[.<field>...]"}; a field may be an array index ("items.0").
struct PlanRef {
  std::string step;
  std::vector<std::string> path;  // after "output"
  std::string text;               // as written
};

enum class ConditionOp { kEq, kNe, kLt, kLe, kGt, kGe, kExists };

struct PlanCondition {
  PlanRef ref;
  ConditionOp op = ConditionOp::kEq;
  boost::json::value value;  // unused for kExists
};

// A publish step: {"publish": {"subject": "refunds.done", "payload": {...}}} sends a message
// through the transactional outbox (WorkflowContext::Publish) at the step's own id, so its
// message id is stable. The payload may hold references like a tool step's input; it is
// published as its JSON text. The step's output is {"message_id", "subject"}.
struct PlanPublish {
  std::string subject;
  boost::json::value payload;  // literals and {"$ref": ...} values; null when none was written
};

struct PlanStep {
  std::string id;
  std::optional<PlanPublish> publish;  // set: a publish step (no tool, input or overrides)
  std::string tool;
  std::string description;
  boost::json::value input;  // an object of literals and {"$ref": ...} values
  std::vector<std::string> depends_on;
  std::optional<PlanCondition> condition;
  CallOverrides overrides;
  std::optional<bool> require_approval_written;  // as written, to refuse an explicit false
};

struct Plan {
  std::string plan_id;
  std::string description;
  std::vector<PlanStep> steps;  // in the order written
};

// What a step does, for people: the tool's name, or "publish <subject>".
std::string PlanStepAction(const PlanStep& step);

Result<Plan> ParsePlan(std::string_view json_text);
// Reads and parses the plan file at `path`; errors name the file (kInvalidArgument).
Result<Plan> ParsePlanFile(const std::string& path);
Result<Plan> ParsePlanJson(const boost::json::value& json);

Result<void> ValidatePlan(const Plan& plan, const ContractRegistry& contracts);

// The plan as JSON in a normal form (defaults written out), and the SHA-256 of its canonical
// text: the definition hash journaled when the plan starts.
boost::json::value PlanToJson(const Plan& plan);
std::string PlanHash(const Plan& plan);

// --- at run time ---------------------------------------------------------------------------

// `input` with every $ref replaced by the value it names in `outputs` (step id -> output).
// Errc::kNotFound naming the reference when a step or field is missing.
Result<boost::json::value> ResolveRefs(const boost::json::value& input,
                                       const std::map<std::string, boost::json::value>& outputs);
// Whether a condition holds. Errc::kNotFound when its reference is missing (except kExists,
// which is then false); Errc::kInvalidArgument when an ordering compares non-numbers.
Result<bool> EvaluateCondition(const PlanCondition& condition,
                               const std::map<std::string, boost::json::value>& outputs);

std::string_view ConditionOpName(ConditionOp op);

}  // namespace reckon
