// The per-tool timeouts of a contract (heartbeat_timeout, schedule_to_start_timeout): JSON,
// hash, validation, card, and what the failure table does with the attempts they end.
#include <boost/json/serialize.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reckon/contract/contract_card.h"
#include "reckon/contract/contract_json.h"
#include "reckon/contract/failure_policy.h"
#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing_contracts::Lookup;
using testing_contracts::Payout;

TEST(ContractTimeoutsTest, RoundTripAndOnlyDeclaredTimeoutsChangeTheHash) {
  ToolContract plain = Payout();
  ToolContract timed = Payout();
  timed.heartbeat_timeout = 500ms;
  timed.schedule_to_start_timeout = 1500ms;
  const boost::json::value json = ContractToJson(timed);
  EXPECT_EQ(json.at("heartbeat_timeout_ms"), 500);
  EXPECT_EQ(json.at("schedule_to_start_timeout_ms"), 1500);
  EXPECT_FALSE(ContractToJson(plain).as_object().contains("heartbeat_timeout_ms"));
  auto back = ContractFromJson(json);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back.value(), timed);
  EXPECT_NE(ContractHash(plain).value(), ContractHash(timed).value());
  // A contract without the fields hashes as before they existed.
  boost::json::value legacy = ContractToJson(plain);
  EXPECT_EQ(ContractHash(ContractFromJson(legacy).value()).value(), ContractHash(plain).value());
}

TEST(ContractTimeoutsTest, TimeoutsMustBeShorterThanTheAttempt) {
  ToolContract c = Payout();  // attempt_timeout 2 s
  c.heartbeat_timeout = 2s;
  c.schedule_to_start_timeout = 3s;
  auto valid = ValidateContract(c);
  ASSERT_FALSE(valid);
  EXPECT_THAT(valid.error().message(), HasSubstr("heartbeat_timeout must be > 0 and shorter"));
  EXPECT_THAT(valid.error().message(), HasSubstr("schedule_to_start_timeout must be > 0"));
  c.heartbeat_timeout = 500ms;
  c.schedule_to_start_timeout = 1s;
  EXPECT_TRUE(ValidateContract(c));
}

TEST(ContractTimeoutsTest, TheCardSaysWhatEachTimeoutEndsIn) {
  ToolContract c = Payout();
  c.heartbeat_timeout = 500ms;
  c.schedule_to_start_timeout = 1s;
  const std::string card = boost::json::serialize(ContractCardJson(c));
  EXPECT_THAT(card, HasSubstr("heartbeat_timeout"));
  EXPECT_THAT(card, HasSubstr("schedule_to_start_timeout"));
}

TEST(ContractTimeoutsTest, NotStartedIsRetryableForEveryClass) {
  FailureReport report;
  report.reported = FailureKind::kRetryable;
  report.code = kScheduleToStartTimeoutCode;
  report.not_started = true;
  ToolContract payout = Payout();  // non_repeatable_write: an unlisted code would be unknown
  FailureDecision decision = DecideAfterFailure(payout, report);
  EXPECT_EQ(decision.action, FailureAction::kRetry);
  EXPECT_EQ(decision.kind, FailureKind::kRetryable);
  // The same report without the dispatcher's proof is an unknown outcome.
  report.not_started = false;
  EXPECT_EQ(DecideAfterFailure(payout, report).action, FailureAction::kReconcile);
  // Out of attempts: the step fails (nothing can have happened), unless an earlier attempt's
  // outcome is still unknown.
  report.not_started = true;
  report.attempts_made = payout.retry.max_attempts;
  EXPECT_EQ(DecideAfterFailure(payout, report).action, FailureAction::kFailStep);
  report.earlier_outcome_unknown = true;
  EXPECT_EQ(DecideAfterFailure(payout, report).action, FailureAction::kReconcile);
}

TEST(ContractTimeoutsTest, HeartbeatTimeoutIsAnUnknownOutcome) {
  FailureReport report;
  report.reported = FailureKind::kUnknown;
  report.code = kHeartbeatTimeoutCode;
  EXPECT_EQ(DecideAfterFailure(Payout(), report).action, FailureAction::kReconcile);
  EXPECT_EQ(DecideAfterFailure(Lookup(), report).action, FailureAction::kRetry);
}

}  // namespace
}  // namespace reckon
