#include "reckon/plan/plan.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "reckon/base/intent_hash.h"
#include "reckon/base/jcs.h"
#include "reckon/base/json_schema.h"
#include "reckon/base/subject.h"
#include "reckon/plan/plan_refs.h"

namespace reckon {
namespace json = boost::json;
using namespace plan_detail;

namespace {

std::optional<ConditionOp> ParseOp(std::string_view op) {
  if (op == "==") return ConditionOp::kEq;
  if (op == "!=") return ConditionOp::kNe;
  if (op == "<") return ConditionOp::kLt;
  if (op == "<=") return ConditionOp::kLe;
  if (op == ">") return ConditionOp::kGt;
  if (op == ">=") return ConditionOp::kGe;
  if (op == "exists") return ConditionOp::kExists;
  return std::nullopt;
}

void CheckKeys(const json::object& o, std::initializer_list<std::string_view> allowed,
               const std::string& where, Problems& problems) {
  for (const auto& [key, value] : o) {
    if (std::find(allowed.begin(), allowed.end(), std::string_view(key)) == allowed.end()) {
      std::vector<std::string> names;
      for (auto name : allowed) names.emplace_back(name);
      problems.push_back(where + "unknown field '" + std::string(key) + "' (allowed: " +
                         Join(names, ", ") + ")");
    }
  }
}

void ParseCondition(const json::value& v, const std::string& where, PlanStep& step,
                    Problems& problems) {
  if (!v.is_object()) {
    problems.push_back(where + "condition: must be an object {\"$ref\", \"op\", \"value\"}");
    return;
  }
  const json::object& o = v.get_object();
  CheckKeys(o, {"$ref", "op", "value"}, where + "condition: ", problems);
  PlanCondition condition;
  const json::value* ref = o.if_contains("$ref");
  if (ref == nullptr || !ref->is_string()) {
    problems.push_back(where + "condition.$ref: required, a string steps.<id>.output...");
    return;
  }
  std::string why;
  auto parsed = ParseRefText(std::string(ref->get_string()), &why);
  if (!parsed) {
    problems.push_back(where + "condition.$ref: '" + std::string(ref->get_string()) + "' " + why);
    return;
  }
  condition.ref = std::move(*parsed);
  const json::value* op = o.if_contains("op");
  auto parsed_op = op != nullptr && op->is_string() ? ParseOp(op->get_string()) : std::nullopt;
  if (!parsed_op) {
    problems.push_back(where + "condition.op: required, one of ==, !=, <, <=, >, >=, exists");
    return;
  }
  condition.op = *parsed_op;
  const json::value* value = o.if_contains("value");
  if (condition.op != ConditionOp::kExists) {
    if (value == nullptr) {
      problems.push_back(where + "condition.value: required for op " +
                         std::string(op->get_string()));
      return;
    }
    if ((condition.op == ConditionOp::kLt || condition.op == ConditionOp::kLe ||
         condition.op == ConditionOp::kGt || condition.op == ConditionOp::kGe) &&
        !value->is_number()) {
      problems.push_back(where + "condition.value: op " + std::string(op->get_string()) +
                         " compares numbers; the value must be a number");
      return;
    }
    condition.value = *value;
  }
  step.condition = std::move(condition);
}

void ParseOverrides(const json::value& v, const std::string& where, PlanStep& step,
                    Problems& problems) {
  if (!v.is_object()) {
    problems.push_back(where + "overrides: must be an object");
    return;
  }
  const json::object& o = v.get_object();
  CheckKeys(o, {"max_attempts", "require_approval"}, where + "overrides: ", problems);
  if (const json::value* n = o.if_contains("max_attempts")) {
    const bool integer = n->is_int64() || n->is_uint64();
    const std::int64_t value = n->is_int64() ? n->as_int64()
                               : n->is_uint64() ? static_cast<std::int64_t>(
                                                      std::min<std::uint64_t>(n->as_uint64(), 1u << 30))
                                                : 0;
    if (!integer || value < 1 || value > 1000) {
      problems.push_back(where + "overrides.max_attempts: must be an integer from 1 to 1000");
    } else {
      step.overrides.max_attempts = static_cast<std::uint32_t>(value);
    }
  }
  if (const json::value* b = o.if_contains("require_approval")) {
    if (!b->is_bool()) {
      problems.push_back(where + "overrides.require_approval: must be true or false");
    } else {
      step.overrides.require_approval = b->as_bool();
      step.require_approval_written = b->as_bool();
    }
  }
}

// {"subject": "refunds.done", "payload": <any JSON, references allowed>}.
void ParsePublish(const json::value& v, const std::string& where, PlanStep& step,
                  Problems& problems) {
  if (!v.is_object()) {
    problems.push_back(where + "publish: must be an object {\"subject\", \"payload\"}");
    return;
  }
  const json::object& o = v.get_object();
  CheckKeys(o, {"subject", "payload"}, where + "publish: ", problems);
  PlanPublish publish;
  const json::value* subject = o.if_contains("subject");
  if (subject == nullptr || !subject->is_string()) {
    problems.push_back(where + "publish.subject: required, a subject such as orders.created");
  } else if (auto valid = ValidateSubject(subject->get_string()); !valid) {
    problems.push_back(where + "publish." + valid.error().message());
  } else {
    publish.subject = std::string(subject->get_string());
  }
  if (const json::value* payload = o.if_contains("payload")) {
    publish.payload = *payload;
    std::vector<std::pair<std::string, PlanRef>> refs;
    CollectRefs(*payload, "publish.payload", refs, problems, where);
  }
  step.publish = std::move(publish);
}

std::optional<PlanStep> ParseStep(const json::value& v, std::size_t index, Problems& problems) {
  const std::string at = "steps[" + std::to_string(index) + "]";
  if (!v.is_object()) {
    problems.push_back(at + ": must be an object");
    return std::nullopt;
  }
  const json::object& o = v.get_object();
  PlanStep step;
  const json::value* id = o.if_contains("id");
  if (id == nullptr || !id->is_string() || !ValidStepId(id->get_string())) {
    problems.push_back(at + ".id: required, 1-64 characters of A-Z a-z 0-9 _ -");
    return std::nullopt;
  }
  step.id = std::string(id->get_string());
  const std::string where = "step '" + step.id + "': ";
  CheckKeys(o,
            {"id", "tool", "publish", "description", "input", "depends_on", "condition",
             "overrides"},
            where, problems);
  if (const json::value* publish = o.if_contains("publish")) {
    for (const char* key : {"tool", "input", "overrides"}) {
      if (o.contains(key)) {
        problems.push_back(where + key + ": a publish step has no " + key +
                           " (a step either calls a tool or publishes a message)");
      }
    }
    ParsePublish(*publish, where, step, problems);
  } else {
    const json::value* tool = o.if_contains("tool");
    if (tool == nullptr || !tool->is_string() || tool->get_string().empty()) {
      problems.push_back(where + "tool: required, the name of a tool (or \"publish\" for a "
                         "step that publishes a message)");
    } else {
      step.tool = std::string(tool->get_string());
    }
  }
  if (const json::value* d = o.if_contains("description")) {
    if (d->is_string()) step.description = std::string(d->get_string());
    else problems.push_back(where + "description: must be a string");
  }
  step.input = json::object();
  if (const json::value* input = o.if_contains("input")) {
    if (!input->is_object() || IsRefObject(*input)) {
      problems.push_back(where + "input: must be an object of fields (references go in fields)");
    } else {
      step.input = *input;
      std::vector<std::pair<std::string, PlanRef>> refs;
      CollectRefs(*input, "input", refs, problems, where);
    }
  }
  if (const json::value* deps = o.if_contains("depends_on")) {
    if (!deps->is_array()) {
      problems.push_back(where + "depends_on: must be an array of step ids");
    } else {
      for (const json::value& dep : deps->get_array()) {
        if (!dep.is_string() || !ValidStepId(dep.get_string())) {
          problems.push_back(where + "depends_on: every element must be a step id");
          continue;
        }
        step.depends_on.emplace_back(dep.get_string());
      }
    }
  }
  if (const json::value* c = o.if_contains("condition")) ParseCondition(*c, where, step, problems);
  if (const json::value* ov = o.if_contains("overrides")) ParseOverrides(*ov, where, step, problems);
  return step;
}

}  // namespace

std::string PlanStepAction(const PlanStep& step) {
  return step.publish ? "publish " + step.publish->subject : step.tool;
}

std::string_view ConditionOpName(ConditionOp op) {
  switch (op) {
    case ConditionOp::kEq: return "==";
    case ConditionOp::kNe: return "!=";
    case ConditionOp::kLt: return "<";
    case ConditionOp::kLe: return "<=";
    case ConditionOp::kGt: return ">";
    case ConditionOp::kGe: return ">=";
    case ConditionOp::kExists: return "exists";
  }
  return "?";
}

Result<Plan> ParsePlanFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(Errc::kInvalidArgument, "cannot read plan file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  auto plan = ParsePlan(text.str());
  if (!plan) return plan.error().WithContext(path);
  return plan;
}

Result<Plan> ParsePlan(std::string_view json_text) {
  RECKON_TRY(json::value value, ParseStrictJson(json_text));
  return ParsePlanJson(value);
}

Result<Plan> ParsePlanJson(const json::value& json) {
  Problems problems;
  if (!json.is_object()) return Invalid("", {"the plan must be a JSON object"});
  const json::object& o = json.get_object();
  Plan plan;
  CheckKeys(o, {"plan_id", "description", "steps"}, "plan: ", problems);
  const json::value* id = o.if_contains("plan_id");
  if (id == nullptr || !id->is_string() || !ValidPlanId(id->get_string())) {
    problems.push_back("plan_id: required, 1-128 characters of A-Z a-z 0-9 _ . -, starting with "
                       "a letter or digit");
  } else {
    plan.plan_id = std::string(id->get_string());
  }
  if (const json::value* d = o.if_contains("description")) {
    if (d->is_string()) plan.description = std::string(d->get_string());
    else problems.push_back("description: must be a string");
  }
  const json::value* steps = o.if_contains("steps");
  if (steps == nullptr || !steps->is_array() || steps->get_array().empty()) {
    problems.push_back("steps: required, a non-empty array");
  } else if (steps->get_array().size() > kMaxSteps) {
    problems.push_back("steps: " + std::to_string(steps->get_array().size()) +
                       " steps; a plan holds at most " + std::to_string(kMaxSteps));
  } else {
    const json::array& a = steps->get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (auto step = ParseStep(a[i], i, problems)) plan.steps.push_back(std::move(*step));
    }
  }
  if (!problems.empty()) return Invalid(plan.plan_id, problems);
  return plan;
}

