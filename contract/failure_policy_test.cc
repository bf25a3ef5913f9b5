#include "reckon/contract/failure_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing_contracts::Lookup;
using testing_contracts::Payout;

constexpr FailureKind kDef = FailureKind::kDefinitive;
constexpr FailureKind kRetry = FailureKind::kRetryable;
constexpr FailureKind kUnk = FailureKind::kUnknown;

ToolContract Idempotent() {
  ToolContract c = Payout();
  c.side_effect = SideEffect::kIdempotentWrite;
  c.retry.reconcile_on_unknown = false;
  return c;
}

ToolContract Deduplicated() {
  ToolContract c = Idempotent();
  c.side_effect = SideEffect::kDeduplicatedWrite;
  c.dedup_window = 24h;
  return c;
}

FailureAction Act(const ToolContract& c, FailureReport r) {
  return DecideAfterFailure(c, r).action;
}

TEST(ClassifyFailureTest, ContractListsOverrideReportsButNeverLoosenUnknown) {
  ToolContract c = Payout();  // retryable: rate_limited; definitive: insufficient_funds;
                              // unknown: internal_error
  EXPECT_EQ(ClassifyFailure(c, kDef, "internal_error"), kUnk);
  EXPECT_EQ(ClassifyFailure(c, kRetry, "internal_error"), kUnk);
  EXPECT_EQ(ClassifyFailure(c, kRetry, "insufficient_funds"), kDef);
  EXPECT_EQ(ClassifyFailure(c, kDef, "rate_limited"), kRetry);
  EXPECT_EQ(ClassifyFailure(c, kRetry, "rate_limited"), kRetry);
  EXPECT_EQ(ClassifyFailure(c, kDef, "card_expired"), kDef);
  // A report of unknown stays unknown whatever the code.
  EXPECT_EQ(ClassifyFailure(c, kUnk, "rate_limited"), kUnk);
  EXPECT_EQ(ClassifyFailure(c, kUnk, "insufficient_funds"), kUnk);
}

TEST(ClassifyFailureTest, NonRepeatableWriteRetriesOnlyListedCodes) {
  EXPECT_EQ(ClassifyFailure(Payout(), kRetry, "http_503"), kUnk);
  EXPECT_EQ(ClassifyFailure(Payout(), kRetry, ""), kUnk);
  EXPECT_EQ(ClassifyFailure(Idempotent(), kRetry, "http_503"), kRetry);
  EXPECT_EQ(ClassifyFailure(Lookup(), kRetry, "http_503"), kRetry);
}

// The design brief's table, row by row.
TEST(DecideAfterFailureTest, DefinitiveRejectionFailsTheStepForEveryClass) {
  for (const ToolContract& c : {Lookup(), Idempotent(), Deduplicated(), Payout()}) {
    EXPECT_EQ(Act(c, {.reported = kDef, .code = "card_expired"}), FailureAction::kFailStep)
        << c.name;
  }
}

TEST(DecideAfterFailureTest, RetryableRetriesWithBackoffUntilTheBudgetEnds) {
  ToolContract c = Payout();  // 3 attempts, backoff 200ms x2
  FailureDecision d = DecideAfterFailure(c, {.reported = kRetry, .code = "rate_limited",
                                             .attempts_made = 2});
  EXPECT_EQ(d.action, FailureAction::kRetry);
  EXPECT_EQ(d.delay, 400ms);
  EXPECT_EQ(Act(c, {.reported = kRetry, .code = "rate_limited", .attempts_made = 3}),
            FailureAction::kFailStep);
}

TEST(DecideAfterFailureTest, UnknownOutcomeFollowsTheClass) {
  FailureReport unknown{.reported = kUnk, .code = "deadline_exceeded"};
  EXPECT_EQ(Act(Lookup(), unknown), FailureAction::kRetry);
  EXPECT_EQ(Act(Idempotent(), unknown), FailureAction::kRetry);
  EXPECT_EQ(Act(Deduplicated(), unknown), FailureAction::kRetry);
  FailureDecision d = DecideAfterFailure(Payout(), unknown);
  EXPECT_EQ(d.action, FailureAction::kReconcile);
  EXPECT_EQ(d.delay, 500ms);  // the grace after the hard deadline
  EXPECT_THAT(d.reason, HasSubstr("unknown outcome of a non_repeatable_write"));

  ToolContract human = Payout();
  human.reconcile.mode = ReconcileMode::kNeedsHuman;
  EXPECT_EQ(Act(human, unknown), FailureAction::kNeedsHuman);
}

