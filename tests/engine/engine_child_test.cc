// Child workflows (engine/child_workflow.h): a parent starts children at steps and awaits
// their results; the child's first run is committed with the parent's batch, so a crash at any
// point neither loses a child nor starts it twice; the parent-close policy (abandon, cancel,
// wait) decides what happens to children still running when the parent closes.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <set>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

// A child: charges the amount of its input once, returns the provider's reference.
Task<WorkflowOutcome> ChargeChild(WorkflowContext& ctx, json::value input) {
  const std::int64_t amount = input.as_object().at("amount").as_int64();
  auto charge = ctx.Call("charge", FastInput("acct-" + std::to_string(amount), amount));
  CallResult charged = co_await charge;
  if (!charged) co_return charged.error();
  co_return json::object{{"charged", amount}, {"ref", charged.value().provider_ref}};
}

// A child that waits for signal "go" and returns its payload.
Task<WorkflowOutcome> WaitingChild(WorkflowContext& ctx, json::value) {
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::parse(payload);
}

// A child that fails with its own code.
Task<WorkflowOutcome> FailingChild(WorkflowContext&, json::value) {
  co_return CallFailure{"out_of_stock", "nothing left to ship"};
}

// Charges once itself, starts two charging children (one with a derived id), awaits both,
// charges again: four effects in all.
Task<WorkflowOutcome> Parent(WorkflowContext& ctx, json::value) {
  auto first = ctx.Call("charge", FastInput("acct-parent", 1));
  CallResult r1 = co_await first;
  if (!r1) co_return r1.error();
  auto a = ctx.StartChild("charge-child", "order-1-a", json::object{{"amount", 10}});
  auto b = ctx.StartChild("charge-child", "", json::object{{"amount", 20}});
  WorkflowOutcome ra = co_await a;
  WorkflowOutcome rb = co_await b;
  if (!ra) co_return ra.error();
  if (!rb) co_return rb.error();
  auto last = ctx.Call("charge", FastInput("acct-parent", 2));
  CallResult r2 = co_await last;
  if (!r2) co_return r2.error();
  co_return json::object{{"a", ra.value()}, {"b", rb.value()}};
}

// Starts a waiting child under the policy its input names, and returns without awaiting it.
Task<WorkflowOutcome> Leaver(WorkflowContext& ctx, json::value input) {
  const std::string policy(input.as_object().at("policy").as_string());
  ChildOptions options;
  options.policy = *ParseParentClosePolicy(policy);
  auto child = ctx.StartChild("waiting-child", "leaver-child", json::object{}, options);
  (void)child;
  co_return json::value("left");
}

// Starts a waiting child and waits for it.
Task<WorkflowOutcome> Waiter(WorkflowContext& ctx, json::value) {
  auto child = ctx.StartChild("waiting-child", "waiter-child", json::object{});
  WorkflowOutcome r = co_await child;
  if (!r) co_return r.error();
  co_return r.value();
}

// Starts a child under the id its input names and returns the outcome as a value.
Task<WorkflowOutcome> Starter(WorkflowContext& ctx, json::value input) {
  const std::string id(input.as_object().at("id").as_string());
  const std::string type(input.as_object().at("type").as_string());
  auto child = ctx.StartChild(type, id, json::object{{"amount", 5}});
  WorkflowOutcome r = co_await child;
  if (r) co_return json::object{{"ok", r.value()}};
  co_return json::object{{"code", r.error().code}, {"message", r.error().message}};
}

class ChildWorkflowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("charge", SideEffect::kNonRepeatableWrite), provider_)));
    RECKON_ASSERT_OK(h_.workflows().Register("charge-child", ChargeChild));
    RECKON_ASSERT_OK(h_.workflows().Register("waiting-child", WaitingChild));
    RECKON_ASSERT_OK(h_.workflows().Register("failing-child", FailingChild));
    RECKON_ASSERT_OK(h_.workflows().Register("parent", Parent));
    RECKON_ASSERT_OK(h_.workflows().Register("leaver", Leaver));
    RECKON_ASSERT_OK(h_.workflows().Register("waiter", Waiter));
    RECKON_ASSERT_OK(h_.workflows().Register("starter", Starter));
  }

  bool UntilStatus(const std::string& id, RunStatus status) {
    return h_.RunUntil([&] {
      auto run = h_.Describe(id);
      return run && run->status == status;
    });
  }

  // Every run of the journal, by workflow id (after Shutdown).
  std::map<std::string, std::vector<RunRow>> Runs() {
    auto rows = h_.journal().QueryRuns(RunQuery{});
    EXPECT_TRUE(rows) << rows.error().ToString();
    std::map<std::string, std::vector<RunRow>> out;
    for (RunRow& row : rows.value()) out[row.ref.workflow_id].push_back(row);
    return out;
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(ChildWorkflowTest, AParentAwaitsItsChildrensResultsAndTheJournalLinksThem) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("order-1", "parent", json::object{}));
  ASSERT_TRUE(UntilStatus("order-1", RunStatus::kCompleted));
  const json::value result = json::parse(h_.Describe("order-1")->result_json);
  EXPECT_EQ(result.at("a").at("charged").as_int64(), 10);
  EXPECT_EQ(result.at("b").at("charged").as_int64(), 20);
  EXPECT_EQ(provider_.total_effects(), 4);
  h_.Shutdown();

  const auto parent = h_.Events("order-1");
  const auto initiated = BodiesOf<ChildWorkflowInitiated>(parent);
  ASSERT_EQ(initiated.size(), 2u);
  EXPECT_EQ(initiated[0].step_id, "child#2");
  EXPECT_EQ(initiated[0].child_workflow_id, "order-1-a");
  EXPECT_EQ(initiated[0].parent_close_policy, "cancel");
  // The derived id names the parent run and the step.
  const std::string parent_run = Runs()["order-1"].front().ref.run_id;
  EXPECT_EQ(initiated[1].child_workflow_id, "order-1/" + parent_run + "/child-3");
  const auto closed = BodiesOf<ChildWorkflowClosed>(parent);
  ASSERT_EQ(closed.size(), 2u);
  for (const auto& c : closed) EXPECT_EQ(c.status, "completed");
  // Each child's first event names its parent run, and its run is the one the parent recorded.
  for (const auto& child : initiated) {
    const auto events = h_.Events(child.child_workflow_id);
    ASSERT_FALSE(events.empty());
    const auto& started = std::get<WorkflowStarted>(events.front().body);
    EXPECT_EQ(started.parent_workflow_id, "order-1");
    EXPECT_EQ(started.parent_run_id, parent_run);
    EXPECT_EQ(started.parent_close_policy, "cancel");
    EXPECT_EQ(Runs()[child.child_workflow_id].front().ref.run_id, child.child_run_id);
  }
}

TEST_F(ChildWorkflowTest, AChildIdInUseIsRefusedAndTheCodeSeesWhy) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("taken", "waiting-child", json::object{}));
  RECKON_ASSERT_OK(h_.Start("s-1", "starter", json::object{{"id", "taken"}, {"type", "charge-child"}}));
  ASSERT_TRUE(UntilStatus("s-1", RunStatus::kCompleted));
  const json::value result = json::parse(h_.Describe("s-1")->result_json);
  EXPECT_EQ(result.at("code"), "child_id_in_use");
  EXPECT_NE(std::string(result.at("message").as_string()).find("'taken'"), std::string::npos);
  // A workflow cannot be its own child, and an id must be valid.
  RECKON_ASSERT_OK(h_.Start("s-2", "starter", json::object{{"id", "s-2"}, {"type", "charge-child"}}));
  ASSERT_TRUE(UntilStatus("s-2", RunStatus::kCompleted));
  EXPECT_EQ(json::parse(h_.Describe("s-2")->result_json).at("code"), "invalid_child");
  RECKON_ASSERT_OK(h_.Start("s-3", "starter", json::object{{"id", "bad id!"}, {"type", "charge-child"}}));
  ASSERT_TRUE(UntilStatus("s-3", RunStatus::kCompleted));
  EXPECT_EQ(json::parse(h_.Describe("s-3")->result_json).at("code"), "invalid_child");
  EXPECT_EQ(provider_.total_effects(), 0);
  h_.Shutdown();
  EXPECT_EQ(Runs()["taken"].size(), 1u);
}

TEST_F(ChildWorkflowTest, AFailedChildIsAFailureOfTheAwaitWithTheChildsCode) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("s-f", "starter", json::object{{"id", "s-f-child"}, {"type", "failing-child"}}));
  ASSERT_TRUE(UntilStatus("s-f", RunStatus::kCompleted));
  const json::value result = json::parse(h_.Describe("s-f")->result_json);
  EXPECT_EQ(result.at("code"), "out_of_stock");
  EXPECT_NE(std::string(result.at("message").as_string()).find("nothing left to ship"),
            std::string::npos);
}

TEST_F(ChildWorkflowTest, PolicyCancelCancelsAChildStillRunningWhenTheParentCloses) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("leave-c", "leaver", json::object{{"policy", "cancel"}}));
  ASSERT_TRUE(UntilStatus("leave-c", RunStatus::kCompleted));
  ASSERT_TRUE(UntilStatus("leaver-child", RunStatus::kCancelled));
  h_.Shutdown();
  const auto applied = BodiesOf<ChildPolicyApplied>(h_.Events("leave-c"));
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0].policy, "cancel");
  EXPECT_EQ(applied[0].child_workflow_id, "leaver-child");
}

TEST_F(ChildWorkflowTest, PolicyAbandonLetsTheChildRunOn) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("leave-a", "leaver", json::object{{"policy", "abandon"}}));
  ASSERT_TRUE(UntilStatus("leave-a", RunStatus::kCompleted));
  EXPECT_EQ(h_.Describe("leaver-child")->status, RunStatus::kRunning);
  auto go = h_.engine().Signal("leaver-child", "go", "\"on my own\"");
  auto sent = h_.Await(std::move(go));
  ASSERT_TRUE(sent && *sent);
  ASSERT_TRUE(UntilStatus("leaver-child", RunStatus::kCompleted));
  // Nobody waits for it: the parent's history does not change.
  h_.Shutdown();
  EXPECT_TRUE(BodiesOf<ChildWorkflowClosed>(h_.Events("leave-a")).empty());
}

