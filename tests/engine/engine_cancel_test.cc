// Engine::Cancel (docs/ARCHITECTURE.md, decision 15) on a real journal: a run waiting for a
// timer, a signal, an approval or a retry ends cancelled, durably (a reopened journal says so
// and a restart does not resume it), and nothing it had scheduled runs afterwards. While an
// operation may have acted and its outcome is unknown, cancel is refused with a message that
// names the operation, and nothing is journaled.
#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

constexpr char kRun[] = "order-1";
constexpr char kReason[] = "customer changed their mind";

// charge: an idempotent write whose refused attempts are retried after 300 ms.
ToolContract Charge() {
  ToolContract c = FastContract("charge", SideEffect::kIdempotentWrite);
  c.retry.backoff = {300ms, 1.0, 300ms};
  return c;
}

// payout: always needs approval.
ToolContract Payout() {
  ToolContract c = FastContract("payout", SideEffect::kNonRepeatableWrite);
  c.approval = {.kind = ApprovalKind::kAlways, .when = {}, .grant_ttl = 3600s};
  return c;
}

// send: a non-repeatable write with a long deadline, so that an attempt stays in flight.
ToolContract Send() {
  ToolContract c = FastContract("send", SideEffect::kNonRepeatableWrite);
  c.attempt_timeout = 60s;
  return c;
}

// unsure: a non-repeatable write that reconciles by lookup (its tests make every lookup fail to
// tell).
ToolContract Unsure() { return FastContract("unsure", SideEffect::kNonRepeatableWrite); }

class CancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (ToolContract contract : {Charge(), Payout(), Send(), Unsure()}) {
      RECKON_ASSERT_OK(h_.tools().Register(testkit::ProviderTool(std::move(contract), provider_)));
    }
    h_.Boot();
  }

  Result<void> Cancel() {
    auto cancelled = h_.Await(h_.engine().Cancel(kRun, kReason));
    if (!cancelled) return Err(Errc::kDeadlineExceeded, "Cancel() did not complete");
    return std::move(*cancelled);
  }

  void RunFor(std::chrono::milliseconds duration) { ASSERT_TRUE(h_.RunFor(duration)); }

  // The run is cancelled in memory and in a reopened journal, whose events end with the
  // request (carrying the reason) and the end; a new process life does not resume it, and
  // nothing it scheduled runs there either. Returns the journaled events.
  std::vector<Event> ExpectCancelledForGood(std::chrono::milliseconds wait_past_schedule) {
    EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kCancelled);
    RunFor(wait_past_schedule);
    h_.Shutdown();
    auto row = h_.journal().FindLatestRun(kRun);
    EXPECT_TRUE(row && row.value());
    if (row && row.value()) {
      EXPECT_EQ(row.value()->status, RunStatus::kCancelled);
    }
    std::vector<Event> events = h_.Events(kRun);
    const auto requested = BodiesOf<WorkflowCancelRequested>(events);
    EXPECT_EQ(requested.size(), 1u);
    if (!requested.empty()) {
      EXPECT_EQ(requested[0].reason, kReason);
    }
    EXPECT_TRUE(!events.empty() && std::holds_alternative<WorkflowCancelled>(events.back().body))
        << EventNames(events);

    h_.Boot();
    auto recovered = h_.Recover();
    EXPECT_TRUE(recovered && recovered.value() == 0) << "a cancelled run is not resumed";
    RunFor(wait_past_schedule);
    h_.Shutdown();
    EXPECT_EQ(h_.Events(kRun).size(), events.size()) << "nothing was journaled after the end";
    return events;
  }

  testkit::FakeProvider provider_{/*dedup=*/false};
  EngineHarness h_;
};

TEST_F(CancelTest, ARunWaitingForATimerEndsAndTheTimerNeverActs) {
  RECKON_ASSERT_OK(h_.Start(kRun, kSleepThenCall,
                            SleepThenCallInput(200ms, "charge", FastInput("acct-1", 100))));
  RECKON_ASSERT_OK(Cancel());
  const auto events = ExpectCancelledForGood(400ms);
  EXPECT_EQ(BodiesOf<TimerStarted>(events).size(), 1u);
  EXPECT_TRUE(BodiesOf<TimerFired>(events).empty()) << EventNames(events);
  EXPECT_TRUE(BodiesOf<OperationPrepared>(events).empty()) << EventNames(events);
  EXPECT_TRUE(provider_.calls().empty());
}

