// Approvals: an operation whose input meets the approval rule waits, durably, for a person's
// decision bound to its approval id and intent hash; a grant serves every retry of the same
// operation until it expires; a denial fails the step.
#include <gtest/gtest.h>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

constexpr char kTool[] = "send_payout";
constexpr char kStep[] = "send_payout#1";
constexpr char kRun[] = "payout-1";
constexpr std::int64_t kLarge = 25000;  // over the approval threshold of 10000

// A payout that needs approval over 10000 cents.
ToolContract Payout() {
  ToolContract c = FastContract(kTool, SideEffect::kNonRepeatableWrite);
  c.approval = {.kind = ApprovalKind::kWhen,
                .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                .grant_ttl = 3600s};
  return c;
}

class ApprovalTest : public ::testing::Test {
 protected:
  void Boot(ToolContract contract = Payout(), std::int64_t amount = kLarge) {
    RECKON_ASSERT_OK(h_.tools().Register(testkit::ProviderTool(std::move(contract), provider_)));
    h_.Boot();
    auto input = CallOnceInput(kTool, FastInput("acct-7", amount));
    RECKON_ASSERT_OK(h_.Start(kRun, kCallOnce, std::move(input)));
  }
  // Runs until the `request`-th approval request of the payout is pending, and returns it.
  OperationRecord PendingApproval(std::uint32_t request = 1) {
    EXPECT_TRUE(h_.RunUntil([&] {
      auto op = h_.Operation(kRun, kStep);
      return op && op->state == OperationState::kAwaitingApproval &&
             op->approval_requests == request;
    }));
    return h_.Operation(kRun, kStep).value_or(OperationRecord{});
  }
  // True if the payout is still awaiting approval after `window` (nothing decided it).
  bool StillAwaitingAfter(std::chrono::milliseconds window) {
    h_.RunUntil(
        [&] { return h_.Operation(kRun, kStep)->state != OperationState::kAwaitingApproval; },
        window);
    return h_.Operation(kRun, kStep)->state == OperationState::kAwaitingApproval;
  }
  static ApprovalDecision Decision(const OperationRecord& op, bool granted) {
    return ApprovalDecision{op.approval_id, "", op.intent_hash, granted, "alice@example.com",
                            granted ? "" : "not this customer"};
  }
  std::vector<Event> Finish() {
    EXPECT_TRUE(h_.RunUntilSettled(kRun));
    status_ = h_.Describe(kRun)->status;
    h_.Shutdown();
    return h_.Events(kRun);
  }

  testkit::FakeProvider provider_{/*dedup=*/false};
  EngineHarness h_;
  RunStatus status_ = RunStatus::kRunning;
};

TEST_F(ApprovalTest, BelowTheThresholdNoApprovalIsNeeded) {
  Boot(Payout(), 500);
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_TRUE(BodiesOf<ApprovalRequested>(events).empty());
  EXPECT_EQ(BodiesOf<AttemptStarted>(events).at(0).approval_id, "");
}

TEST_F(ApprovalTest, NothingRunsUntilApprovedAndMismatchedDecisionsAreRefused) {
  Boot();
  const OperationRecord op = PendingApproval();
  EXPECT_EQ(provider_.calls().size(), 0u);
  EXPECT_EQ(h_.engine().BusyRuns(), 0);  // waiting for a person

  ApprovalDecision wrong_hash = Decision(op, true);
  wrong_hash.expected_intent_hash = std::string(64, '0');
  auto refused = h_.Decide(kRun, wrong_hash);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kPermissionDenied);

  ApprovalDecision wrong_id = Decision(op, true);
  wrong_id.approval_id = "ap_not_this_one_1";
  wrong_id.operation_id = op.operation_id;
  refused = h_.Decide(kRun, wrong_id);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kPermissionDenied);

  wrong_id.operation_id.clear();
  refused = h_.Decide(kRun, wrong_id);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kNotFound);

  EXPECT_EQ(h_.Operation(kRun, kStep)->state, OperationState::kAwaitingApproval);
  EXPECT_EQ(provider_.calls().size(), 0u);

  RECKON_ASSERT_OK(h_.Decide(kRun, Decision(op, true)));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_EQ(EventNames(events, op.operation_id),
            "OperationPrepared ApprovalRequested ApprovalGranted AttemptStarted "
            "OperationCommitted");
  EXPECT_EQ(BodiesOf<ApprovalGranted>(events).at(0).approved_by, "alice@example.com");
  EXPECT_EQ(BodiesOf<AttemptStarted>(events).at(0).approval_id, op.approval_id);
  EXPECT_EQ(provider_.calls().size(), 1u);
  EXPECT_EQ(provider_.effects(op.operation_id), 1);
}

