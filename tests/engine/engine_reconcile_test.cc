// Reconciliation of a non_repeatable_write whose outcome is unknown: the lookup waits for the
// attempt's hard deadline plus the grace; committed settles it with exactly one effect;
// not_found authorizes exactly one new attempt with the same operation id; still_unknown past
// the limit parks it for a person, who resolves it as committed or not.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

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

// A non-repeatable payout on a provider without dedup: a second attempt after a committed
// first one would be a second payout.
class ReconcileTest : public ::testing::Test {
 protected:
  void Boot(ToolContract contract) {
    RECKON_ASSERT_OK(h_.tools().Register(testkit::ProviderTool(std::move(contract), provider_)));
    h_.Boot();
    RECKON_ASSERT_OK(h_.Start(kRun, kCallOnce, CallOnceInput(kTool, FastInput("acct-9", 700))));
  }
  void Boot() { Boot(FastContract(kTool, SideEffect::kNonRepeatableWrite)); }
  // Settles the run, stops the engine and reads the journal.
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

TEST_F(ReconcileTest, CommittedLookupRunsOnlyAfterDeadlinePlusGraceAndSettlesWithOneEffect) {
  provider_.Script(kTool, {testkit::Step{testkit::Behaviour::kCommitLoseReply}});
  ToolContract contract = FastContract(kTool, SideEffect::kNonRepeatableWrite);
  contract.attempt_timeout = 250ms;  // the lost reply is reported long before the deadline
  Boot(contract);
  const auto events = Finish();
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_EQ(EventNames(events, op),
            "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted "
            "ReconciliationResult OperationCommitted");

  // The lookup race: the lookup is scheduled for, and runs no earlier than, the attempt's
  // hard deadline plus the grace, although the tool reported the lost reply at once.
  const Event started = *FirstOf<AttemptStarted>(events, op);
  const Event unknown = *FirstOf<OutcomeUnknown>(events, op);
  const Event lookup = *FirstOf<ReconciliationStarted>(events, op);
  const std::int64_t deadline = std::get<AttemptStarted>(started.body).deadline_us;
  const std::int64_t grace_us = std::chrono::microseconds(kGrace).count();
  EXPECT_LT(unknown.recorded_at_us, deadline);
  EXPECT_EQ(std::get<OutcomeUnknown>(unknown.body).reconcile_at_us, deadline + grace_us);
  EXPECT_GE(lookup.recorded_at_us, deadline + grace_us);

  auto result = BodiesOf<ReconciliationResult>(events, op);
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].result, ReconcileVerdict::kCommitted);
  auto committed = BodiesOf<OperationCommitted>(events, op);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].source, CommitSource::kReconciliation);
  EXPECT_EQ(committed[0].provider_ref, provider_.ref_of(op));
  EXPECT_EQ(provider_.calls_to(kTool).size(), 1u);  // no second attempt
  EXPECT_EQ(provider_.effects(op), 1);
  EXPECT_EQ(provider_.lookups(kTool), 1);
}

TEST_F(ReconcileTest, NotFoundAuthorizesExactlyOneNewAttemptWithTheSameOperationId) {
  provider_.Script(kTool, {testkit::Step{testkit::Behaviour::kLoseRequest}});
  Boot();
  const auto events = Finish();
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_EQ(EventNames(events, op),
            "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted "
            "ReconciliationResult RetryScheduled AttemptStarted OperationCommitted");
  EXPECT_EQ(BodiesOf<ReconciliationResult>(events, op).at(0).result, ReconcileVerdict::kNotFound);
  EXPECT_EQ(BodiesOf<RetryScheduled>(events, op).at(0).reason, RetryReason::kReconciledNotFound);
  const auto calls = provider_.calls_to(kTool);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].key, op);
  EXPECT_EQ(calls[1].key, op);
  EXPECT_EQ(calls[1].attempt, 2u);
  EXPECT_EQ(provider_.effects(op), 1);
}

TEST_F(ReconcileTest, NotFoundWithNoAttemptsLeftRejects) {
  provider_.Script(kTool, {testkit::Step{testkit::Behaviour::kLoseRequest}});
  ToolContract contract = FastContract(kTool, SideEffect::kNonRepeatableWrite);
  contract.retry.max_attempts = 1;
  Boot(contract);
  const auto events = Finish();
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(status_, RunStatus::kFailed);
  EXPECT_EQ(BodiesOf<OperationRejected>(events, op).at(0).code, "attempts_exhausted");
  EXPECT_EQ(provider_.calls_to(kTool).size(), 1u);
  EXPECT_EQ(provider_.effects(op), 0);
}

TEST_F(ReconcileTest, RetryableReportWithAnUnlistedCodeIsTreatedAsUnknown) {
  // "service_busy" is not in retry.retryable_codes: the request may have been processed.
  provider_.Script(kTool, {testkit::Step{testkit::Behaviour::kRefuse, "service_busy"}});
  Boot();
  const auto events = Finish();
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_TRUE(BodiesOf<AttemptFailedRetryable>(events, op).empty());
  auto unknown = BodiesOf<OutcomeUnknown>(events, op);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].reason, "service_busy");
  EXPECT_GT(unknown[0].reconcile_at_us, 0);
  EXPECT_EQ(provider_.lookups(kTool), 1);  // looked up (not_found) before the second attempt
  EXPECT_EQ(provider_.calls_to(kTool).size(), 2u);
  EXPECT_EQ(provider_.effects(op), 1);
}

