#include "reckon/contract/contract.h"

#include <boost/json/parse.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_contracts::Lookup;
using testing_contracts::Payout;

// The validation message, or "" if the contract is valid.
std::string Problems(const ToolContract& contract) {
  auto result = ValidateContract(contract);
  if (result) return "";
  EXPECT_EQ(result.error().code(), Errc::kInvalidArgument);
  return result.error().message();
}

TEST(SideEffectTest, NamesRoundTrip) {
  for (SideEffect s : {SideEffect::kReadOnly, SideEffect::kIdempotentWrite,
                       SideEffect::kDeduplicatedWrite, SideEffect::kNonRepeatableWrite}) {
    auto parsed = ParseSideEffect(SideEffectName(s));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed.value(), s);
  }
  EXPECT_EQ(SideEffectName(SideEffect::kDeduplicatedWrite), "deduplicated_write");
  auto bad = ParseSideEffect("write");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("unknown side effect 'write'"));
  EXPECT_FALSE(IsWrite(SideEffect::kReadOnly));
  EXPECT_TRUE(IsWrite(SideEffect::kIdempotentWrite));
}

TEST(ReconcileModeTest, NamesRoundTrip) {
  for (ReconcileMode m :
       {ReconcileMode::kUnset, ReconcileMode::kLookup, ReconcileMode::kNeedsHuman}) {
    EXPECT_EQ(ParseReconcileMode(ReconcileModeName(m)).value(), m);
  }
  EXPECT_FALSE(ParseReconcileMode("ask_model"));
}

TEST(BackoffTest, GrowsFromInitialAndIsCapped) {
  Backoff b{100ms, 2.0, 1s};
  EXPECT_EQ(b.Delay(1), 100ms);
  EXPECT_EQ(b.Delay(2), 200ms);
  EXPECT_EQ(b.Delay(4), 800ms);
  EXPECT_EQ(b.Delay(5), 1s);
  EXPECT_EQ(b.Delay(1000), 1s);  // no overflow
  EXPECT_EQ(b.Delay(0), 100ms);
  EXPECT_EQ((Backoff{300ms, 1.5, 10s}.Delay(2)), 450ms);
  EXPECT_EQ((Backoff{300ms, 1.0, 10s}.Delay(9)), 300ms);
}

TEST(ValidateContractTest, AcceptsTheExampleContracts) {
  EXPECT_EQ(Problems(Payout()), "");
  EXPECT_EQ(Problems(Lookup()), "");
}

TEST(ValidateContractTest, DefaultContractListsEverythingMissingInOneMessage) {
  std::string message = Problems(ToolContract{});
  EXPECT_THAT(message, HasSubstr("contract '': set name"));
  EXPECT_THAT(message, HasSubstr("set description"));
  EXPECT_THAT(message, HasSubstr("attempt_timeout must be > 0"));
  EXPECT_THAT(message, HasSubstr("non_repeatable_write needs a reconcile lookup or an explicit "
                                 "needs_human fallback (set reconcile.mode)"));
  EXPECT_THAT(message, HasSubstr("set retry.reconcile_on_unknown = true"));
  EXPECT_THAT(message, HasSubstr("set evidence"));
  EXPECT_THAT(message, HasSubstr("set input_schema"));
}

TEST(ValidateContractTest, NonRepeatableWriteNeedsAReconcileDecision) {
  ToolContract c = Payout();
  c.reconcile.mode = ReconcileMode::kUnset;
  EXPECT_EQ(Problems(c), "contract 'send_payout': non_repeatable_write needs a reconcile lookup "
                         "or an explicit needs_human fallback (set reconcile.mode)");
  c.reconcile.mode = ReconcileMode::kNeedsHuman;
  EXPECT_EQ(Problems(c), "");
}

TEST(ValidateContractTest, NameRules) {
  ToolContract c = Lookup();
  c.name = "Get Payee";
  EXPECT_THAT(Problems(c), HasSubstr("name must match [a-z0-9_.-]+"));
  c.name = "payments.get-payee_v2";
  EXPECT_EQ(Problems(c), "");
}

TEST(ValidateContractTest, RetryAndBackoffRules) {
  ToolContract c = Lookup();
  c.retry.max_attempts = 0;
  c.retry.backoff = {0ms, 0.5, -1ms};
  std::string message = Problems(c);
  EXPECT_THAT(message, HasSubstr("retry.max_attempts must be >= 1"));
  EXPECT_THAT(message, HasSubstr("retry.backoff.initial must be > 0"));
  EXPECT_THAT(message, HasSubstr("retry.backoff.multiplier must be >= 1"));
  EXPECT_THAT(message, HasSubstr("retry.backoff.max must be >= its initial"));
}

