// ValidatePlan (plan.h): the checks of a parsed plan against the tools' contracts, one function
// per kind of problem.
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "reckon/base/json_schema.h"
#include "reckon/contract/approval_rule.h"
#include "reckon/contract/field_path.h"
#include "reckon/plan/plan.h"
#include "reckon/plan/plan_refs.h"

namespace reckon {
namespace json = boost::json;
using namespace plan_detail;

namespace {

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

}  // namespace reckon