json::value PlanToJson(const Plan& plan) {
  json::array steps;
  for (const PlanStep& step : plan.steps) {
    json::object s{{"id", step.id}};
    if (step.publish) {
      s["publish"] = json::object{{"subject", step.publish->subject},
                                  {"payload", step.publish->payload}};
    } else {
      s["tool"] = step.tool;
      s["input"] = step.input;
    }
    if (!step.description.empty()) s["description"] = step.description;
    json::array deps;
    for (const auto& dep : step.depends_on) deps.emplace_back(dep);
    s["depends_on"] = std::move(deps);
    if (step.condition) {
      json::object c{{"$ref", step.condition->ref.text},
                     {"op", ConditionOpName(step.condition->op)}};
      if (step.condition->op != ConditionOp::kExists) c["value"] = step.condition->value;
      s["condition"] = std::move(c);
    }
    json::object overrides;
    if (step.overrides.max_attempts > 0) overrides["max_attempts"] = step.overrides.max_attempts;
    if (step.require_approval_written) overrides["require_approval"] = *step.require_approval_written;
    if (!overrides.empty()) s["overrides"] = std::move(overrides);
    steps.push_back(std::move(s));
  }
  json::object out{{"plan_id", plan.plan_id}, {"steps", std::move(steps)}};
  if (!plan.description.empty()) out["description"] = plan.description;
  return out;
}

std::string PlanHash(const Plan& plan) {
  auto canonical = CanonicalizeJson(PlanToJson(plan));
  return ToHex(Sha256(canonical ? canonical.value() : std::string()));
}

}  // namespace reckon
