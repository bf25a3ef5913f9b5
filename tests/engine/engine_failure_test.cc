// The class-by-failure table of the design brief, end to end: each side-effect class against
// each kind of failure, through a real engine, a real journal and a provider that behaves.
// Also: a deduplicated write past its window, and late evidence (an attempt that completes
// after its deadline proves the commit).
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

constexpr char kTool[] = "tool";
constexpr char kStep[] = "tool#1";
constexpr char kRun[] = "wf-1";

struct Case {
  const char* name;
  SideEffect side_effect;
  testkit::Behaviour first_attempt;  // later attempts commit
  bool completes;
  int attempts;
  int effects;
  const char* events;  // of the operation, in journal order
  const char* unknown_reason = "";
};

constexpr auto kRO = SideEffect::kReadOnly;
constexpr auto kIW = SideEffect::kIdempotentWrite;
constexpr auto kDW = SideEffect::kDeduplicatedWrite;
constexpr auto kNR = SideEffect::kNonRepeatableWrite;

constexpr char kRejected[] = "OperationPrepared AttemptStarted OperationRejected";
constexpr char kRetried[] =
    "OperationPrepared AttemptStarted AttemptFailedRetryable AttemptStarted OperationCommitted";
constexpr char kRepeated[] =
    "OperationPrepared AttemptStarted OutcomeUnknown RetryScheduled AttemptStarted "
    "OperationCommitted";
constexpr char kReconciledCommitted[] =
    "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted ReconciliationResult "
    "OperationCommitted";
constexpr char kReconciledAbsentThenRetried[] =
    "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted ReconciliationResult "
    "RetryScheduled AttemptStarted OperationCommitted";

// definitive = kReject; retryable = kRefuse (a listed code); unknown = kCommitLoseReply (the
// provider committed, the reply was lost); deadline = kHang (nothing committed; the attempt
// is cancelled at its hard deadline).
const Case kCases[] = {
    {"read_only_definitive", kRO, testkit::Behaviour::kReject, false, 1, 0, kRejected},
    {"read_only_retryable", kRO, testkit::Behaviour::kRefuse, true, 2, 0, kRetried},
    {"read_only_unknown", kRO, testkit::Behaviour::kCommitLoseReply, true, 2, 0, kRepeated, "reply_lost"},
    {"read_only_deadline", kRO, testkit::Behaviour::kHang, true, 2, 0, kRepeated, "deadline_exceeded"},
    {"idempotent_definitive", kIW, testkit::Behaviour::kReject, false, 1, 0, kRejected},
    {"idempotent_retryable", kIW, testkit::Behaviour::kRefuse, true, 2, 1, kRetried},
    {"idempotent_unknown", kIW, testkit::Behaviour::kCommitLoseReply, true, 2, 1, kRepeated, "reply_lost"},
    {"idempotent_deadline", kIW, testkit::Behaviour::kHang, true, 2, 1, kRepeated, "deadline_exceeded"},
    {"deduplicated_definitive", kDW, testkit::Behaviour::kReject, false, 1, 0, kRejected},
    {"deduplicated_retryable", kDW, testkit::Behaviour::kRefuse, true, 2, 1, kRetried},
    {"deduplicated_unknown", kDW, testkit::Behaviour::kCommitLoseReply, true, 2, 1, kRepeated,
     "reply_lost"},
    {"deduplicated_deadline", kDW, testkit::Behaviour::kHang, true, 2, 1, kRepeated, "deadline_exceeded"},
    {"non_repeatable_definitive", kNR, testkit::Behaviour::kReject, false, 1, 0, kRejected},
    {"non_repeatable_retryable", kNR, testkit::Behaviour::kRefuse, true, 2, 1, kRetried},
    {"non_repeatable_unknown", kNR, testkit::Behaviour::kCommitLoseReply, true, 1, 1,
     kReconciledCommitted, "reply_lost"},
    {"non_repeatable_deadline", kNR, testkit::Behaviour::kHang, true, 2, 1, kReconciledAbsentThenRetried,
     "deadline_exceeded"},
};

