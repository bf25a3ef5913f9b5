// The payments-provider binary's API, through reckon::sample_http: validation, idempotency,
// lookups and HTTP-level errors. Failure injection and crashes: provider_faults_test.cc.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <set>

#include "samples/payments_provider/provider_fixture.h"
#include "tests/support/temp_dir.h"

namespace reckon::samples::provider::testing {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

class ProviderTest : public ::testing::Test {
 protected:
  void StartProvider(std::vector<std::string> flags = {}) {
    Result<ProviderProcess> started = ProviderProcess::Start(Ledger(), Log(), std::move(flags));
    ASSERT_TRUE(started) << started.error().ToString();
    provider_.emplace(std::move(started).value());
  }
  std::string Ledger() const { return dir_.File("ledger.db"); }
  std::string Log() const { return dir_.File("provider.log"); }
  std::uint16_t port() const { return provider_->port(); }

  // Sends and expects a response (any status); returns it.
  HttpResponse Must(HttpCall call) {
    Result<HttpResponse> response = Send(std::move(call));
    EXPECT_TRUE(response) << response.error().ToString();
    return response ? std::move(response).value() : HttpResponse{};
  }
  static json::value Json(const HttpResponse& response) {
    Result<json::value> value = ParseJsonBody(response);
    EXPECT_TRUE(value) << value.error().ToString() << " body: " << response.body;
    return value ? value.value() : json::value();
  }