TEST_F(CancelTest, ARunWaitingForASignalEndsAndTakesNoMoreSignals) {
  RECKON_ASSERT_OK(h_.Start(kRun, kSignalThenCall,
                            SignalThenCallInput("go", "charge", FastInput("acct-1", 100))));
  RECKON_ASSERT_OK(Cancel());
  auto signalled = h_.Await(h_.engine().Signal(kRun, "go", "\"now\""));
  ASSERT_TRUE(signalled);
  ASSERT_FALSE(*signalled) << "a cancelled run takes no signal";
  EXPECT_EQ(signalled->error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(signalled->error().message().find("cancelled"), std::string::npos)
      << signalled->error().message();
  const auto events = ExpectCancelledForGood(50ms);
  EXPECT_TRUE(BodiesOf<SignalReceived>(events).empty()) << EventNames(events);
  EXPECT_TRUE(provider_.calls().empty());
}

TEST_F(CancelTest, AnOperationAwaitingApprovalIsDeniedAndNeverRuns) {
  RECKON_ASSERT_OK(h_.Start(kRun, kCallOnce, CallOnceInput("payout", FastInput("acct-1", 500))));
  ASSERT_TRUE(h_.RunUntilState(kRun, "payout#1", OperationState::kAwaitingApproval));
  const OperationRecord waiting = *h_.Operation(kRun, "payout#1");
  RECKON_ASSERT_OK(Cancel());
  EXPECT_EQ(h_.Operation(kRun, "payout#1")->state, OperationState::kRejected);
  // A grant that arrives after the cancel is refused: the run is over.
  auto granted = h_.Decide(kRun, ApprovalDecision{waiting.approval_id, "", waiting.intent_hash,
                                                  true, "alice", ""});
  EXPECT_FALSE(granted);
  const auto events = ExpectCancelledForGood(50ms);
  const auto denied = BodiesOf<ApprovalDenied>(events, waiting.operation_id);
  ASSERT_EQ(denied.size(), 1u) << EventNames(events);
  EXPECT_EQ(denied[0].denied_by, "reckon");
  EXPECT_EQ(denied[0].reason, std::string("workflow cancelled: ") + kReason);
  EXPECT_TRUE(BodiesOf<ApprovalGranted>(events).empty());
  EXPECT_TRUE(BodiesOf<AttemptStarted>(events).empty());
  EXPECT_TRUE(provider_.calls().empty());
}

TEST_F(CancelTest, AScheduledRetryIsRejectedAndNeverAttempted) {
  provider_.Script("charge", {testkit::Step{testkit::Behaviour::kRefuse}});
  RECKON_ASSERT_OK(h_.Start(kRun, kCallOnce, CallOnceInput("charge", FastInput("acct-1", 100))));
  ASSERT_TRUE(h_.RunUntilState(kRun, "charge#1", OperationState::kRetryScheduled));
  RECKON_ASSERT_OK(Cancel());
  const auto events = ExpectCancelledForGood(500ms);
  const std::string op = OperationIdOfStep(events, "charge#1");
  const auto rejected = BodiesOf<OperationRejected>(events, op);
  ASSERT_EQ(rejected.size(), 1u) << EventNames(events, op);
  EXPECT_EQ(rejected[0].code, "workflow_cancelled");
  EXPECT_EQ(rejected[0].message, kReason);
  EXPECT_EQ(BodiesOf<AttemptStarted>(events, op).size(), 1u) << "the retry never started";
  EXPECT_EQ(provider_.calls().size(), 1u);
}

// Cancel is refused, naming the operation and why, and nothing is journaled; the run goes on.
void ExpectRefusedNaming(const Result<void>& refused, const OperationRecord& op,
                         std::string_view state) {
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
  const std::string& message = refused.error().message();
  EXPECT_NE(message.find("operation " + op.operation_id), std::string::npos) << message;
  EXPECT_NE(message.find("step '" + op.step_id + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("tool '" + op.tool + "'"), std::string::npos) << message;
  EXPECT_NE(message.find(std::string(state) + " and may have acted"), std::string::npos)
      << message;
}

TEST_F(CancelTest, RefusedWhileAnAttemptIsInFlight) {
  provider_.Script("send", {testkit::Step{testkit::Behaviour::kHang}});
  RECKON_ASSERT_OK(h_.Start(kRun, kCallOnce, CallOnceInput("send", FastInput("acct-1", 100))));
  ASSERT_TRUE(h_.RunUntil([&] { return provider_.in_flight() == 1; }));
  ASSERT_EQ(h_.Operation(kRun, "send#1")->state, OperationState::kInFlight);
  ExpectRefusedNaming(Cancel(), *h_.Operation(kRun, "send#1"), "in_flight");
  EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kRunning);
  h_.Shutdown();
  const auto events = h_.Events(kRun);
  EXPECT_TRUE(BodiesOf<WorkflowCancelRequested>(events).empty()) << EventNames(events);
  EXPECT_TRUE(BodiesOf<WorkflowCancelled>(events).empty()) << EventNames(events);
}

TEST_F(CancelTest, RefusedWhileAnOperationNeedsAPerson) {
  // The request is lost and no lookup can tell: only a person can say what happened.
  provider_.Script("unsure", {testkit::Step{testkit::Behaviour::kLoseRequest}});
  provider_.ScriptLookups("unsure", {testkit::LookupAnswer::kStillUnknown, testkit::LookupAnswer::kStillUnknown,
                                   testkit::LookupAnswer::kStillUnknown});
  RECKON_ASSERT_OK(h_.Start(kRun, kCallOnce, CallOnceInput("unsure", FastInput("acct-1", 100))));
  ASSERT_TRUE(h_.RunUntilState(kRun, "unsure#1", OperationState::kNeedsHuman));
  h_.Shutdown();
  const std::size_t journaled = h_.Events(kRun).size();
  h_.Boot();
  RECKON_ASSERT_OK(h_.Recover());
  ASSERT_TRUE(h_.RunUntilSettled(kRun));
  ExpectRefusedNaming(Cancel(), *h_.Operation(kRun, "unsure#1"), "needs_human");
  EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kRunning);
  h_.Shutdown();
  EXPECT_EQ(h_.Events(kRun).size(), journaled) << EventNames(h_.Events(kRun));
}

}  // namespace
}  // namespace reckon