class FailureMatrixTest : public ::testing::TestWithParam<Case> {};

TEST_P(FailureMatrixTest, FollowsTheContract) {
  const Case& c = GetParam();
  // Idempotent and deduplicated writes land on a provider that drops repeats of a key; a
  // non-repeatable write lands on one that does not, so a blind retry would show.
  testkit::FakeProvider provider(/*dedup=*/c.side_effect != kNR);
  provider.Script(kTool, {testkit::Step{c.first_attempt}});
  EngineHarness h;
  RECKON_ASSERT_OK(h.tools().Register(testkit::ProviderTool(FastContract(kTool, c.side_effect), provider)));
  h.Boot();
  RECKON_ASSERT_OK(h.Start(kRun, kCallOnce, CallOnceInput(kTool, FastInput("acct-1", 500))));
  ASSERT_TRUE(h.RunUntilSettled(kRun));
  const RunSummary run = *h.Describe(kRun);
  EXPECT_EQ(run.status, c.completes ? RunStatus::kCompleted : RunStatus::kFailed)
      << run.stuck_reason;
  h.Shutdown();

  const std::vector<Event> events = h.Events(kRun);
  const std::string op = OperationIdOfStep(events, kStep);
  ASSERT_FALSE(op.empty());
  EXPECT_EQ(EventNames(events, op), c.events);

  // Every attempt carries the same operation id, to the provider and in the journal.
  const auto calls = provider.calls_to(kTool);
  ASSERT_EQ(static_cast<int>(calls.size()), c.attempts);
  const auto started = BodiesOf<AttemptStarted>(events, op);
  ASSERT_EQ(static_cast<int>(started.size()), c.attempts);
  for (int i = 0; i < c.attempts; ++i) {
    EXPECT_EQ(calls[i].key, op);
    EXPECT_EQ(calls[i].attempt, static_cast<std::uint32_t>(i + 1));
    EXPECT_EQ(started[i].attempt, static_cast<std::uint32_t>(i + 1));
  }
  EXPECT_EQ(provider.effects(op), c.effects);
  EXPECT_EQ(provider.total_effects(), c.effects);

  if (*c.unknown_reason != '\0') {
    auto unknown = BodiesOf<OutcomeUnknown>(events, op);
    ASSERT_EQ(unknown.size(), 1u);
    EXPECT_EQ(unknown[0].reason, c.unknown_reason);
  }
  if (c.completes) {
    auto committed = BodiesOf<OperationCommitted>(events, op);
    ASSERT_EQ(committed.size(), 1u);
    EXPECT_EQ(committed[0].provider_ref, provider.ref_of(op));
    auto result = boost::json::parse(run.result_json).as_object();
    EXPECT_EQ(result.at("ref").as_string(), provider.ref_of(op));
  } else {
    auto rejected = BodiesOf<OperationRejected>(events, op);
    ASSERT_EQ(rejected.size(), 1u);
    EXPECT_EQ(rejected[0].code, "card_declined");
    auto failed = BodiesOf<WorkflowFailed>(events);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].code, "card_declined");
  }
}