TEST(DecideAfterFailureTest, NonRepeatableRetryableWithAnUnlistedCodeIsReconciled) {
  EXPECT_EQ(Act(Payout(), {.reported = kRetry, .code = "http_503"}), FailureAction::kReconcile);
}

TEST(DecideAfterFailureTest, DeduplicatedWritePastItsWindowIsNonRepeatable) {
  ToolContract c = Deduplicated();
  FailureReport inside{.reported = kUnk, .since_first_attempt = 23h};
  EXPECT_EQ(Act(c, inside), FailureAction::kRetry);
  FailureReport past{.reported = kUnk, .since_first_attempt = 24h};
  FailureDecision d = DecideAfterFailure(c, past);
  EXPECT_EQ(d.action, FailureAction::kReconcile);
  EXPECT_THAT(d.reason, HasSubstr("past its dedup window"));
  // The retry would be sent after its backoff: it must still land inside the window.
  FailureReport edge{.reported = kUnk, .since_first_attempt = 24h - 100ms};
  EXPECT_EQ(Act(c, edge), FailureAction::kReconcile);
  // Past the window, an unlisted "retryable" code is no proof either.
  EXPECT_EQ(Act(c, {.reported = kRetry, .code = "http_503", .since_first_attempt = 25h}),
            FailureAction::kReconcile);
  EXPECT_EQ(Act(c, {.reported = kRetry, .code = "rate_limited", .since_first_attempt = 25h}),
            FailureAction::kRetry);
}

TEST(DecideAfterFailureTest, UnknownWritesNeverFailWhenAttemptsRunOut) {
  FailureReport last{.reported = kUnk, .attempts_made = 3};
  EXPECT_EQ(Act(Lookup(), {.reported = kUnk, .attempts_made = 4}), FailureAction::kFailStep);
  EXPECT_EQ(Act(Idempotent(), last), FailureAction::kReconcile);
  ToolContract no_policy = Idempotent();
  no_policy.reconcile.mode = ReconcileMode::kUnset;
  FailureDecision d = DecideAfterFailure(no_policy, last);
  EXPECT_EQ(d.action, FailureAction::kFailStep);
  EXPECT_EQ(d.kind, kUnk);
}

TEST(DecideAfterFailureTest, AnEarlierUnknownOutcomeKeepsTheOperationOpen) {
  ToolContract c = Idempotent();
  EXPECT_EQ(Act(c, {.reported = kDef, .earlier_outcome_unknown = true}), FailureAction::kReconcile);
  EXPECT_EQ(Act(c, {.reported = kRetry, .attempts_made = 3, .earlier_outcome_unknown = true}),
            FailureAction::kReconcile);
  EXPECT_EQ(Act(Lookup(), {.reported = kDef, .earlier_outcome_unknown = true}),
            FailureAction::kFailStep);
}

TEST(DecideAfterFailureTest, ReconcileOnUnknownTurnsRetriesIntoLookups) {
  ToolContract c = Idempotent();
  c.retry.reconcile_on_unknown = true;
  EXPECT_EQ(Act(c, {.reported = kUnk}), FailureAction::kReconcile);
}

TEST(DecideAfterStillUnknownTest, LooksAgainThenNeedsAHuman) {
  ToolContract c = Payout();  // 4 lookups, backoff 1s x2
  FailureDecision again = DecideAfterStillUnknown(c, 2);
  EXPECT_EQ(again.action, FailureAction::kReconcile);
  EXPECT_EQ(again.delay, 2s);
  EXPECT_EQ(DecideAfterStillUnknown(c, 4).action, FailureAction::kNeedsHuman);
}

TEST(FailureNamesTest, Names) {
  EXPECT_EQ(FailureKindName(kUnk), "unknown");
  EXPECT_EQ(FailureActionName(FailureAction::kNeedsHuman), "needs_human");
}

}  // namespace
}  // namespace reckon
