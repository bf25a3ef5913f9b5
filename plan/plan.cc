#include "reckon/plan/plan.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "reckon/base/intent_hash.h"
#include "reckon/base/jcs.h"
#include "reckon/base/json_schema.h"
#include "reckon/base/subject.h"
#include "reckon/contract/approval_rule.h"
#include "reckon/contract/field_path.h"

namespace reckon {
namespace json = boost::json;

namespace {

using Problems = std::vector<std::string>;

constexpr std::size_t kMaxSteps = 1000;

bool IdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-';
}

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

Error Invalid(const std::string& plan_id, const Problems& problems) {
  std::string message = "plan" + (plan_id.empty() ? std::string() : " " + Quote(plan_id)) +
                        " is invalid (" + std::to_string(problems.size()) + " problem" +
                        (problems.size() == 1 ? "" : "s") + "):";
  for (const std::string& p : problems) message += "\n  - " + p;
  return Err(Errc::kInvalidArgument, std::move(message));
}

// --- validation helpers -------------------------------------------------------------------

// The sub-schema of `schema` at `path` through "properties" (and "items" for indices), or null
// when the schema does not say.
const json::value* SchemaAt(const json::value& schema, const std::vector<std::string>& path,
                            std::string* missing) {
  const json::value* node = &schema;
  for (const std::string& field : path) {
    if (!node->is_object()) return nullptr;
    const json::object& o = node->get_object();
    const json::value* type = o.if_contains("type");
    const bool is_array = type != nullptr && type->is_string() && type->get_string() == "array";
    if (is_array) {
      const json::value* items = o.if_contains("items");
      if (items == nullptr) return nullptr;
      if (field.empty() || !std::all_of(field.begin(), field.end(), ::isdigit)) {
        *missing = field;
        return nullptr;
      }
      node = items;
      continue;
    }
    const json::value* props = o.if_contains("properties");
    if (props == nullptr || !props->is_object()) return nullptr;
    const json::value* next = props->get_object().if_contains(field);
    if (next == nullptr) {
      // additionalProperties false (or a declared object with properties): the field is absent.
      *missing = field;
      return nullptr;
    }
    node = next;
  }
  return node;
}

std::string TypeOf(const json::value* schema) {
  if (schema == nullptr || !schema->is_object()) return "";
  const json::value* type = schema->get_object().if_contains("type");
  return type != nullptr && type->is_string() ? std::string(type->get_string()) : "";
}

bool TypesCompatible(const std::string& produced, const std::string& expected) {
  if (produced.empty() || expected.empty() || produced == expected) return true;
  return (expected == "number" && produced == "integer");
}

std::vector<std::string> FieldNames(const json::value& schema) {
  std::vector<std::string> names;
  if (!schema.is_object()) return names;
  const json::value* props = schema.get_object().if_contains("properties");
  if (props == nullptr || !props->is_object()) return names;
  for (const auto& [key, value] : props->get_object()) names.emplace_back(key);
  return names;
}

// --- the checks of ValidatePlan, one per kind of problem ---------------------------------------

// What the checks of one plan share: its steps by id, the contracts, the steps some order can
// run, and (filled lazily) everything each step transitively depends on.
struct PlanIndex {
  const ContractRegistry& contracts;
  std::map<std::string, const PlanStep*> by_id;
  std::set<std::string> ordered;
  std::map<std::string, std::set<std::string>> before;
};

// Each step id names one step.
void CheckDuplicateIds(const Plan& plan, PlanIndex& index, Problems& problems) {
  for (const PlanStep& step : plan.steps) {
    if (!index.by_id.emplace(step.id, &step).second) {
      problems.push_back("step '" + step.id + "': id: used by more than one step");
    }
  }
}

// Each dependency names another step of the plan.
void CheckDependencies(const Plan& plan, const PlanIndex& index, Problems& problems) {
  for (const PlanStep& step : plan.steps) {
    const std::string where = "step '" + step.id + "': ";
    for (const std::string& dep : step.depends_on) {
      if (dep == step.id) {
        problems.push_back(where + "depends_on: a step cannot depend on itself");
      } else if (!index.by_id.count(dep)) {
        problems.push_back(where + "depends_on: no step '" + dep + "' in this plan");
      }
    }
  }
}

// The steps some order can run (Kahn): what is left after removing every step whose
// dependencies are gone. Dependencies that name no step are left out (CheckDependencies).
std::set<std::string> OrderableSteps(const Plan& plan, const PlanIndex& index) {
  std::map<std::string, int> missing_deps;
  std::map<std::string, std::vector<std::string>> dependents;
  for (const PlanStep& step : plan.steps) {
    std::set<std::string> deps;
    for (const std::string& dep : step.depends_on) {
      if (index.by_id.count(dep) && dep != step.id) deps.insert(dep);
    }
    missing_deps[step.id] = static_cast<int>(deps.size());
    for (const std::string& dep : deps) dependents[dep].push_back(step.id);
  }
  std::vector<std::string> ready;
  for (const auto& [id, n] : missing_deps) {
    if (n == 0) ready.push_back(id);
  }
  std::set<std::string> ordered;
  while (!ready.empty()) {
    std::string id = ready.back();
    ready.pop_back();
    ordered.insert(id);
    for (const std::string& next : dependents[id]) {
      if (--missing_deps[next] == 0) ready.push_back(next);
    }
  }
  return ordered;
}

// No cycle: every step is orderable.
void CheckCycles(const Plan& plan, PlanIndex& index, Problems& problems) {
  index.ordered = OrderableSteps(plan, index);
  if (index.ordered.size() >= index.by_id.size()) return;
  std::vector<std::string> cyclic;
  for (const PlanStep& step : plan.steps) {
    if (!index.ordered.count(step.id)) cyclic.push_back(Quote(step.id));
  }
  problems.push_back("steps " + Join(cyclic, ", ") +
                     ": depends_on forms a cycle (or waits on one); no order can run them");
}

// Everything step `id` (transitively) depends on; empty for a step in or behind a cycle.
const std::set<std::string>& Ancestors(PlanIndex& index, const std::string& id, int depth) {
  auto it = index.before.find(id);
  if (it != index.before.end()) return it->second;
  std::set<std::string> all;
  auto step = index.by_id.find(id);
  if (step != index.by_id.end() && depth < static_cast<int>(kMaxSteps) && index.ordered.count(id)) {
    for (const std::string& dep : step->second->depends_on) {
      if (!index.by_id.count(dep) || dep == id) continue;
      all.insert(dep);
      const auto& more = Ancestors(index, dep, depth + 1);
      all.insert(more.begin(), more.end());
    }
  }
  return index.before.emplace(id, std::move(all)).first->second;
}

// A reference names a step this step depends on and, when that step's tool declares its
// output, a field it returns. Returns the schema of the referenced value, or null if unknown.
const json::value* CheckReference(PlanIndex& index, const PlanStep& step, const std::string& field,
                                  const PlanRef& ref, Problems& problems) {
  const std::string where = "step '" + step.id + "': " + field + ": ";
  auto target = index.by_id.find(ref.step);
  if (target == index.by_id.end()) {
    problems.push_back(where + "reference '" + ref.text + "' names no step of this plan");
    return nullptr;
  }
  if (!Ancestors(index, step.id, 0).count(ref.step)) {
    problems.push_back(where + "reference '" + ref.text + "' reads step '" + ref.step +
                       "', which this step does not depend on; add it to depends_on");
    return nullptr;
  }
  const ToolContract* tool = index.contracts.Find(target->second->tool);
  if (tool == nullptr || tool->output_schema.is_null()) return nullptr;  // checked when it runs
  std::string missing;
  const json::value* at = SchemaAt(tool->output_schema, ref.path, &missing);
  if (!missing.empty()) {
    const auto fields = FieldNames(tool->output_schema);
    problems.push_back(where + "reference '" + ref.text + "': tool '" + tool->name +
                       "' returns no field '" + missing + "'" +
                       (fields.empty() ? std::string() : " (it returns: " + Join(fields, ", ") + ")"));
    return nullptr;
  }
  return at;
}

// The step's tool has a contract.
void CheckTool(const PlanStep& step, const ContractRegistry& contracts, Problems& problems) {
  if (contracts.FindRegistered(step.tool) != nullptr) return;
  std::vector<std::string> known;
  for (const ToolContract* c : contracts.All()) known.push_back(c->name);
  problems.push_back("step '" + step.id + "': tool: no contract for tool '" + step.tool + "'" +
                     (known.empty() ? std::string("; no tools are known")
                                    : " (known tools: " + Join(known, ", ") + ")"));
}

// The top-level input fields that hold a reference, with the schema of the value a whole-field
// reference produces (null when unknown).
struct ReferencedFields {
  std::set<std::string> names;
  std::map<std::string, const json::value*> produced;
};

// Every reference in the step's input.
ReferencedFields CheckInputReferences(PlanIndex& index, const PlanStep& step, Problems& problems) {
  const std::string where = "step '" + step.id + "': ";
  std::vector<std::pair<std::string, PlanRef>> refs;
  Problems ignored;  // shapes were checked by the parser
  CollectRefs(step.input, "input", refs, ignored, where);
  ReferencedFields fields;
  for (const auto& [field, ref] : refs) {
    const json::value* schema = CheckReference(index, step, field, ref, problems);
    if (field.size() <= 6) continue;  // the whole input: refused by the parser
    const std::string top = field.substr(6, field.find_first_of(".[", 6) - 6);  // "input."
    fields.names.insert(top);
    if (field == "input." + top) fields.produced[top] = schema;
  }
  return fields;
}

// The condition's reference.
void CheckCondition(PlanIndex& index, const PlanStep& step, Problems& problems) {
  if (step.condition) CheckReference(index, step, "condition", step.condition->ref, problems);
}

// A referenced field's type, where both its producer and the tool declare one, matches. Returns
// the tool's input schema with each referenced field accepting anything, for the literal check.
json::value CheckReferencedTypes(const PlanStep& step, const ToolContract& c,
                                 const ReferencedFields& fields, Problems& problems) {
  json::value probe_schema = c.input_schema;
  if (!probe_schema.is_object()) return probe_schema;
  json::value* props = probe_schema.get_object().if_contains("properties");
  if (props == nullptr || !props->is_object()) return probe_schema;
  for (const std::string& top : fields.names) {
    json::value* p = props->get_object().if_contains(top);
    if (p == nullptr) continue;  // not a declared property: the schema decides
    const std::string expected_type = TypeOf(p);
    auto it = fields.produced.find(top);
    const std::string produced_type = it == fields.produced.end() ? "" : TypeOf(it->second);
    if (!TypesCompatible(produced_type, expected_type)) {
      problems.push_back("step '" + step.id + "': input." + top + ": tool '" + c.name +
                         "' expects " + expected_type + ", but the reference gives " +
                         produced_type);
    }
    *p = true;
  }
  return probe_schema;
}

// Literal input values against the tool's input schema; a referenced value is checked for its
// type when the producing tool declares one, and fully when the step runs.
void CheckInputSchema(const PlanStep& step, const ToolContract& c, const ReferencedFields& fields,
                      Problems& problems) {
  json::value probe_schema = CheckReferencedTypes(step, c, fields, problems);
  json::object probe_input = step.input.as_object();
  for (const std::string& top : fields.names) probe_input[top] = nullptr;
  auto compiled = JsonSchema::Compile(probe_schema);
  if (!compiled) return;
  for (const SchemaViolation& v : compiled.value().Violations(probe_input)) {
    problems.push_back("step '" + step.id + "': input" +
                       (v.instance_path == "(root)" ? std::string() : "." + v.instance_path) +
                       ": " + v.message);
  }
}

// Overrides only tighten the tool's contract.
void CheckOverrides(const PlanStep& step, const ToolContract& c, Problems& problems) {
  const std::string where = "step '" + step.id + "': ";
  if (step.overrides.max_attempts > 0 &&
      static_cast<int>(step.overrides.max_attempts) > c.retry.max_attempts) {
    problems.push_back(where + "overrides.max_attempts: " +
                       std::to_string(step.overrides.max_attempts) +
                       " would loosen the contract of '" + c.name + "', which allows " +
                       std::to_string(c.retry.max_attempts) +
                       " attempt(s); overrides may only tighten");
  }
  if (step.require_approval_written == false && c.approval.kind != ApprovalKind::kNone) {
    problems.push_back(where + "overrides.require_approval: false would loosen the contract "
                       "of '" + c.name + "', which asks for approval " +
                       DescribeApprovalRule(c.approval) + "; remove it");
  }
}

// A plan carries no value for a secret field, neither a literal nor a reference (which would
// copy another step's output into it), at the field or at an object that holds it.
void CheckSecretFields(const PlanStep& step, const ToolContract& c, Problems& problems) {
  for (const std::string& field : c.secret_fields) {
    const json::value* node = &step.input;
    std::string at = "input";
    bool carried = true;
    for (const std::string& segment : SplitFieldPath(field)) {
      const json::object* object = node->if_object();
      node = object == nullptr ? nullptr : object->if_contains(segment);
      if (node == nullptr) {
        carried = false;
        break;
      }
      at += "." + segment;
      if (IsRefObject(*node)) break;
    }
    if (!carried) continue;
    problems.push_back("step '" + step.id + "': " + at + ": '" + field +
                       "' is a secret field of tool '" + c.name +
                       "', and a plan may not carry a value for it: secrets come from the "
                       "worker's side (the tool fetches them, e.g. from a vault, when it runs), "
                       "so they are never journaled; remove " + at + " from the plan");
  }
}

// A publish step: its payload's references and its condition. The subject was checked by the
// parser; there is no contract (nothing but the outbox is touched).
void CheckPublishStep(PlanIndex& index, const PlanStep& step, Problems& problems) {
  std::vector<std::pair<std::string, PlanRef>> refs;
  Problems ignored;  // shapes were checked by the parser
  CollectRefs(step.publish->payload, "publish.payload", refs, ignored, "");
  for (const auto& [field, ref] : refs) CheckReference(index, step, field, ref, problems);
  CheckCondition(index, step, problems);
}

void CheckStep(PlanIndex& index, const PlanStep& step, Problems& problems) {
  if (step.publish) return CheckPublishStep(index, step, problems);
  CheckTool(step, index.contracts, problems);
  const ReferencedFields fields = CheckInputReferences(index, step, problems);
  CheckCondition(index, step, problems);
  const RegisteredContract* registered = index.contracts.FindRegistered(step.tool);
  if (registered == nullptr) return;
  CheckSecretFields(step, registered->contract(), problems);
  CheckInputSchema(step, registered->contract(), fields, problems);
  CheckOverrides(step, registered->contract(), problems);
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

Result<void> ValidatePlan(const Plan& plan, const ContractRegistry& contracts) {
  Problems problems;
  PlanIndex index{contracts, {}, {}, {}};
  CheckDuplicateIds(plan, index, problems);
  CheckDependencies(plan, index, problems);
  CheckCycles(plan, index, problems);
  for (const PlanStep& step : plan.steps) CheckStep(index, step, problems);
  if (!problems.empty()) return Invalid(plan.plan_id, problems);
  return Ok();
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

// --- run time ------------------------------------------------------------------------------

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
