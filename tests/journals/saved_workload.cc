#include "tests/journals/saved_workload.h"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <chrono>

#include "reckon/worker/plan_workflow.h"
#include "reckon/host/testing/fast_contracts.h"

namespace reckon::testing::saved {

namespace json = boost::json;

namespace {

// reserve, then charge; completes with the charge's provider reference.
Task<WorkflowOutcome> Checkout(WorkflowContext& ctx, json::value) {
  auto reserve = ctx.Call("reserve", FastInput("acct-1", 4200));
  CallResult reserved = co_await reserve;
  if (!reserved) co_return reserved.error();
  auto charge = ctx.Call("charge", FastInput("acct-1", 4200));
  CallResult charged = co_await charge;
  if (!charged) co_return charged.error();
  co_return json::object{{"charge", charged.value().provider_ref}};
}

// Sleeps input.sleep_ms, then waits for the signal "go"; completes with its payload.
Task<WorkflowOutcome> Nap(WorkflowContext& ctx, json::value input) {
  const std::int64_t sleep_ms = input.at("sleep_ms").as_int64();
  auto sleep = ctx.Sleep(std::chrono::milliseconds(sleep_ms));
  co_await sleep;
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"go", payload}};
}

}  // namespace

std::vector<ToolContract> Contracts() {
  ToolContract payout = FastContract("payout", SideEffect::kNonRepeatableWrite);
  payout.approval = {.kind = ApprovalKind::kWhen,
                     .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                     .grant_ttl = std::chrono::hours(1)};
  ToolContract transfer = FastContract("transfer", SideEffect::kNonRepeatableWrite);
  transfer.reconcile = {.mode = ReconcileMode::kNeedsHuman};
  return {FastContract("reserve", SideEffect::kIdempotentWrite),
          FastContract("charge", SideEffect::kNonRepeatableWrite), std::move(payout),
          std::move(transfer)};
}

Result<void> RegisterTools(ToolRegistry& tools, testkit::FakeProvider& provider) {
  for (ToolContract& contract : Contracts()) {
    RECKON_TRY(tools.Register(testkit::ProviderTool(std::move(contract), provider)));
  }
  return Ok();
}

Result<void> RegisterWorkflows(WorkflowRegistry& workflows) {
  RECKON_TRY(workflows.Register(kCheckoutType, Checkout));
  RECKON_TRY(workflows.Register(kNapType, Nap));
  return RegisterPlanWorkflow(workflows);
}

json::value PlanJson() {
  return json::parse(R"({"plan_id": "plan-1", "steps": [
    {"id": "a", "tool": "reserve", "input": {"account": "acct-a", "amount_cents": 100}},
    {"id": "b", "tool": "reserve", "depends_on": ["a"],
     "input": {"account": "acct-b", "amount_cents": 200, "memo": {"$ref": "steps.a.output.ref"}}}
  ]})");
}

json::value NapInput(std::int64_t sleep_ms) { return json::object{{"sleep_ms", sleep_ms}}; }

}  // namespace reckon::testing::saved
