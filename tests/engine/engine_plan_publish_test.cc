// Publish steps of agent plans (plan/plan.h, PlanPublish) on the embedded engine over a real
// journal: the message lands in the outbox at the plan's own step id with its references
// resolved, once across a crash and replay; a publish whose dependency did not succeed, or
// whose condition is false, publishes nothing; a step written before the publish it depends on
// still runs.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <limits>

#include "reckon/engine/outbox_message.h"
#include "reckon/plan/plan.h"
#include "reckon/storage/backend/open_backend.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"

namespace reckon {
namespace {

using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

// "reserve", then "notify" publishes the reservation's ref; "after" (written first) reserves
// again once the message is in the outbox.
json::value ReservePublishReserve(const std::string& plan_id) {
  return json::parse(R"({"plan_id": ")" + plan_id + R"(", "steps": [
    {"id": "after", "tool": "reserve", "depends_on": ["notify"],
     "input": {"account": "acct-b", "amount_cents": 200,
               "memo": {"$ref": "steps.notify.output.message_id"}}},
    {"id": "reserve", "tool": "reserve", "input": {"account": "acct-a", "amount_cents": 100}},
    {"id": "notify", "depends_on": ["reserve"],
     "publish": {"subject": "reservations.made",
                 "payload": {"plan": ")" + plan_id + R"(", "ref": {"$ref": "steps.reserve.output.ref"}}}}
  ]})");
}

class PlanPublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
    RECKON_ASSERT_OK(RegisterPlanWorkflow(h_.workflows()));
  }
  void StartPlan(const json::value& plan_json) {
    auto plan = ParsePlanJson(plan_json);
    ASSERT_TRUE(plan) << plan.error().ToString();
    RECKON_ASSERT_OK(ValidatePlan(plan.value(), h_.tools().contracts()));
    auto started = h_.Start(plan.value().plan_id, kPlanWorkflow, PlanToJson(plan.value()));
    ASSERT_TRUE(started) << started.error().ToString();
  }
  // What the run's message ids derive from (after Shutdown: the journal is free to read).
  IdScope Scope(const std::string& workflow_id) {
    auto scope = testing::LatestIdScope(h_.journal(), workflow_id);
    EXPECT_TRUE(scope) << scope.error().ToString();
    return scope ? scope.value() : IdScope{};
  }
  std::vector<OutboxRow> Outbox() {
    auto store = OpenOutboxStore(h_.journal_name(), nullptr);
    EXPECT_TRUE(store) << store.error().ToString();
    if (!store) return {};
    auto due = store.value()->ListDue(std::numeric_limits<std::int64_t>::max(), 100);
    EXPECT_TRUE(due) << due.error().ToString();
    return due ? due.value() : std::vector<OutboxRow>{};
  }
  json::value Result(const std::string& id) {
    return json::parse(h_.Describe(id)->result_json);
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(PlanPublishTest, TheMessageCommitsAtThePlansStepIdWithItsReferencesResolved) {
  h_.Boot();
  StartPlan(ReservePublishReserve("pub-1"));
  ASSERT_TRUE(h_.RunUntilSettled("pub-1"));
  ASSERT_EQ(h_.Describe("pub-1")->status, RunStatus::kCompleted) << h_.Describe("pub-1")->result_json;
  const json::value result = Result("pub-1");
  h_.Shutdown();
  const auto rows = Outbox();
  ASSERT_EQ(rows.size(), 1u);
  const std::string message_id = MessageIdFor(Scope("pub-1"), "notify");
  EXPECT_EQ(rows[0].message_id, message_id);
  EXPECT_EQ(rows[0].step_id, "notify");
  EXPECT_EQ(rows[0].subject, "reservations.made");
  const auto calls = provider_.calls_to("reserve");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(json::parse(rows[0].payload),
            json::parse(R"({"plan":"pub-1","ref":")" + provider_.ref_of(calls[0].key) + "\"}"));
  // The step written first ran after the publish it depends on, with its output.
  EXPECT_EQ(calls[1].step_id, "after");
  EXPECT_EQ(calls[1].input.at("memo"), json::value(message_id));
  EXPECT_EQ(result.at("steps").at("notify").at("status"), "succeeded");
  EXPECT_EQ(result.at("steps").at("notify").at("output").at("message_id"), json::value(message_id));
}

TEST_F(PlanPublishTest, ACrashAfterThePublishMakesNoSecondMessage) {
  bool crashed_once = false;
  provider_.OnCall([&](const testkit::CallRecord& call) {
    if (call.step_id == "after" && !crashed_once) {
      crashed_once = true;
      h_.Crash();
    }
  });
  h_.Boot();
  StartPlan(ReservePublishReserve("pub-2"));
  h_.RunUntil([&] { return h_.crashed(); });
  ASSERT_TRUE(crashed_once);
  h_.Restart();
  RECKON_ASSERT_OK(h_.Recover());
  ASSERT_TRUE(h_.RunUntilSettled("pub-2"));
  EXPECT_EQ(h_.Describe("pub-2")->status, RunStatus::kCompleted);
  h_.Shutdown();
  const auto rows = Outbox();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].message_id, MessageIdFor(Scope("pub-2"), "notify"));
  int markers = 0;
  for (const Event& event : h_.Events("pub-2")) {
    if (const auto* m = std::get_if<MarkerRecorded>(&event.body)) markers += m->kind == kPublishMarker;
  }
  EXPECT_EQ(markers, 1);
}

TEST_F(PlanPublishTest, NothingIsPublishedForAFailedDependencyOrAFalseCondition) {
  provider_.Script("reserve", {testkit::Step{testkit::Behaviour::kReject}});
  h_.Boot();
  StartPlan(json::parse(R"({"plan_id": "pub-3", "steps": [
    {"id": "reserve", "tool": "reserve", "input": {"account": "acct-a", "amount_cents": 100}},
    {"id": "notify", "depends_on": ["reserve"], "publish": {"subject": "reservations.made"}},
    {"id": "never", "publish": {"subject": "reservations.never", "payload": 1},
     "condition": {"$ref": "steps.notify.output.subject", "op": "exists"}, "depends_on": ["notify"]}
  ]})"));
  ASSERT_TRUE(h_.RunUntilSettled("pub-3"));
  ASSERT_EQ(h_.Describe("pub-3")->status, RunStatus::kFailed) << h_.Describe("pub-3")->result_json;
  h_.Shutdown();
  EXPECT_TRUE(Outbox().empty());
}

TEST_F(PlanPublishTest, AFalseConditionSkipsThePublish) {
  h_.Boot();
  StartPlan(json::parse(R"({"plan_id": "pub-4", "steps": [
    {"id": "reserve", "tool": "reserve", "input": {"account": "acct-a", "amount_cents": 100}},
    {"id": "notify", "depends_on": ["reserve"], "publish": {"subject": "reservations.made"},
     "condition": {"$ref": "steps.reserve.output.tool", "op": "==", "value": "charge"}}
  ]})"));
  ASSERT_TRUE(h_.RunUntilSettled("pub-4"));
  ASSERT_EQ(h_.Describe("pub-4")->status, RunStatus::kCompleted);
  EXPECT_EQ(Result("pub-4").at("steps").at("notify").at("status"), "skipped");
  h_.Shutdown();
  EXPECT_TRUE(Outbox().empty());
}

}  // namespace
}  // namespace reckon
