// A user's test of their workflow with Reckon's test library (reckon::testkit), written against
// an installed Reckon as any project would (tests/out_of_tree/CMakeLists.txt). The workflow
// charges a card, gives the approver three days, then ships or refunds; cancelled meanwhile, it
// refunds before it ends. The tests run it on a temporary journal with a clock that skips
// ahead, a payments provider that loses a reply, a crash in the middle of the charge, and a
// cancel during the wait; two of them replay the saved history.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <string>

#include "reckon/testkit/fake_provider.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/test_env.h"

namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using reckon::CallResult;
using reckon::SideEffect;
using reckon::Task;
using reckon::ToolContract;
using reckon::WorkflowContext;
using reckon::WorkflowOutcome;
using reckon::storage::RunStatus;
using reckon::testkit::Behaviour;
using reckon::testkit::FakeProvider;
using reckon::testkit::ProviderTool;
using reckon::testkit::TestEnv;

// --- the code under test: what a user's project holds ------------------------------------------

// Contracts with production timings: a 30 s attempt deadline, minutes of backoff. The test clock
// skips them, so the tests still take milliseconds.
ToolContract Contract(std::string name, SideEffect side_effect) {
  ToolContract c;
  c.name = std::move(name);
  c.description = "The order step " + c.name + ".";
  c.side_effect = side_effect;
  c.attempt_timeout = 30s;
  c.retry.max_attempts = 3;
  c.retry.backoff = {1min, 2.0, 10min};
  c.retry.retryable_codes = {"rate_limited"};
  c.retry.reconcile_on_unknown = side_effect == SideEffect::kNonRepeatableWrite;
  if (side_effect == SideEffect::kNonRepeatableWrite || side_effect == SideEffect::kDeduplicatedWrite) {
    // The provider can say whether it holds the idempotency key: an unknown outcome is looked
    // up there, never retried blind.
    c.reconcile.mode = reckon::ReconcileMode::kLookup;
    c.reconcile.max_attempts = 3;
    c.reconcile.backoff = {1min, 2.0, 10min};
    c.reconcile.grace = 1min;
  }
  if (side_effect == SideEffect::kDeduplicatedWrite) c.dedup_window = 24h;
  c.input_schema = json::parse(R"({"type": "object"})");
  if (side_effect != SideEffect::kReadOnly) c.evidence = "The provider's reference.";
  return c;
}

// Charge, wait three days for the approver, then ship if approved or refund if not. An order
// cancelled during the wait is refunded before the run ends.
Task<WorkflowOutcome> PlaceOrder(WorkflowContext& ctx, json::value input) {
  json::object order = input.as_object();
  json::object charge{{"order", order["order"]}, {"amount_cents", order["amount_cents"]}};
  CallResult charged = co_await ctx.Call("charge_card", std::move(charge));
  if (!charged) co_return charged.error();
  // The approver has three days.
  bool cancelled = false;
  try {
    co_await ctx.Sleep(72h);
  } catch (const reckon::WorkflowCancelledError&) {
    cancelled = true;  // C++ allows no co_await in a handler: refund below
  }
  if (cancelled) {
    json::object refund{{"order", order["order"]}};
    CallResult refunded = co_await ctx.Call("refund_card", std::move(refund));
    if (!refunded) co_return refunded.error();
    co_return ctx.Cancelled();
  }
  json::object ask{{"order", order["order"]}};
  CallResult approval = co_await ctx.Call("approval_status", std::move(ask));
  if (!approval) co_return approval.error();
  const bool approved = approval.value().output.as_object().contains("approved");
  json::object next{{"order", order["order"]}};
  CallResult done = co_await ctx.Call(approved ? "ship" : "refund_card", std::move(next));
  if (!done) co_return done.error();
  co_return json::object{{"outcome", approved ? "shipped" : "refunded"},
                         {"charge", charged.value().provider_ref}};
}

// --- the tests ---------------------------------------------------------------------------------

class OrderWorkflowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto [name, side_effect] : {std::pair{"charge_card", SideEffect::kNonRepeatableWrite},
                                     std::pair{"approval_status", SideEffect::kReadOnly},
                                     std::pair{"ship", SideEffect::kIdempotentWrite},
                                     std::pair{"refund_card", SideEffect::kDeduplicatedWrite}}) {
      RECKON_ASSERT_OK(env_.tools().Register(ProviderTool(Contract(name, side_effect), payments_)));
    }
    RECKON_ASSERT_OK(env_.workflows().Register("place_order", PlaceOrder));
  }

  void Start() {
    json::object input{{"order", "o-1001"}, {"amount_cents", 4200}};
    RECKON_ASSERT_OK(env_.Start("order-1001", "place_order", input));
  }

  // The operation id (the idempotency key the provider saw) of the run's call to `tool`.
  std::string OperationOf(const reckon::RunSummary& run, const std::string& tool) {
    for (const reckon::OperationRecord& op : run.operations) {
      if (op.tool == tool) return op.operation_id;
    }
    return "";
  }

  FakeProvider payments_;  // outlives the environment
  TestEnv env_;
};

