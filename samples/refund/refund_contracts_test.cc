#include "samples/refund/refund_contracts.h"

#include <boost/json/parse.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "reckon/contract/contract_card.h"
#include "reckon/contract/failure_policy.h"

namespace reckon::refund {
namespace {

using ::testing::HasSubstr;

boost::json::value J(const char* text) { return boost::json::parse(text); }

TEST(RefundContractsTest, BothRegister) {
  ContractRegistry registry;
  auto registered = RegisterRefundContracts(registry);
  ASSERT_TRUE(registered) << registered.error().ToString();
  ASSERT_EQ(registry.size(), 2u);
  EXPECT_EQ(registry.All()[0]->name, "lookup_payment");
  EXPECT_EQ(registry.All()[1]->name, "send_refund");
}

TEST(RefundContractsTest, PublishedFileMatchesTheCode) {
  std::ifstream in(std::string(RECKON_SOURCE_DIR) + "/samples/refund/refund_contracts.json");
  ASSERT_TRUE(in) << "samples/refund/refund_contracts.json is missing";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), RefundContractsJson())
      << "regenerate it: build/samples/refund/refund-contract-demo --json > "
         "samples/refund/refund_contracts.json";
}

TEST(RefundContractsTest, SendRefundIntentIgnoresTheCardToken) {
  auto refund = RegisteredContract::Create(SendRefundContract()).value();
  auto a = refund.IntentHashOf(J(
      R"({"payment_id":"pay-0","amount_cents":2500,"reason":"damaged","card_token":"tok_a"})"));
  auto b = refund.IntentHashOf(J(
      R"({"payment_id":"pay-0","amount_cents":2500,"reason":"damaged","card_token":"tok_b"})"));
  auto c = refund.IntentHashOf(J(
      R"({"payment_id":"pay-0","amount_cents":2600,"reason":"damaged","card_token":"tok_a"})"));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a.value(), b.value());
  EXPECT_NE(a.value(), c.value());
}

TEST(RefundContractsTest, SendRefundNeedsApprovalAbove10000Cents) {
  auto refund = RegisteredContract::Create(SendRefundContract()).value();
  EXPECT_FALSE(refund.ApprovalRequiredFor(
      J(R"({"payment_id":"p","amount_cents":10000,"reason":"r"})")).value());
  EXPECT_TRUE(refund.ApprovalRequiredFor(
      J(R"({"payment_id":"p","amount_cents":10001,"reason":"r"})")).value());
  EXPECT_FALSE(refund.ValidateInput(J(R"({"payment_id":"p","amount_cents":0,"reason":"r"})")));
  EXPECT_FALSE(refund.ValidateInput(
      J(R"({"payment_id":"p","amount_cents":1,"reason":"r","currency":"eur"})")));
}

TEST(RefundContractsTest, SendRefundRetriesOnlyProvablyUnprocessedFailures) {
  ToolContract c = SendRefundContract();
  EXPECT_EQ(ClassifyFailure(c, FailureKind::kRetryable, "rate_limited"), FailureKind::kRetryable);
  EXPECT_EQ(ClassifyFailure(c, FailureKind::kRetryable, "provider_unavailable_before_commit"),
            FailureKind::kRetryable);
  EXPECT_EQ(ClassifyFailure(c, FailureKind::kRetryable, "bad_gateway"), FailureKind::kUnknown);
  FailureDecision lost = DecideAfterFailure(c, {.reported = FailureKind::kUnknown,
                                                .code = "deadline_exceeded"});
  EXPECT_EQ(lost.action, FailureAction::kReconcile);
  EXPECT_EQ(lost.delay, std::chrono::milliseconds(500));
}

TEST(RefundContractsTest, CardsDescribeTheRefundProvider) {
  std::string card = RenderContractCard(SendRefundContract());
  EXPECT_THAT(card, HasSubstr("/refunds?idempotency_key=<operation id>"));
  EXPECT_THAT(card, HasSubstr("when amount_cents > 10000"));
  EXPECT_THAT(RenderContractCard(LookupPaymentContract()), HasSubstr("read_only"));
}

}  // namespace
}  // namespace reckon::refund
