// The payments-provider binary under injected failures and crashes: what a tool sees through
// reckon::sample_http, and what the ledger says afterwards.
#include <gtest/gtest.h>

#include <csignal>

#include "samples/payments_provider/provider_fixture.h"
#include "tests/support/temp_dir.h"

namespace reckon::samples::provider::testing {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;
using reckon::testing::ExitStatus;

class ProviderFaultsTest : public ::testing::Test {
 protected:
  ProviderProcess Start(std::vector<std::string> flags = {}, const std::string& ledger = "ledger") {
    Result<ProviderProcess> started =
        ProviderProcess::Start(dir_.File(ledger + ".db"), dir_.File("provider.log"), flags);
    if (!started) throw std::runtime_error(started.error().ToString());
    return std::move(started).value();
  }
  static HttpResponse Must(HttpCall call) {
    Result<HttpResponse> response = Send(std::move(call));
    if (!response) throw std::runtime_error(response.error().ToString());
    return std::move(response).value();
  }
  static json::value Json(const HttpResponse& response) {
    return ParseJsonBody(response).value();
  }

  reckon::testing::TempDir dir_;
};

TEST_F(ProviderFaultsTest, FailureBeforeCommitIs503AndStoresNothing) {
  ProviderProcess provider = Start({"--fail-before-commit-rate", "1"});
  HttpResponse response = Must(Post(provider.port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(Json(response).at("error").as_string(), "provider_unavailable");
  EXPECT_EQ(Must(Get(provider.port(), "/refunds?idempotency_key=op-1")).status, 404);
  EXPECT_TRUE(Json(Must(Get(provider.port(), "/refunds"))).as_array().empty());
}

TEST_F(ProviderFaultsTest, DroppedReplyIsOutcomeUnknownButCommitted) {
  ProviderProcess provider = Start({"--drop-reply-rate", "1"});
  Result<HttpResponse> response =
      Send(Post(provider.port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  ASSERT_FALSE(response) << "status " << response.value().status;
  EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kOutcomeUnknown)
      << response.error().ToString();
  EXPECT_EQ(response.error().action(), ErrorAction::kFixStateFirst);

  // Reconciliation finds the refund the tool never heard about.
  HttpResponse lookup = Must(Get(provider.port(), "/refunds?idempotency_key=op-1"));
  ASSERT_EQ(lookup.status, 200) << lookup.body;
  EXPECT_EQ(Json(lookup).at("amount_cents").as_int64(), 100);
  // A replay with the same key is answered (replays draw no faults) with the same refund.
  HttpResponse replay = Must(Post(provider.port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  EXPECT_EQ(replay.status, 200);
  EXPECT_EQ(Json(replay).at("refund_id"), Json(lookup).at("refund_id"));
}

TEST_F(ProviderFaultsTest, WithoutDedupTheSameKeyRefundsTwice) {
  ProviderProcess provider = Start({"--no-dedup"});
  HttpResponse first = Must(Post(provider.port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  HttpResponse second = Must(Post(provider.port(), "/refunds", RefundBody("pay-1", 100), "op-1"));
  ASSERT_EQ(first.status, 201);
  ASSERT_EQ(second.status, 201);
  EXPECT_NE(Json(first).at("refund_id"), Json(second).at("refund_id"));
  EXPECT_EQ(Json(Must(Get(provider.port(), "/refunds"))).as_array().size(), 2u);
  // The key is stored: a lookup finds the first refund made with it.
  HttpResponse lookup = Must(Get(provider.port(), "/refunds?idempotency_key=op-1"));
  EXPECT_EQ(Json(lookup).at("refund_id"), Json(first).at("refund_id"));
}

TEST_F(ProviderFaultsTest, RefundsSurviveSigkill) {
  std::string refund_id;
  {
    ProviderProcess provider = Start();
    HttpResponse created =
        Must(Post(provider.port(), "/refunds", RefundBody("pay-9", 250), "op-9"));
    ASSERT_EQ(created.status, 201);
    refund_id = std::string(Json(created).at("refund_id").as_string());
    ASSERT_TRUE(provider.process().Kill(SIGKILL));
    Result<ExitStatus> status = provider.process().Wait();
    ASSERT_TRUE(status);
    EXPECT_TRUE(status.value().KilledBy(SIGKILL)) << status.value().ToString();
  }
  ProviderProcess restarted = Start();
  HttpResponse lookup = Must(Get(restarted.port(), "/refunds?idempotency_key=op-9"));
  ASSERT_EQ(lookup.status, 200) << lookup.body;
  EXPECT_EQ(Json(lookup).at("refund_id").as_string(), refund_id);
  HttpResponse replay = Must(Post(restarted.port(), "/refunds", RefundBody("pay-9", 250), "op-9"));
  EXPECT_EQ(replay.status, 200);
  EXPECT_EQ(replay.Header("Idempotent-Replayed"), "true");
  EXPECT_EQ(Json(replay).at("refund_id").as_string(), refund_id);
  // New refunds get new ids after the restart.
  HttpResponse next = Must(Post(restarted.port(), "/refunds", RefundBody("pay-9", 1), "op-10"));
  ASSERT_EQ(next.status, 201);
  EXPECT_NE(Json(next).at("refund_id").as_string(), refund_id);
}

TEST_F(ProviderFaultsTest, SigtermStopsCleanlyAndThePortRefusesConnections) {
  ProviderProcess provider = Start();
  std::uint16_t port = provider.port();
  Result<ExitStatus> status = provider.process().Terminate();
  ASSERT_TRUE(status) << status.error().ToString();
  EXPECT_TRUE(status.value().Succeeded()) << status.value().ToString();

  Result<HttpResponse> response = Send(Post(port, "/refunds", RefundBody("pay-1", 1), "op-1"));
  ASSERT_FALSE(response);
  EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kNotSent);
  EXPECT_EQ(response.error().code(), Errc::kUnavailable);
  EXPECT_NE(response.error().message().find("connection_refused"), std::string::npos)
      << response.error().message();
}

// Injected faults depend only on the seed and the order of new refunds.
TEST_F(ProviderFaultsTest, FaultsAreDeterministicPerSeed) {
  auto pattern = [&](const std::string& seed, const std::string& ledger) {
    ProviderProcess provider =
        Start({"--seed", seed, "--fail-before-commit-rate", "0.5"}, ledger);
    std::string statuses;
    for (int i = 0; i < 16; ++i) {
      int status = Must(Post(provider.port(), "/refunds", RefundBody("pay-1", 1))).status;
      statuses += status == 201 ? 'c' : (status == 503 ? 'f' : '?');
    }
    return statuses;
  };
  std::string first = pattern("11", "a");
  EXPECT_EQ(pattern("11", "b"), first);
  EXPECT_NE(first.find('c'), std::string::npos) << first;
  EXPECT_NE(first.find('f'), std::string::npos) << first;
  EXPECT_NE(pattern("12", "c"), first);
}

}  // namespace
}  // namespace reckon::samples::provider::testing