TEST_F(ReconcileTest, NeedsHumanModeParksAnUnknownOutcomeWithoutALookup) {
  provider_.Script(kTool, {testkit::Step{testkit::Behaviour::kCommitLoseReply}});
  ToolContract contract = FastContract(kTool, SideEffect::kNonRepeatableWrite);
  contract.reconcile = {.mode = ReconcileMode::kNeedsHuman};
  Boot(contract);
  ASSERT_TRUE(h_.RunUntilState(kRun, kStep, OperationState::kNeedsHuman));
  EXPECT_EQ(h_.engine().BusyRuns(), 0);  // it waits for a person
  h_.Shutdown();
  const auto events = h_.Events(kRun);
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(EventNames(events, op),
            "OperationPrepared AttemptStarted OutcomeUnknown NeedsHuman");
  EXPECT_EQ(provider_.lookups(kTool), 0);
  EXPECT_EQ(provider_.calls_to(kTool).size(), 1u);
}

// still_unknown on every lookup: after reconcile.max_attempts lookups, a person decides.
class StillUnknownTest : public ReconcileTest {
 protected:
  void ParkForAPerson(testkit::Behaviour first_attempt, int max_attempts = 3) {
    provider_.Script(kTool, {testkit::Step{first_attempt}});
    provider_.ScriptLookups(kTool, {testkit::LookupAnswer::kStillUnknown, testkit::LookupAnswer::kStillUnknown});
    ToolContract contract = FastContract(kTool, SideEffect::kNonRepeatableWrite);
    contract.reconcile.max_attempts = 2;
    contract.retry.max_attempts = max_attempts;
    Boot(contract);
    ASSERT_TRUE(h_.RunUntilState(kRun, kStep, OperationState::kNeedsHuman));
    op_ = h_.Operation(kRun, kStep)->operation_id;
    EXPECT_EQ(h_.engine().BusyRuns(), 0);
    EXPECT_EQ(provider_.lookups(kTool), 2);
    EXPECT_EQ(provider_.calls_to(kTool).size(), 1u);
  }
  HumanResolution Resolution(bool committed, std::string ref = "") const {
    return HumanResolution{op_, committed, std::move(ref), "ops@example.com", "checked"};
  }
  std::string op_;
};

TEST_F(StillUnknownTest, PastTheLookupLimitTheOperationNeedsAHuman) {
  ParkForAPerson(testkit::Behaviour::kCommitLoseReply);
  h_.Shutdown();
  const auto events = h_.Events(kRun);
  EXPECT_EQ(EventNames(events, op_),
            "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted "
            "ReconciliationResult ReconciliationStarted ReconciliationResult NeedsHuman");
  for (const auto& result : BodiesOf<ReconciliationResult>(events, op_)) {
    EXPECT_EQ(result.result, ReconcileVerdict::kStillUnknown);
  }
}

TEST_F(StillUnknownTest, ResolvedAsCommittedNeedsTheProviderReference) {
  ParkForAPerson(testkit::Behaviour::kCommitLoseReply);
  auto without_ref = h_.Resolve(kRun, Resolution(true));
  ASSERT_FALSE(without_ref);
  EXPECT_EQ(without_ref.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(h_.Operation(kRun, kStep)->state, OperationState::kNeedsHuman);

  const std::string ref = provider_.ref_of(op_);  // what the person found at the provider
  RECKON_ASSERT_OK(h_.Resolve(kRun, Resolution(true, ref)));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kCompleted);
  auto resolved = BodiesOf<HumanResolved>(events, op_);
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_TRUE(resolved[0].committed);
  auto committed = BodiesOf<OperationCommitted>(events, op_);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].source, CommitSource::kHuman);
  EXPECT_EQ(committed[0].provider_ref, ref);
  EXPECT_EQ(provider_.calls_to(kTool).size(), 1u);
  EXPECT_EQ(provider_.effects(op_), 1);
}

TEST_F(StillUnknownTest, ResolvedAsNotCommittedStartsOneNewAttemptWithTheSameId) {
  ParkForAPerson(testkit::Behaviour::kLoseRequest);
  RECKON_ASSERT_OK(h_.Resolve(kRun, Resolution(false)));
  // A second resolution finds nothing to resolve.
  auto again = h_.Resolve(kRun, Resolution(false));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::kFailedPrecondition);
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kCompleted);
  EXPECT_EQ(BodiesOf<RetryScheduled>(events, op_).at(0).reason, RetryReason::kHumanNotCommitted);
  const auto calls = provider_.calls_to(kTool);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].key, op_);
  EXPECT_EQ(calls[1].attempt, 2u);
  EXPECT_EQ(provider_.effects(op_), 1);
}

TEST_F(StillUnknownTest, ResolvedAsNotCommittedWithNoAttemptsLeftRejects) {
  ParkForAPerson(testkit::Behaviour::kLoseRequest, /*max_attempts=*/1);
  RECKON_ASSERT_OK(h_.Resolve(kRun, Resolution(false)));
  const auto events = Finish();
  EXPECT_EQ(status_, RunStatus::kFailed);
  EXPECT_EQ(BodiesOf<OperationRejected>(events, op_).at(0).code, "not_committed");
  EXPECT_EQ(BodiesOf<WorkflowFailed>(events).at(0).code, "not_committed");
  EXPECT_EQ(provider_.calls_to(kTool).size(), 1u);
  EXPECT_EQ(provider_.effects(op_), 0);
}

}  // namespace
}  // namespace reckon
