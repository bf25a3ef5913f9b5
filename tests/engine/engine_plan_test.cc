// Agent plans run as durable workflows (worker/plan_workflow.h) on the embedded engine over a
// real journal: a diamond runs its middle steps in parallel, a crash in the middle resumes
// without repeating committed steps, overrides tighten a contract, conditions skip steps, and
// a plan id cannot be reused for another plan.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reckon/plan/plan.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"

namespace reckon {
namespace {

using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

// Steps call "reserve" (idempotent_write) with {account, amount_cents, memo?}; its output is
// {"ref": "...", "tool": "reserve"}.
json::value Diamond(const std::string& plan_id) {
  return json::parse(R"({"plan_id": ")" + plan_id + R"(", "steps": [
    {"id": "a", "tool": "reserve", "input": {"account": "acct-a", "amount_cents": 100}},
    {"id": "b", "tool": "reserve", "depends_on": ["a"],
     "input": {"account": "acct-b", "amount_cents": 200, "memo": {"$ref": "steps.a.output.ref"}}},
    {"id": "c", "tool": "reserve", "depends_on": ["a"],
     "input": {"account": "acct-c", "amount_cents": 300, "memo": {"$ref": "steps.a.output.ref"}}},
    {"id": "d", "tool": "reserve", "depends_on": ["b", "c"],
     "input": {"account": "acct-d", "amount_cents": 400, "memo": {"$ref": "steps.c.output.ref"}}}
  ]})");
}

class PlanRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("charge", SideEffect::kNonRepeatableWrite), provider_)));
    RECKON_ASSERT_OK(RegisterPlanWorkflow(h_.workflows()));
  }
  // What `reckon plan run` does before starting: parse and validate against the contracts.
  void StartPlan(const json::value& plan_json) {
    auto plan = ParsePlanJson(plan_json);
    ASSERT_TRUE(plan) << plan.error().ToString();
    RECKON_ASSERT_OK(ValidatePlan(plan.value(), h_.tools().contracts()));
    auto started = h_.Start(plan.value().plan_id, kPlanWorkflow, PlanToJson(plan.value()));
    ASSERT_TRUE(started) << started.error().ToString();
  }
  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(PlanRunTest, ADiamondRunsItsMiddleStepsInParallel) {
  // b and c each hold their reply until both are in flight.
  testkit::Step together{testkit::Behaviour::kCommit};
  together.wait_for_in_flight = 2;
  provider_.Script("reserve", {testkit::Step{}, together, together});
  h_.Boot();
  StartPlan(Diamond("diamond-1"));
  ASSERT_TRUE(h_.RunUntilSettled("diamond-1"));
  ASSERT_EQ(h_.Describe("diamond-1")->status, RunStatus::kCompleted)
      << h_.Describe("diamond-1")->result_json;
  EXPECT_EQ(provider_.max_in_flight(), 2);
  const auto calls = provider_.calls_to("reserve");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].step_id, "a");
  EXPECT_EQ(calls[3].step_id, "d");
  // d's memo is c's output, resolved from the journaled result.
  EXPECT_EQ(calls[3].input.at("memo"), json::value(provider_.ref_of(calls[2].step_id == "c"
                                                                      ? calls[2].key
                                                                      : calls[1].key)));
  const json::value result = json::parse(h_.Describe("diamond-1")->result_json);
  for (const char* step : {"a", "b", "c", "d"}) {
    EXPECT_EQ(result.at("steps").at(step).at("status"), "succeeded") << step;
  }
  h_.Shutdown();
  // b and c were started by one decision, in one commit.
  const auto events = h_.Events("diamond-1");
  const auto started = EventsOf<AttemptStarted>(events);
  ASSERT_EQ(started.size(), 4u);
  EXPECT_EQ(started[1].recorded_at_us, started[2].recorded_at_us);
  // Step ids are the plan's, so operation ids are stable across replays.
  EXPECT_EQ(OperationIdOfStep(events, "b"), calls[1].step_id == "b" ? calls[1].key : calls[2].key);
}

TEST_F(PlanRunTest, ACrashInTheMiddleResumesWithoutRepeatingCommittedSteps) {
  bool crashed_once = false;
  provider_.OnCall([&](const testkit::CallRecord& call) {
    if (call.step_id == "d" && !crashed_once) {
      crashed_once = true;
      h_.Crash();
    }
  });
  h_.Boot();
  StartPlan(Diamond("diamond-2"));
  h_.RunUntil([&] { return h_.crashed(); });
  ASSERT_TRUE(crashed_once);
  h_.Restart();
  auto recovered = h_.Recover();
  ASSERT_TRUE(recovered) << recovered.error().ToString();
  ASSERT_TRUE(h_.RunUntilSettled("diamond-2"));
  EXPECT_EQ(h_.Describe("diamond-2")->status, RunStatus::kCompleted);
  // a, b and c committed before the crash and were never called again; d was retried under
  // the same operation id and took effect once.
  int a = 0, b = 0, c = 0, d = 0;
  for (const auto& call : provider_.calls_to("reserve")) {
    a += call.step_id == "a";
    b += call.step_id == "b";
    c += call.step_id == "c";
    d += call.step_id == "d";
  }
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(c, 1);
  EXPECT_GE(d, 1);
  for (const auto& call : provider_.calls_to("reserve")) EXPECT_EQ(provider_.effects(call.key), 1);
}

