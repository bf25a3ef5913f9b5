// The plan workflow: runs an agent plan (plan/plan.h) as a durable workflow.
//
// Its input is the plan (PlanToJson form). Steps run as soon as every step they depend on has
// succeeded, so independent steps run in parallel and dependent ones in order. Each call uses
// the plan's step id as its step id, so operation ids are stable across replays and restarts,
// and the step's overrides tighten its tool's contract for that call. A step whose condition
// is false, or that depends on a step that did not succeed, is skipped; a step whose
// references cannot be resolved fails without calling its tool.
//
// Result: {"plan_id", "steps": {"<id>": {"status": "succeeded"|"skipped"|"failed", "output"?,
// "provider_ref"?, "reason"?}}}. The workflow completes when no step failed, and fails with
// code "plan_step_failed" naming the failed steps otherwise.
//
// Deterministic: it reads nothing but its input and its calls' recorded results, and the set of
// calls it issues depends only on those (never on the order results arrive in).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <vector>

#include "reckon/plan/plan.h"

#include "reckon/worker/task.h"
#include "reckon/worker/workflow_context.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon {

inline constexpr char kPlanWorkflow[] = "plan";

// How the steps of a plan ended: {"<id>": {"status", "output"?, "provider_ref"?, "reason"?}},
// and "<id> (<reason>)" for each failed step.
struct PlanOutcome {
  boost::json::object steps;
  std::vector<std::string> failed;
};

// Runs `plan`'s steps inside a workflow (the plan workflow, or an agent loop running one plan
// fragment per round). Each call's step id is `step_prefix` + the plan's step id, so several
// fragments can run in one workflow without their operation ids colliding.
Task<PlanOutcome> RunPlanSteps(WorkflowContext& ctx, Plan plan, std::string step_prefix);

Task<WorkflowOutcome> PlanWorkflow(WorkflowContext& ctx, boost::json::value input);

// Registers PlanWorkflow as workflow type "plan".
Result<void> RegisterPlanWorkflow(WorkflowRegistry& workflows);

}  // namespace reckon