TEST_F(OrderWorkflowTest, ThreeDayApprovalWindowIsSkipped) {
  const auto started_at = env_.clock().Now();
  Start();
  RECKON_ASSERT_OK_AND_ASSIGN(reckon::RunSummary run, env_.RunUntilSettled("order-1001"));
  ASSERT_EQ(run.status, RunStatus::kCompleted) << run.result_json << run.stuck_reason;
  EXPECT_NE(run.result_json.find("\"refunded\""), std::string::npos) << run.result_json;
  // Three days passed on the workflow's clock; none of them in the test's.
  EXPECT_GE(env_.clock().Now() - started_at, 72h);
  EXPECT_EQ(payments_.effects(OperationOf(run, "charge_card")), 1);
  EXPECT_EQ(payments_.effects(OperationOf(run, "refund_card")), 1);
}

TEST_F(OrderWorkflowTest, LostReplyIsReconciledIntoOneCharge) {
  // The provider charges, then the connection drops before its reply: the outcome is unknown.
  payments_.Script("charge_card", {{Behaviour::kCommitLoseReply}});
  Start();
  RECKON_ASSERT_OK_AND_ASSIGN(reckon::RunSummary run, env_.RunUntilSettled("order-1001"));
  ASSERT_EQ(run.status, RunStatus::kCompleted) << run.result_json << run.stuck_reason;
  // The engine looked the key up instead of charging again: exactly one effect.
  EXPECT_EQ(payments_.calls_to("charge_card").size(), 1u);
  EXPECT_GE(payments_.lookups("charge_card"), 1);
  EXPECT_EQ(payments_.effects(OperationOf(run, "charge_card")), 1);
  EXPECT_NE(run.result_json.find(payments_.ref_of(OperationOf(run, "charge_card"))),
            std::string::npos) << run.result_json;
}

TEST_F(OrderWorkflowTest, CrashWhileChargingThenRestart) {
  // The provider charges and never answers; the process dies with the call in flight.
  payments_.Script("charge_card", {{Behaviour::kCommitThenHang}});
  Start();
  RECKON_ASSERT_OK(env_.RunUntil([&] { return payments_.total_effects() == 1; }));
  RECKON_ASSERT_OK_AND_ASSIGN(int resumed, env_.CrashAndRestart());
  EXPECT_EQ(resumed, 1);
  // The new life finds an attempt in flight: unknown outcome, looked up, found committed.
  RECKON_ASSERT_OK_AND_ASSIGN(reckon::RunSummary run, env_.RunUntilSettled("order-1001"));
  ASSERT_EQ(run.status, RunStatus::kCompleted) << run.result_json << run.stuck_reason;
  EXPECT_EQ(payments_.calls_to("charge_card").size(), 1u);
  EXPECT_EQ(payments_.effects(OperationOf(run, "charge_card")), 1);

  // The history replays against today's code: a deploy would not break this run.
  RECKON_ASSERT_OK_AND_ASSIGN(reckon::testkit::RunHistory history, env_.History("order-1001"));
  RECKON_EXPECT_OK(env_.Replay(history));
}

TEST_F(OrderWorkflowTest, ACancelDuringTheApprovalWindowRefundsTheCharge) {
  env_.set_auto_skip(false);  // the three days must not pass before the cancel
  Start();
  RECKON_ASSERT_OK(env_.RunUntil([&] { return payments_.total_effects() == 1; }));
  RECKON_ASSERT_OK(env_.Cancel("order-1001", "the customer changed their mind"));
  RECKON_ASSERT_OK_AND_ASSIGN(reckon::RunSummary run, env_.RunUntilSettled("order-1001"));
  ASSERT_EQ(run.status, RunStatus::kCancelled) << run.stuck_reason;
  EXPECT_EQ(payments_.effects(OperationOf(run, "charge_card")), 1);
  EXPECT_EQ(payments_.effects(OperationOf(run, "refund_card")), 1);
  EXPECT_TRUE(payments_.calls_to("ship").empty());
  EXPECT_TRUE(payments_.calls_to("approval_status").empty());
  RECKON_ASSERT_OK_AND_ASSIGN(reckon::testkit::RunHistory history, env_.History("order-1001"));
  RECKON_EXPECT_OK(env_.Replay(history));
}

TEST_F(OrderWorkflowTest, ReplayCatchesAnIncompatibleChange) {
  Start();
  RECKON_ASSERT_OK(env_.RunUntilSettled("order-1001"));
  RECKON_ASSERT_OK_AND_ASSIGN(reckon::testkit::RunHistory history, env_.History("order-1001"));
  // Version 2 asks for approval before charging: runs in flight took the other path.
  reckon::WorkflowRegistry v2;
  auto changed = [](WorkflowContext& ctx, json::value input) -> Task<WorkflowOutcome> {
    json::object ask{{"order", input.as_object()["order"]}};
    CallResult approval = co_await ctx.Call("approval_status", std::move(ask));
    if (!approval) co_return approval.error();
    co_return json::object{};
  };
  RECKON_ASSERT_OK(v2.Register("place_order", changed));
  auto replayed = reckon::testkit::ReplayHistory(v2, history);
  ASSERT_FALSE(replayed);
  EXPECT_EQ(replayed.error().code(), reckon::Errc::kNondeterminism) << replayed.error().ToString();
}

}  // namespace