TEST(ValidateContractTest, DeduplicatedWriteNeedsItsWindowAndOnlyIt) {
  ToolContract c = Payout();
  c.side_effect = SideEffect::kDeduplicatedWrite;
  c.retry.reconcile_on_unknown = false;
  EXPECT_THAT(Problems(c), HasSubstr("deduplicated_write needs dedup_window > 0"));
  c.dedup_window = 24h;
  EXPECT_EQ(Problems(c), "");
  c.reconcile.mode = ReconcileMode::kUnset;
  EXPECT_THAT(Problems(c), HasSubstr("deduplicated_write is treated as non_repeatable_write past "
                                     "its dedup window"));

  ToolContract read = Lookup();
  read.dedup_window = 1h;
  EXPECT_THAT(Problems(read), HasSubstr("dedup_window applies only to deduplicated_write"));
}

TEST(ValidateContractTest, ReconcileOnUnknownNeedsAMode) {
  ToolContract c = Payout();
  c.side_effect = SideEffect::kIdempotentWrite;
  c.reconcile.mode = ReconcileMode::kUnset;
  EXPECT_THAT(Problems(c), HasSubstr("retry.reconcile_on_unknown needs a reconcile lookup or an "
                                     "explicit needs_human fallback"));
  c.retry.reconcile_on_unknown = false;
  EXPECT_EQ(Problems(c), "");  // an idempotent write may simply retry

  ToolContract read = Lookup();
  read.retry.reconcile_on_unknown = true;
  read.reconcile.mode = ReconcileMode::kLookup;
  EXPECT_THAT(Problems(read), HasSubstr("read_only retries an unknown outcome"));
  EXPECT_THAT(Problems(read), HasSubstr("read_only has nothing to reconcile"));
}

TEST(ValidateContractTest, LookupModeNeedsAttemptsAndGrace) {
  ToolContract c = Payout();
  c.reconcile.max_attempts = 0;
  c.reconcile.grace = 0ms;
  c.reconcile.backoff.initial = 0ms;
  std::string message = Problems(c);
  EXPECT_THAT(message, HasSubstr("reconcile.max_attempts must be >= 1 in lookup mode"));
  EXPECT_THAT(message, HasSubstr("reconcile.grace must be > 0 in lookup mode"));
  EXPECT_THAT(message, HasSubstr("reconcile.backoff.initial must be > 0"));
  c.reconcile.mode = ReconcileMode::kNeedsHuman;  // lookup settings are not read then
  EXPECT_EQ(Problems(c), "");
}

TEST(ValidateContractTest, SchemaMustCompileAndDescribeAnObject) {
  ToolContract c = Lookup();
  c.input_schema = boost::json::parse(R"({"type":"object","properties":{"x":{"anyOf":[]}}})");
  EXPECT_THAT(Problems(c), HasSubstr("input_schema: unsupported keyword 'anyOf' at schema path "
                                     "/properties/x"));
  c.input_schema = boost::json::parse(R"({"type":"array"})");
  EXPECT_THAT(Problems(c), HasSubstr("input_schema must declare \"type\": \"object\""));
}

TEST(ValidateContractTest, SecretFieldsMustBeDeclared) {
  ToolContract c = Payout();
  c.secret_fields = {"card_tokn", "memo", "memo", "a..b"};
  std::string message = Problems(c);
  EXPECT_THAT(message, HasSubstr("secret field 'card_tokn' is not a property of input_schema"));
  EXPECT_THAT(message, HasSubstr("secret field 'memo' is listed twice"));
  EXPECT_THAT(message, HasSubstr("secret field 'a..b' is not a dotted path"));
}

TEST(ValidateContractTest, NestedSecretFieldsFollowProperties) {
  ToolContract c = Lookup();
  c.input_schema = boost::json::parse(R"({"type":"object","properties":{
      "payee":{"type":"string"},
      "card":{"type":"object","properties":{"number":{"type":"string"}}}}})");
  c.secret_fields = {"card.number"};
  EXPECT_EQ(Problems(c), "");
  c.secret_fields = {"card.cvc"};
  EXPECT_THAT(Problems(c), HasSubstr("secret field 'card.cvc' is not a property"));
}