  reckon::testing::TempDir dir_;
  std::optional<ProviderProcess> provider_;
};

TEST_F(ProviderTest, NewRefundIsCreated) {
  StartProvider();
  HttpResponse response = Must(Post(port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  ASSERT_EQ(response.status, 201) << response.body;
  json::value body = Json(response);
  EXPECT_TRUE(body.at("refund_id").as_string().starts_with("re_"));
  EXPECT_EQ(body.at("payment_id").as_string(), "pay-1");
  EXPECT_EQ(body.at("amount_cents").as_int64(), 100);
  EXPECT_EQ(body.at("reason").as_string(), "requested_by_customer");
  EXPECT_EQ(body.at("idempotency_key").as_string(), "op-1");
  EXPECT_EQ(body.at("status").as_string(), "succeeded");
  EXPECT_FALSE(body.at("created_at").as_string().empty());
  EXPECT_EQ(response.Header("Idempotent-Replayed"), std::nullopt);
}

TEST_F(ProviderTest, SameKeyAndBodyReplaysTheOriginalRefund) {
  StartProvider();
  HttpResponse first = Must(Post(port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  ASSERT_EQ(first.status, 201) << first.body;
  HttpResponse again = Must(Post(port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Header("Idempotent-Replayed"), "true");
  EXPECT_EQ(Json(again).at("refund_id"), Json(first).at("refund_id"));
  // card_token and field order play no part in "the same request".
  HttpResponse with_token = Must(Post(
      port(), "/refunds",
      R"({"reason":"requested_by_customer","card_token":"tok_x","amount_cents":100,)"
      R"("payment_id":"pay-1"})",
      "op-1"));
  EXPECT_EQ(with_token.status, 200) << with_token.body;
  EXPECT_EQ(Json(Must(Get(port(), "/refunds"))).as_array().size(), 1u);
}

TEST_F(ProviderTest, SameKeyWithAnotherBodyIsRefused) {
  StartProvider();
  ASSERT_EQ(Must(Post(port(), "/refunds", RefundBody("pay-1", 100), "op-1")).status, 201);
  HttpResponse reused = Must(Post(port(), "/refunds", RefundBody("pay-1", 200), "op-1"));
  EXPECT_EQ(reused.status, 422) << reused.body;
  EXPECT_EQ(Json(reused).at("error").as_string(), "idempotency_key_reused");
  EXPECT_EQ(Json(Must(Get(port(), "/refunds"))).as_array().size(), 1u);
}

TEST_F(ProviderTest, ConcurrentRequestWithTheSameKeyGets409) {
  StartProvider({"--delay-ms", "600"});
  std::vector<HttpCall> calls;
  calls.push_back(Post(port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  calls.push_back(Post(port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  std::vector<Result<HttpResponse>> results = SendConcurrently(std::move(calls), 200ms);
  ASSERT_TRUE(results[0]) << results[0].error().ToString();
  ASSERT_TRUE(results[1]) << results[1].error().ToString();
  EXPECT_EQ(results[0].value().status, 201) << results[0].value().body;
  EXPECT_EQ(results[1].value().status, 409) << results[1].value().body;
  EXPECT_EQ(Json(results[1].value()).at("error").as_string(), "idempotency_key_in_use");
  // Once the first finished, the key replays.
  EXPECT_EQ(Must(Post(port(), "/refunds", RefundBody("pay-1", 100), "op-1")).status, 200);
}

TEST_F(ProviderTest, LookupByKeyAndList) {
  StartProvider();
  EXPECT_EQ(Must(Get(port(), "/refunds?idempotency_key=op-1")).status, 404);
  HttpResponse created = Must(Post(port(), "/refunds", RefundBody("pay-1", 100), "op 1/é"));
  ASSERT_EQ(created.status, 201);
  ASSERT_EQ(Must(Post(port(), "/refunds", RefundBody("pay-2", 50))).status, 201);  // no key

  HttpResponse found = Must(Get(port(), "/refunds?idempotency_key=op%201%2F%C3%A9"));
  ASSERT_EQ(found.status, 200) << found.body;
  EXPECT_EQ(Json(found), Json(created));
  HttpResponse missing = Must(Get(port(), "/refunds?idempotency_key=op-2"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Json(missing).at("error").as_string(), "not_found");

  HttpResponse list = Must(Get(port(), "/refunds"));
  ASSERT_EQ(list.status, 200);
  json::value list_body = Json(list);
  const json::array& refunds = list_body.as_array();
  ASSERT_EQ(refunds.size(), 2u);
  std::set<std::string> ids;
  for (const json::value& refund : refunds) {
    ids.insert(std::string(refund.at("refund_id").as_string()));
    EXPECT_TRUE(refund.as_object().contains("payment_id"));
    EXPECT_TRUE(refund.as_object().contains("amount_cents"));
    EXPECT_TRUE(refund.as_object().contains("idempotency_key"));
  }
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_TRUE(refunds[1].at("idempotency_key").is_null());
}

TEST_F(ProviderTest, BadBodiesNameTheProblem) {
  StartProvider();
  struct Case {
    std::string body;
    std::string field;
  };
  for (const Case& c : {Case{"{not json", "body"}, Case{"[1,2]", "body"},
                        Case{R"({"amount_cents":1,"reason":"x"})", "payment_id"},
                        Case{R"({"payment_id":7,"amount_cents":1,"reason":"x"})", "payment_id"},
                        Case{R"({"payment_id":"pay-1","reason":"x"})", "amount_cents"},
                        Case{R"({"payment_id":"pay-1","amount_cents":"1","reason":"x"})",
                             "amount_cents"},
                        Case{R"({"payment_id":"pay-1","amount_cents":1.5,"reason":"x"})",
                             "amount_cents"},
                        Case{R"({"payment_id":"pay-1","amount_cents":1})", "reason"}}) {
    HttpResponse response = Must(Post(port(), "/refunds", c.body, "op-bad"));
    EXPECT_EQ(response.status, 400) << c.body << " -> " << response.body;
    json::value body = Json(response);
    EXPECT_EQ(body.at("error").as_string(), "invalid_request") << c.body;
    EXPECT_EQ(body.at("field").as_string(), c.field) << c.body;
    EXPECT_NE(std::string(body.at("message").as_string()).find(c.field == "body" ? "" : c.field),
              std::string::npos);
  }
  HttpResponse malformed = Must(Post(port(), "/refunds", "{not json"));
  EXPECT_NE(malformed.body.find("malformed JSON"), std::string::npos) << malformed.body;
  EXPECT_EQ(Json(Must(Get(port(), "/refunds"))).as_array().size(), 0u);
}

TEST_F(ProviderTest, AmountsOutsideThePaymentAre422) {
  StartProvider({"--seed", "7"});
  HttpResponse payment = Must(Get(port(), "/payments/pay-42"));
  ASSERT_EQ(payment.status, 200) << payment.body;
  std::int64_t amount = Json(payment).at("amount_cents").as_int64();
  for (std::int64_t bad : {amount + 1, std::int64_t{0}, std::int64_t{-5}}) {
    HttpResponse response = Must(Post(port(), "/refunds", RefundBody("pay-42", bad)));
    EXPECT_EQ(response.status, 422) << bad << " " << response.body;
    EXPECT_EQ(Json(response).at("field").as_string(), "amount_cents");
  }
  EXPECT_EQ(Must(Post(port(), "/refunds", RefundBody("pay-42", amount))).status, 201);
  EXPECT_EQ(Must(Post(port(), "/refunds", RefundBody("pay-x", 1))).status, 404);
}

TEST_F(ProviderTest, PaymentsAreDerivedFromTheSeed) {
  StartProvider({"--seed", "3"});
  HttpResponse payment = Must(Get(port(), "/payments/pay-1"));
  ASSERT_EQ(payment.status, 200);
  json::value body = Json(payment);
  EXPECT_EQ(body.at("payment_id").as_string(), "pay-1");
  EXPECT_EQ(body.at("currency").as_string(), "usd");
  EXPECT_EQ(body.at("status").as_string(), "captured");
  EXPECT_EQ(Json(Must(Get(port(), "/payments/pay-1"))), body);  // stable
  int above_100_usd = 0;
  for (int i = 0; i < 40; ++i) {
    std::int64_t amount =
        Json(Must(Get(port(), "/payments/pay-" + std::to_string(i)))).at("amount_cents").as_int64();
    EXPECT_GE(amount, 500);
    EXPECT_LE(amount, 25000);
    above_100_usd += amount > 10000 ? 1 : 0;
  }
  EXPECT_GT(above_100_usd, 0);
  EXPECT_LT(above_100_usd, 40);
  for (std::string bad : {"/payments/pay-", "/payments/pay-1a", "/payments/PAY-1", "/payments/x"}) {
    HttpResponse missing = Must(Get(port(), bad));
    EXPECT_EQ(missing.status, 404) << bad;
    EXPECT_EQ(Json(missing).at("error").as_string(), "payment_not_found") << bad;
  }
}

TEST_F(ProviderTest, HttpLevelErrorsAreJson) {
  StartProvider();
  HttpResponse unknown = Must(Get(port(), "/charges"));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(Json(unknown).at("error").as_string(), "not_found");

  HttpCall put = Post(port(), "/refunds", RefundBody("pay-1", 1));
  put.method = "PUT";
  HttpResponse wrong_method = Must(std::move(put));
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_EQ(Json(wrong_method).at("error").as_string(), "method_not_allowed");
  EXPECT_EQ(wrong_method.Header("Allow"), "GET, POST");
  EXPECT_EQ(Must(Post(port(), "/payments/pay-1", "{}")).status, 405);

  std::string huge = R"({"payment_id":"pay-1","amount_cents":1,"reason":")" +
                     std::string(70 * 1024, 'x') + "\"}";
  HttpResponse too_large = Must(Post(port(), "/refunds", huge, "op-huge"));
  EXPECT_EQ(too_large.status, 413);
  EXPECT_EQ(Json(too_large).at("error").as_string(), "payload_too_large");

  HttpResponse empty_key = Must(Post(port(), "/refunds", RefundBody("pay-1", 1), ""));
  EXPECT_EQ(empty_key.status, 201);  // no header at all
  HttpCall blank = Post(port(), "/refunds", RefundBody("pay-1", 1));
  blank.headers.push_back({"Idempotency-Key", std::string(256, 'k')});
  EXPECT_EQ(Must(std::move(blank)).status, 400);
}

TEST_F(ProviderTest, TheLogHasOneLinePerRequestAndNoCardToken) {
  StartProvider();
  std::string body = R"({"payment_id":"pay-1","amount_cents":100,"reason":"r",)"
                     R"("card_token":"tok_secret_4242"})";
  ASSERT_EQ(Must(Post(port(), "/refunds", body, "op-log")).status, 201);
  ASSERT_EQ(Must(Get(port(), "/refunds")).status, 200);
  Result<reckon::testing::ExitStatus> status = provider_->process().Terminate();
  ASSERT_TRUE(status) << status.error().ToString();
  EXPECT_TRUE(status.value().Succeeded()) << status.value().ToString();
  std::string log = ReadFile(Log());
  EXPECT_EQ(log.find("tok_secret_4242"), std::string::npos) << log;
  EXPECT_NE(log.find("POST /refunds -> 201 key=op-log"), std::string::npos) << log;
  EXPECT_NE(log.find("GET /refunds -> 200 key=-"), std::string::npos) << log;
}

}  // namespace
}  // namespace reckon::samples::provider::testing