TEST_F(ApprovalTest, ARetryOfTheSameOperationReusesTheGrant) {
  provider_.Script(kTool, {testkit::Step{testkit::Behaviour::kRefuse}});
  Boot();
  const OperationRecord op = PendingApproval();
  RECKON_ASSERT_OK(h_.Decide(kRun, Decision(op, true)));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_EQ(BodiesOf<ApprovalRequested>(events).size(), 1u);
  EXPECT_EQ(BodiesOf<ApprovalGranted>(events).size(), 1u);
  const auto attempts = BodiesOf<AttemptStarted>(events);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].approval_id, op.approval_id);
  EXPECT_EQ(attempts[1].approval_id, op.approval_id);
  EXPECT_EQ(provider_.effects(op.operation_id), 1);
}

// A grant of 1 s, and a retry due 1 s after the first attempt: the retry finds it expired.
// The first attempt's hard deadline (1.2 s) passes while the new request waits.
ToolContract ShortGrantPayout() {
  ToolContract c = Payout();
  c.approval.grant_ttl = 1s;
  c.attempt_timeout = 1200ms;
  c.retry.backoff = {1000ms, 1.0, 1000ms};
  return c;
}

TEST_F(ApprovalTest, AnExpiredGrantLeadsToANewApprovalRequest) {
  provider_.Script(kTool, {testkit::Step{testkit::Behaviour::kRefuse}});
  Boot(ShortGrantPayout());
  const OperationRecord first = PendingApproval(1);
  RECKON_ASSERT_OK(h_.Decide(kRun, Decision(first, true)));
  const OperationRecord second = PendingApproval(2);
  EXPECT_NE(second.approval_id, first.approval_id);
  EXPECT_EQ(provider_.calls().size(), 1u);
  // The first attempt's stale deadline is no approval deadline: the request keeps waiting.
  EXPECT_TRUE(StillAwaitingAfter(400ms));

  auto stale = h_.Decide(kRun, Decision(first, true));
  EXPECT_FALSE(stale);  // the old grant's id no longer names the pending request
  RECKON_ASSERT_OK(h_.Decide(kRun, Decision(second, true)));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kCompleted);
  const auto attempts = BodiesOf<AttemptStarted>(events);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].approval_id, first.approval_id);
  EXPECT_EQ(attempts[1].approval_id, second.approval_id);
  EXPECT_EQ(provider_.effects(second.operation_id), 1);
}

TEST_F(ApprovalTest, ADenialFailsTheStepWithoutAnAttempt) {
  Boot();
  const OperationRecord op = PendingApproval();
  RECKON_ASSERT_OK(h_.Decide(kRun, Decision(op, false)));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kFailed);
  EXPECT_EQ(EventNames(events, op.operation_id),
            "OperationPrepared ApprovalRequested ApprovalDenied");
  EXPECT_EQ(BodiesOf<WorkflowFailed>(events).at(0).code, "approval_denied");
  EXPECT_EQ(provider_.calls().size(), 0u);
}

TEST_F(ApprovalTest, WaitingForApprovalSurvivesARestart) {
  Boot();
  const OperationRecord before = PendingApproval();
  h_.Restart();
  RECKON_ASSERT_OK(h_.Recover());
  const OperationRecord after = PendingApproval();
  EXPECT_EQ(after.approval_id, before.approval_id);
  EXPECT_EQ(after.intent_hash, before.intent_hash);
  EXPECT_TRUE(StillAwaitingAfter(100ms));
  EXPECT_EQ(provider_.calls().size(), 0u);

  RECKON_ASSERT_OK(h_.Decide(kRun, Decision(after, true)));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_EQ(BodiesOf<AttemptStarted>(events).at(0).approval_id, before.approval_id);
  EXPECT_EQ(provider_.calls().size(), 1u);
}

TEST_F(ApprovalTest, ARenewedApprovalRequestSurvivesARestart) {
  provider_.Script(kTool, {testkit::Step{testkit::Behaviour::kRefuse}});
  Boot(ShortGrantPayout());
  RECKON_ASSERT_OK(h_.Decide(kRun, Decision(PendingApproval(1), true)));
  const OperationRecord second = PendingApproval(2);
  h_.Restart();
  RECKON_ASSERT_OK(h_.Recover());
  EXPECT_TRUE(StillAwaitingAfter(200ms));
  RECKON_ASSERT_OK(h_.Decide(kRun, Decision(second, true)));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_EQ(BodiesOf<AttemptStarted>(events).back().approval_id, second.approval_id);
}

TEST_F(ApprovalTest, TheApprovalDeadlineSurvivesARestart) {
  ToolContract contract = Payout();
  contract.approval.wait_deadline = 1s;
  Boot(contract);
  PendingApproval();
  h_.Restart();
  RECKON_ASSERT_OK(h_.Recover());
  EXPECT_TRUE(h_.RunUntilState(kRun, kStep, OperationState::kRejected, 3s));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kFailed);
  const auto denied = BodiesOf<ApprovalDenied>(events);
  ASSERT_EQ(denied.size(), 1u);
  EXPECT_EQ(denied[0].denied_by, "reckon");
  EXPECT_GE(FirstOf<ApprovalDenied>(events)->recorded_at_us,
            BodiesOf<ApprovalRequested>(events).at(0).deadline_us);
  EXPECT_EQ(provider_.calls().size(), 0u);
}

}  // namespace
}  // namespace reckon