TEST_F(ChildWorkflowTest, PolicyWaitHoldsTheParentsCloseUntilTheChildEnds) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("leave-w", "leaver", json::object{{"policy", "wait"}}));
  ASSERT_TRUE(h_.RunUntil([&] { return h_.Describe("leaver-child").has_value(); }));
  // The parent's code returned, and its close waits for the child.
  ASSERT_TRUE(h_.RunFor(50ms));
  EXPECT_EQ(h_.Describe("leave-w")->status, RunStatus::kRunning);
  EXPECT_EQ(h_.Describe("leave-w")->wait.kind, WaitKind::kChild);
  auto go = h_.engine().Signal("leaver-child", "go", "\"done\"");
  auto sent = h_.Await(std::move(go));
  ASSERT_TRUE(sent && *sent);
  ASSERT_TRUE(UntilStatus("leave-w", RunStatus::kCompleted));
  EXPECT_EQ(h_.Describe("leaver-child")->status, RunStatus::kCompleted);
  EXPECT_EQ(h_.Describe("leave-w")->result_json, "\"left\"");
}

TEST_F(ChildWorkflowTest, CancellingTheParentCancelsItsChild) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("wait-1", "waiter", json::object{}));
  ASSERT_TRUE(h_.RunUntil([&] { return h_.Describe("waiter-child").has_value(); }));
  auto cancel = h_.engine().Cancel("wait-1", "no longer needed");
  auto cancelled = h_.Await(std::move(cancel));
  ASSERT_TRUE(cancelled && *cancelled) << (cancelled ? cancelled->error().ToString() : "timeout");
  ASSERT_TRUE(UntilStatus("waiter-child", RunStatus::kCancelled));
}

// The parent closes; the process dies before the child's cancel is durable. After the restart
// the child finds its parent closed and is cancelled.
TEST_F(ChildWorkflowTest, AChildWhoseParentClosedWhileTheProcessWasDownIsCancelledOnRecovery) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("leave-c", "leaver", json::object{{"policy", "cancel"}}));
  ASSERT_TRUE(UntilStatus("leave-c", RunStatus::kCompleted));
  h_.Shutdown();  // what was not committed is gone, as with SIGKILL
  h_.Boot();
  auto recovered = h_.Recover();
  ASSERT_TRUE(recovered) << recovered.error().ToString();
  ASSERT_TRUE(UntilStatus("leaver-child", RunStatus::kCancelled));
}

// The parent and its children crash at each provider call in turn (eight points: before and
// after each effect of the parent and of each child). Every life resumes from the journal.
// Afterwards: the parent completed with both results, each child id has exactly one run, and
// every operation took effect exactly once.
TEST_F(ChildWorkflowTest, ACrashAtAnyPointNeitherLosesAChildNorStartsItTwice) {
  for (int point = 1; point <= 8; ++point) {
    SCOPED_TRACE("crash at call " + std::to_string(point));
    testkit::FakeProvider provider;
    EngineHarness h;
    RECKON_ASSERT_OK(h.tools().Register(
        testkit::ProviderTool(FastContract("charge", SideEffect::kNonRepeatableWrite), provider)));
    RECKON_ASSERT_OK(h.workflows().Register("charge-child", ChargeChild));
    RECKON_ASSERT_OK(h.workflows().Register("parent", Parent));
    int calls = 0;
    provider.OnCall([&](const testkit::CallRecord&) {
      if (++calls == point) h.Crash();
    });
    h.Boot();
    RECKON_ASSERT_OK(h.Start("order-9", "parent", json::object{}));
    auto done = [&] {
      auto run = h.Describe("order-9");
      return run && run->status == RunStatus::kCompleted;
    };
    ASSERT_TRUE(h.RunUntil([&] { return h.crashed() || done(); }));
    if (h.crashed()) {
      h.Restart();
      auto recovered = h.Recover();
      ASSERT_TRUE(recovered) << recovered.error().ToString();
      ASSERT_TRUE(h.RunUntil(done));
    }
    const json::value result = json::parse(h.Describe("order-9")->result_json);
    EXPECT_EQ(result.at("a").at("charged").as_int64(), 10);
    EXPECT_EQ(result.at("b").at("charged").as_int64(), 20);
    std::set<std::string> keys;
    for (const auto& call : provider.calls_to("charge")) keys.insert(call.key);
    EXPECT_EQ(keys.size(), 4u);
    for (const std::string& key : keys) EXPECT_EQ(provider.effects(key), 1) << key;
    h.Shutdown();
    auto rows = h.journal().QueryRuns(RunQuery{});
    ASSERT_TRUE(rows);
    std::map<std::string, int> runs;
    for (const RunRow& row : rows.value()) ++runs[row.ref.workflow_id];
    EXPECT_EQ(runs.size(), 3u);
    for (const auto& [id, n] : runs) EXPECT_EQ(n, 1) << id;
  }
}

}  // namespace
}  // namespace reckon
