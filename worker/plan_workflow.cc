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

}  // namespace

Task<PlanOutcome> RunPlanSteps(WorkflowContext& ctx, Plan plan, std::string step_prefix) {
  std::map<std::string, StepState> states;
  std::map<std::string, json::value> outputs;
  std::vector<std::pair<std::string, WorkflowContext::CallAwaiter>> running;

  while (true) {
    // Start every step whose dependencies are settled.
    for (const PlanStep& step : plan.steps) {
      StepState& state = states[step.id];
      if (state.status != Status::kPending) continue;
      bool settled = true, blocked = false;
      std::string blocker;
      for (const std::string& dep : step.depends_on) {
        const Status s = states[dep].status;
        if (s == Status::kPending || s == Status::kRunning) settled = false;
        if (s == Status::kSkipped || s == Status::kFailed) {
          blocked = true;
          blocker = dep;
        }
      }
      if (blocked) {
        state.status = Status::kSkipped;
        state.reason = "step '" + blocker + "' it depends on did not succeed";
        continue;
      }
      if (!settled) continue;
      if (step.condition) {
        auto holds = EvaluateCondition(*step.condition, outputs);
        if (!holds) {
          state.status = Status::kFailed;
          state.reason = holds.error().message();
          continue;
        }
        if (!holds.value()) {
          state.status = Status::kSkipped;
          state.reason = "condition " + step.condition->ref.text + " " +
                         std::string(ConditionOpName(step.condition->op)) +
                         (step.condition->op == ConditionOp::kExists
                              ? std::string()
                              : " " + json::serialize(step.condition->value)) +
                         " is false";
          continue;
        }
      }
      auto resolved = ResolveRefs(step.input, outputs);
      if (!resolved) {
        state.status = Status::kFailed;  // no call: nothing happened
        state.reason = resolved.error().message();
        continue;
      }
      CallOptions options;
      options.step_id = step_prefix + step.id;
      options.overrides = step.overrides;
      running.emplace_back(step.id, ctx.Call(step.tool, std::move(resolved).value(), options));
      state.status = Status::kRunning;
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