INSTANTIATE_TEST_SUITE_P(ClassByFailure, FailureMatrixTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

// Runs one CallOnce workflow over `contract` to a settled state; returns the journal.
std::vector<Event> RunOnce(EngineHarness& h, testkit::FakeProvider& provider, ToolContract contract) {
  auto registered = h.tools().Register(testkit::ProviderTool(std::move(contract), provider));
  EXPECT_TRUE(registered) << registered.error().ToString();
  h.Boot();
  auto started = h.Start(kRun, kCallOnce, CallOnceInput(kTool, FastInput("acct-1", 500)));
  EXPECT_TRUE(started) << started.error().ToString();
  EXPECT_TRUE(h.RunUntilSettled(kRun));
  h.Shutdown();
  return h.Events(kRun);
}

TEST(DeduplicatedWrite, PastItsDedupWindowAnUnknownOutcomeIsReconciledNotRetried) {
  testkit::FakeProvider provider(/*dedup=*/false);  // the provider forgot the key: a retry would repeat
  provider.Script(kTool, {testkit::Step{testkit::Behaviour::kCommitLoseReply}});
  EngineHarness h;
  ToolContract contract = FastContract(kTool, kDW);
  contract.dedup_window = 1s;
  contract.retry.backoff = {1000ms, 1.0, 1000ms};  // the retry would be sent past the window
  const auto events = RunOnce(h, provider, contract);
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(EventNames(events, op), kReconciledCommitted);
  EXPECT_EQ(provider.calls_to(kTool).size(), 1u);
  EXPECT_EQ(provider.effects(op), 1);
  EXPECT_EQ(provider.lookups(kTool), 1);
}

TEST(ReadOnly, ExhaustedAttemptsOfUnknownOutcomeFailTheStep) {
  testkit::FakeProvider provider;
  provider.Script(kTool, {testkit::Step{testkit::Behaviour::kLoseRequest}, testkit::Step{testkit::Behaviour::kLoseRequest},
                          testkit::Step{testkit::Behaviour::kLoseRequest}});
  EngineHarness h;
  const auto events = RunOnce(h, provider, FastContract(kTool, kRO));
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(EventNames(events, op),
            "OperationPrepared AttemptStarted OutcomeUnknown RetryScheduled AttemptStarted "
            "OutcomeUnknown RetryScheduled AttemptStarted OutcomeUnknown OperationRejected");
  EXPECT_EQ(provider.calls_to(kTool).size(), 3u);
  EXPECT_EQ(BodiesOf<WorkflowFailed>(events).size(), 1u);
}

// --- late evidence ------------------------------------------------------------------------

TEST(LateEvidence, AnAttemptCompletingAfterItsDeadlineCommitsWithoutAnotherAttempt) {
  testkit::FakeProvider provider(/*dedup=*/false);
  // The provider ignores the engine's cancellation and answers 200 ms into a 100 ms attempt,
  // well before the lookup (deadline + 300 ms grace) would run.
  provider.Script(kTool, {testkit::Step{testkit::Behaviour::kLateCommit, "", 200ms}});
  EngineHarness h;
  ToolContract contract = FastContract(kTool, kNR);
  contract.reconcile.grace = 300ms;
  const auto events = RunOnce(h, provider, contract);
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(EventNames(events, op),
            "OperationPrepared AttemptStarted OutcomeUnknown OperationCommitted");
  auto unknown = BodiesOf<OutcomeUnknown>(events, op);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].reason, "deadline_exceeded");
  auto committed = BodiesOf<OperationCommitted>(events, op);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].source, CommitSource::kLateCompletion);
  EXPECT_EQ(committed[0].attempt, 1u);
  EXPECT_EQ(committed[0].provider_ref, provider.ref_of(op));
  EXPECT_EQ(provider.calls_to(kTool).size(), 1u);
  EXPECT_EQ(provider.effects(op), 1);
  EXPECT_EQ(provider.lookups(kTool), 0);
  EXPECT_EQ(BodiesOf<WorkflowCompleted>(events).size(), 1u);
}

TEST(LateEvidence, ACompletionWhileTheRetryWaitsCancelsTheRetry) {
  testkit::FakeProvider provider(/*dedup=*/false);
  provider.Script(kTool, {testkit::Step{testkit::Behaviour::kLateCommit, "", 200ms}});
  EngineHarness h;
  ToolContract contract = FastContract(kTool, kIW);
  contract.retry.backoff = {300ms, 1.0, 300ms};  // the retry is due well after the completion
  const auto events = RunOnce(h, provider, contract);
  const std::string op = OperationIdOfStep(events, kStep);
  EXPECT_EQ(EventNames(events, op),
            "OperationPrepared AttemptStarted OutcomeUnknown RetryScheduled OperationCommitted");
  auto committed = BodiesOf<OperationCommitted>(events, op);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].source, CommitSource::kLateCompletion);
  EXPECT_EQ(provider.calls_to(kTool).size(), 1u);
  EXPECT_EQ(provider.effects(op), 1);
}

}  // namespace
}  // namespace reckon
