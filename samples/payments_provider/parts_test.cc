// The provider's parts in-process: request parsing, payments, the fault plan, the ledger.
#include <gtest/gtest.h>

#include "samples/payments_provider/faults.h"
#include "samples/payments_provider/ledger.h"
#include "samples/payments_provider/payments.h"
#include "samples/payments_provider/refund_request.h"
#include "tests/support/temp_dir.h"

namespace reckon::samples::provider {
namespace {

TEST(ParseRefundRequest, AcceptsAValidBodyAndDropsCardToken) {
  ParsedRefund parsed = ParseRefundRequest(
      R"({"payment_id":"pay-1","amount_cents":150,"reason":"dup","card_token":"tok","x":1})");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value(), (RefundRequest{"pay-1", 150, "dup"}));
  // Read apart, only for a provider that echoes it.
  EXPECT_EQ(CardTokenIn(R"({"payment_id":"pay-1","card_token":"tok"})"), "tok");
  EXPECT_EQ(CardTokenIn(R"({"card_token":7})"), "");
  EXPECT_EQ(CardTokenIn("not json"), "");
}

TEST(ParseRefundRequest, NamesTheField) {
  EXPECT_EQ(ParseRefundRequest("").error().field, "body");
  EXPECT_EQ(ParseRefundRequest("\"text\"").error().field, "body");
  EXPECT_EQ(ParseRefundRequest(R"({"payment_id":"p","amount_cents":1e3,"reason":""})")
                .error()
                .field,
            "amount_cents");
  EXPECT_EQ(ParseRefundRequest(
                R"({"payment_id":"p","amount_cents":18446744073709551615,"reason":""})")
                .error()
                .field,
            "amount_cents");
  EXPECT_EQ(ParseRefundRequest(R"({"payment_id":null,"amount_cents":1,"reason":""})")
                .error()
                .field,
            "payment_id");
}

TEST(Payments, IdsAndAmounts) {
  EXPECT_TRUE(IsPaymentId("pay-0"));
  EXPECT_TRUE(IsPaymentId("pay-123456"));
  EXPECT_FALSE(IsPaymentId("pay-"));
  EXPECT_FALSE(IsPaymentId("pay-1 "));
  EXPECT_FALSE(IsPaymentId("xpay-1"));
  EXPECT_EQ(PaymentFor(1, "nope"), std::nullopt);
  EXPECT_EQ(PaymentFor(1, "pay-5")->amount_cents, PaymentFor(1, "pay-5")->amount_cents);
  int differ = 0;
  for (int i = 0; i < 20; ++i) {
    std::string id = "pay-" + std::to_string(i);
    differ += PaymentFor(1, id)->amount_cents != PaymentFor(2, id)->amount_cents ? 1 : 0;
  }
  EXPECT_GT(differ, 10);
}

TEST(FaultPlan, RatesAtTheEdgesAndDeterminism) {
  FaultPlan never(5, FaultRates{0, 0});
  FaultPlan always(5, FaultRates{1, 1});
  FaultPlan half_a(5, FaultRates{0.5, 0.5});
  FaultPlan half_b(5, FaultRates{0.5, 0.5});
  int fired = 0;
  for (int i = 0; i < 200; ++i) {
    Faults n = never.Next();
    Faults a = always.Next();
    EXPECT_FALSE(n.fail_before_commit || n.drop_reply);
    EXPECT_TRUE(a.fail_before_commit && a.drop_reply);
    Faults x = half_a.Next();
    Faults y = half_b.Next();
    EXPECT_EQ(x.fail_before_commit, y.fail_before_commit);
    EXPECT_EQ(x.drop_reply, y.drop_reply);
    fired += x.fail_before_commit ? 1 : 0;
  }
  EXPECT_GT(fired, 60);
  EXPECT_LT(fired, 140);
}

TEST(Ledger, StoresFindsListsAndSurvivesReopening) {
  reckon::testing::TempDir dir;
  std::string path = dir.File("ledger.db");
  Refund first;
  {
    Result<Ledger> ledger = Ledger::Open(path);
    ASSERT_TRUE(ledger) << ledger.error().ToString();
    Result<Refund> a = ledger.value().Insert(NewRefund{"pay-1", 10, "r", "k", "t1"});
    ASSERT_TRUE(a) << a.error().ToString();
    first = a.value();
    EXPECT_EQ(first.refund_id, "re_000001");
    ASSERT_TRUE(ledger.value().Insert(NewRefund{"pay-2", 20, "r", "k", "t2"}));
    ASSERT_TRUE(ledger.value().Insert(NewRefund{"pay-3", 30, "r", std::nullopt, "t3"}));
    EXPECT_EQ(ledger.value().FindByKey("k").value(), first);  // the first with the key
    EXPECT_EQ(ledger.value().FindByKey("other").value(), std::nullopt);
  }
  Result<Ledger> reopened = Ledger::Open(path);
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  std::vector<Refund> all = reopened.value().List().value();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], first);
  EXPECT_EQ(all[2].refund_id, "re_000003");
  EXPECT_EQ(all[2].idempotency_key, std::nullopt);
  EXPECT_EQ(reopened.value().Insert(NewRefund{"pay-4", 1, "r", "k2", "t4"}).value().refund_id,
            "re_000004");
}

// --refund-id-from-card: the ids embed the card token, durably; a ledger written before the
// column existed gets it and keeps its ids.
TEST(Ledger, EchoesACardTokenInTheRefundIdAndUpgradesAnOldFile) {
  reckon::testing::TempDir dir;
  const std::string path = dir.File("ledger.db");
  {
    Result<storage::SqliteDb> db = storage::SqliteDb::Open(path);
    ASSERT_TRUE(db) << db.error().ToString();
    ASSERT_TRUE(db.value().Exec(
        "CREATE TABLE refunds (seq INTEGER PRIMARY KEY AUTOINCREMENT, payment_id TEXT NOT NULL, "
        "amount_cents INTEGER NOT NULL, reason TEXT NOT NULL, idempotency_key TEXT, "
        "created_at TEXT NOT NULL); INSERT INTO refunds(payment_id, amount_cents, reason, "
        "idempotency_key, created_at) VALUES('pay-1', 10, 'r', 'k', 't1')"));
  }
  Result<Ledger> ledger = Ledger::Open(path);
  ASSERT_TRUE(ledger) << ledger.error().ToString();
  Result<Refund> echoed =
      ledger.value().Insert(NewRefund{"pay-2", 20, "r", "k2", "t2", "tok_card_1"});
  ASSERT_TRUE(echoed) << echoed.error().ToString();
  EXPECT_EQ(echoed.value().refund_id, "re_tok_card_1_000002");
  EXPECT_EQ(ledger.value().FindByKey("k2").value()->refund_id, "re_tok_card_1_000002");
  EXPECT_EQ(ledger.value().FindByKey("k").value()->refund_id, "re_000001");
}

}  // namespace
}  // namespace reckon::samples::provider
