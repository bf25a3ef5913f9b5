#include "reckon/worker/plan_workflow.h"

#include <boost/json/serialize.hpp>

#include <map>
#include <vector>

#include "reckon/plan/plan.h"

namespace reckon {
namespace json = boost::json;

namespace {

enum class Status { kPending, kRunning, kSucceeded, kSkipped, kFailed };

struct StepState {
  Status status = Status::kPending;
  std::string reason;
  std::string provider_ref;
};

const char* StatusName(Status s) {
  switch (s) {
    case Status::kSucceeded: return "succeeded";
    case Status::kSkipped: return "skipped";
    case Status::kFailed: return "failed";
    case Status::kRunning: return "running";
    case Status::kPending: return "pending";
  }
  return "?";
}

// Why a step does not run: its condition is false, a step it depends on did not succeed.
std::string ConditionText(const PlanCondition& condition) {
  return "condition " + condition.ref.text + " " + std::string(ConditionOpName(condition.op)) +
         (condition.op == ConditionOp::kExists ? std::string()
                                                : " " + json::serialize(condition.value)) +
         " is false";
}

// Publishes what a publish step says (references resolved) at the step's own id, so replay
// and every restart find the same message id.
void Publish(WorkflowContext& ctx, const PlanStep& step, const std::string& step_prefix,
             StepState& state, std::map<std::string, json::value>& outputs) {
  auto payload = ResolveRefs(step.publish->payload, outputs);
  if (!payload) {
    state.status = Status::kFailed;  // nothing published
    state.reason = payload.error().message();
    return;
  }
  PublishOptions options;
  options.step_id = step_prefix + step.id;
  auto message_id = ctx.Publish(step.publish->subject, json::serialize(payload.value()), options);
  if (!message_id) {
    state.status = Status::kFailed;
    state.reason = message_id.error().message();
    return;
  }
  state.status = Status::kSucceeded;
  outputs[step.id] =
      json::object{{"message_id", message_id.value()}, {"subject", step.publish->subject}};
}

// Settles or starts a pending step whose dependencies are settled. Nothing (nullopt) while a
// dependency is still pending or running; otherwise the call to await, if one was made (none
// for a step that settled at once).
std::optional<std::optional<WorkflowContext::CallAwaiter>> StartStep(
    WorkflowContext& ctx, const PlanStep& step, const std::string& step_prefix,
    std::map<std::string, StepState>& states, std::map<std::string, json::value>& outputs) {
  StepState& state = states[step.id];
  std::string blocker;
  for (const std::string& dep : step.depends_on) {
    const Status s = states[dep].status;
    if (s == Status::kPending || s == Status::kRunning) return std::nullopt;
    if (s == Status::kSkipped || s == Status::kFailed) blocker = dep;
  }
  if (!blocker.empty()) {
    state.status = Status::kSkipped;
    state.reason = "step '" + blocker + "' it depends on did not succeed";
    return std::optional<WorkflowContext::CallAwaiter>();
  }
  if (step.condition) {
    auto holds = EvaluateCondition(*step.condition, outputs);
    if (!holds || !holds.value()) {
      state.status = holds ? Status::kSkipped : Status::kFailed;
      state.reason = holds ? ConditionText(*step.condition) : holds.error().message();
      return std::optional<WorkflowContext::CallAwaiter>();
    }
  }
  if (step.publish) {
    Publish(ctx, step, step_prefix, state, outputs);
    return std::optional<WorkflowContext::CallAwaiter>();
  }
  auto resolved = ResolveRefs(step.input, outputs);
  if (!resolved) {
    state.status = Status::kFailed;  // no call: nothing happened
    state.reason = resolved.error().message();
    return std::optional<WorkflowContext::CallAwaiter>();
  }
  CallOptions options;
  options.step_id = step_prefix + step.id;
  options.overrides = step.overrides;
  state.status = Status::kRunning;
  return std::optional<WorkflowContext::CallAwaiter>(
      ctx.Call(step.tool, std::move(resolved).value(), options));
}

}  // namespace

Task<PlanOutcome> RunPlanSteps(WorkflowContext& ctx, Plan plan, std::string step_prefix) {
  std::map<std::string, StepState> states;
  std::map<std::string, json::value> outputs;
  std::vector<std::pair<std::string, WorkflowContext::CallAwaiter>> running;

  while (true) {
    // Start every step whose dependencies are settled. A step may settle at once (skipped,
    // failed before its call, or a publish) and unblock a step written before it: repeat
    // until a pass changes nothing.
    bool changed = true;
    while (changed) {
      changed = false;
      for (const PlanStep& step : plan.steps) {
        if (states[step.id].status != Status::kPending) continue;
        auto started = StartStep(ctx, step, step_prefix, states, outputs);
        if (!started) continue;
        changed = true;
        if (started->has_value()) running.emplace_back(step.id, std::move(**started));
      }
    }
    if (running.empty()) break;
    // Take a finished call if there is one, else wait for the first still running.
    std::size_t pick = 0;
    for (std::size_t i = 0; i < running.size(); ++i) {
      if (running[i].second.await_ready()) {
        pick = i;
        break;
      }
    }
    auto [id, awaiter] = running[pick];
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
    CallResult result = co_await awaiter;
    StepState& state = states[id];
    if (result) {
      state.status = Status::kSucceeded;
      state.provider_ref = result.value().provider_ref;
      outputs[id] = result.value().output;
    } else {
      state.status = Status::kFailed;
      state.reason = result.error().code + ": " + result.error().message;
    }
  }

  PlanOutcome outcome;
  for (const PlanStep& step : plan.steps) {
    const StepState& state = states[step.id];
    json::object s{{"status", StatusName(state.status)}};
    if (auto it = outputs.find(step.id); it != outputs.end()) s["output"] = it->second;
    if (!state.provider_ref.empty()) s["provider_ref"] = state.provider_ref;
    if (!state.reason.empty()) s["reason"] = state.reason;
    if (state.status == Status::kFailed) {
      outcome.failed.push_back(step.id + " (" + state.reason + ")");
    }
    outcome.steps[step.id] = std::move(s);
  }
  co_return outcome;
}

Task<WorkflowOutcome> PlanWorkflow(WorkflowContext& ctx, json::value input) {
  auto parsed = ParsePlanJson(input);
  if (!parsed) co_return CallFailure{"invalid_plan", parsed.error().message()};
  Plan plan = std::move(parsed).value();
  const std::string plan_id = plan.plan_id;
  auto run = RunPlanSteps(ctx, std::move(plan), "");
  PlanOutcome outcome = co_await std::move(run);
  const std::vector<std::string>& failed = outcome.failed;
  json::object steps = std::move(outcome.steps);
  if (!failed.empty()) {
    std::string message = "plan '" + plan_id + "': " + std::to_string(failed.size()) +
                          " step(s) failed: ";
    for (std::size_t i = 0; i < failed.size(); ++i) message += (i ? "; " : "") + failed[i];
    co_return CallFailure{"plan_step_failed", message};
  }
  co_return json::object{{"plan_id", plan_id}, {"steps", std::move(steps)}};
}

Result<void> RegisterPlanWorkflow(WorkflowRegistry& workflows) {
  return workflows.Register(kPlanWorkflow, PlanWorkflow);
}

}  // namespace reckon