TEST_F(PlanRunTest, OverridesTightenTheContract) {
  // charge allows 3 attempts; the plan allows 1, so a refused attempt fails the step.
  provider_.Script("charge", {testkit::Step{testkit::Behaviour::kRefuse}});
  h_.Boot();
  StartPlan(json::parse(R"({"plan_id": "tight-1", "steps": [
    {"id": "charge", "tool": "charge", "input": {"account": "acct-a", "amount_cents": 50},
     "overrides": {"max_attempts": 1}},
    {"id": "after", "tool": "reserve", "depends_on": ["charge"],
     "input": {"account": "acct-b", "amount_cents": 60}}]})"));
  ASSERT_TRUE(h_.RunUntilSettled("tight-1"));
  auto run = h_.Describe("tight-1");
  EXPECT_EQ(run->status, RunStatus::kFailed);
  EXPECT_EQ(provider_.calls_to("charge").size(), 1u);
  EXPECT_TRUE(provider_.calls_to("reserve").empty()) << "a dependent of a failed step is skipped";
  // Approval required by the plan although the contract has none.
  StartPlan(json::parse(R"({"plan_id": "tight-2", "steps": [
    {"id": "charge", "tool": "charge", "input": {"account": "acct-a", "amount_cents": 50},
     "overrides": {"require_approval": true}}]})"));
  ASSERT_TRUE(h_.RunUntilState("tight-2", "charge", OperationState::kAwaitingApproval));
  auto op = h_.Operation("tight-2", "charge");
  RECKON_ASSERT_OK(h_.Decide("tight-2", ApprovalDecision{"", op->operation_id, op->intent_hash,
                                                         true, "alice", ""}));
  ASSERT_TRUE(h_.RunUntilSettled("tight-2"));
  EXPECT_EQ(h_.Describe("tight-2")->status, RunStatus::kCompleted);
}

TEST_F(PlanRunTest, AFalseConditionSkipsTheStepAndItsDependents) {
  h_.Boot();
  StartPlan(json::parse(R"({"plan_id": "cond-1", "steps": [
    {"id": "a", "tool": "reserve", "input": {"account": "acct-a", "amount_cents": 100}},
    {"id": "b", "tool": "reserve", "depends_on": ["a"],
     "condition": {"$ref": "steps.a.output.tool", "op": "==", "value": "charge"},
     "input": {"account": "acct-b", "amount_cents": 200}},
    {"id": "c", "tool": "reserve", "depends_on": ["b"],
     "input": {"account": "acct-c", "amount_cents": 300}}]})"));
  ASSERT_TRUE(h_.RunUntilSettled("cond-1"));
  ASSERT_EQ(h_.Describe("cond-1")->status, RunStatus::kCompleted);
  const json::value result = json::parse(h_.Describe("cond-1")->result_json);
  EXPECT_EQ(result.at("steps").at("b").at("status"), "skipped");
  EXPECT_EQ(result.at("steps").at("c").at("status"), "skipped");
  EXPECT_EQ(provider_.calls_to("reserve").size(), 1u);
}

TEST_F(PlanRunTest, APlanIdCannotBeReusedForAnotherPlan) {
  h_.Boot();
  StartPlan(Diamond("same-id"));
  ASSERT_TRUE(h_.RunUntilSettled("same-id"));
  // The same plan again: idempotent.
  auto again = h_.Start("same-id", kPlanWorkflow, PlanToJson(ParsePlanJson(Diamond("same-id")).value()));
  EXPECT_TRUE(again);
  json::value other = Diamond("same-id");
  other.at("steps").as_array()[0].as_object()["input"].as_object()["amount_cents"] = 101;
  auto refused = h_.Start("same-id", kPlanWorkflow, PlanToJson(ParsePlanJson(other).value()));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kAlreadyExists);
}

TEST_F(PlanRunTest, AnUnparseablePlanThatBypassedValidationRunsNoStep) {
  h_.Boot();
  auto started = h_.Start("raw-1", kPlanWorkflow, json::parse(R"({"plan_id": 3, "steps": {}})"));
  ASSERT_TRUE(started) << started.error().ToString();
  ASSERT_TRUE(h_.RunUntilSettled("raw-1"));
  EXPECT_EQ(h_.Describe("raw-1")->status, RunStatus::kFailed);
  EXPECT_TRUE(provider_.calls().empty());
}

}  // namespace
}  // namespace reckon