TEST(ValidateContractTest, ApprovalRules) {
  ToolContract c = Payout();
  c.approval.grant_ttl = 0s;
  c.approval.wait_deadline = 0s;
  EXPECT_THAT(Problems(c), HasSubstr("approval.grant_ttl must be > 0"));
  EXPECT_THAT(Problems(c), HasSubstr("approval.wait_deadline must be > 0 when set"));

  c = Payout();
  c.approval.when.clear();
  EXPECT_THAT(Problems(c), HasSubstr("approval kind 'when' needs at least one condition"));

  c = Payout();
  c.approval.kind = ApprovalKind::kAlways;
  EXPECT_THAT(Problems(c), HasSubstr("approval.when is read only when approval.kind is when"));
  c.approval.when.clear();
  EXPECT_EQ(Problems(c), "");
}

TEST(ValidateContractTest, ApprovalConditionsMustNameRequiredIntentFields) {
  ToolContract c = Payout();
  c.approval.when = {{"amount", CompareOp::kGreater, 10000},
                     {"memo", CompareOp::kEqual, "urgent"},
                     {"card_token", CompareOp::kEqual, "tok_1"},
                     {"payee", CompareOp::kGreater, 5},
                     {"amount_cents", CompareOp::kLess, "100"}};
  std::string message = Problems(c);
  EXPECT_THAT(message, HasSubstr("approval condition 'amount > 10000': 'amount' is not a "
                                 "property of input_schema"));
  EXPECT_THAT(message, HasSubstr("'memo' must be required by input_schema"));
  EXPECT_THAT(message, HasSubstr("'card_token' is a secret field"));
  EXPECT_THAT(message, HasSubstr("'payee' is not declared as an integer or number"));
  EXPECT_THAT(message, HasSubstr("approval condition 'amount_cents < \"100\"': < compares "
                                 "numbers"));
}

TEST(ValidateContractTest, CodesHaveOneMeaning) {
  ToolContract c = Payout();
  c.definitive_codes.push_back("rate_limited");
  c.unknown_codes.push_back("insufficient_funds");
  c.retry.retryable_codes.push_back("");
  std::string message = Problems(c);
  EXPECT_THAT(message, HasSubstr("code 'rate_limited' is in both retry.retryable_codes and "
                                 "definitive_codes"));
  EXPECT_THAT(message, HasSubstr("code 'insufficient_funds' is in both definitive_codes and "
                                 "unknown_codes"));
  EXPECT_THAT(message, HasSubstr("retry.retryable_codes holds an empty code"));
}

TEST(ValidateContractTest, CompletionNeedsAWriteThatReconciles) {
  ToolContract async = Payout();
  async.completion.deadline = 60s;
  EXPECT_TRUE(ValidateContract(async));
  ToolContract read = Lookup();
  read.completion.deadline = 60s;
  EXPECT_THAT(Problems(read), HasSubstr("completion applies only to writes"));
  ToolContract negative = Payout();
  negative.completion.deadline = -1s;
  EXPECT_THAT(Problems(negative), HasSubstr("completion.deadline_ms must be > 0"));
  ToolContract idempotent = Payout();
  idempotent.side_effect = SideEffect::kIdempotentWrite;
  idempotent.retry.reconcile_on_unknown = false;
  idempotent.reconcile = {};
  idempotent.approval = {};
  idempotent.completion.deadline = 60s;
  EXPECT_THAT(Problems(idempotent),
              AllOf(HasSubstr("completion needs reconcile.mode lookup or needs_human"),
                    HasSubstr("completion needs retry.reconcile_on_unknown")));
}

TEST(ValidateContractTest, ReadOnlyNeedsNoEvidence) {
  ToolContract c = Lookup();
  c.evidence.clear();
  EXPECT_EQ(Problems(c), "");
  ToolContract w = Payout();
  w.evidence.clear();
  EXPECT_THAT(Problems(w), HasSubstr("set evidence"));
}

TEST(ApprovalRequiredTest, EvaluatesTheContractsRule) {
  ToolContract c = Payout();
  auto small = boost::json::parse(R"({"payee":"p","amount_cents":10000})");
  auto large = boost::json::parse(R"({"payee":"p","amount_cents":10001})");
  EXPECT_FALSE(ApprovalRequired(c, small).value());
  EXPECT_TRUE(ApprovalRequired(c, large).value());
  c.approval = {.kind = ApprovalKind::kNone};
  EXPECT_FALSE(ApprovalRequired(c, large).value());
  EXPECT_THAT(Problems(c), Not(HasSubstr("approval")));
}

}  // namespace
}  // namespace reckon
