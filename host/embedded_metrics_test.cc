// EmbeddedHostOptions::metrics_listen: an embedded host keeps the metrics and serves GET
// /metrics on its own address (telemetry/metrics_listener.h); after a restart the operation
// gauges come back from the journal (MetricsSink::Seed), not from zero.
#include <gtest/gtest.h>

#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "reckon/storage/testing/test_backend.h"
#include "reckon/host/embedded_host.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/test_workflows.h"
#include "tests/support/temp_dir.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using namespace reckon::testing;

// GET `target` from 127.0.0.1:port on the host's own loop; "<status>\n<body>".
asio::awaitable<std::string> Get(std::uint16_t port, std::string target) {
  beast::tcp_stream stream(co_await asio::this_coro::executor);
  co_await stream.async_connect(
      asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), asio::use_awaitable);
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  co_await http::async_write(stream, request, asio::use_awaitable);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  co_await http::async_read(stream, buffer, response, asio::use_awaitable);
  co_return std::to_string(response.result_int()) + "\n" + response.body();
}

asio::awaitable<Result<std::string>> StartTwoAndScrape(EmbeddedHost& host) {
  RECKON_CO_TRY(co_await host.Recover());
  auto reserve =
      host.engine().Start("r-1", kCallOnce, CallOnceInput("reserve", FastInput("acct-1", 100)));
  RECKON_CO_TRY(co_await std::move(reserve));
  auto transfer =
      host.engine().Start("t-1", kCallOnce, CallOnceInput("transfer", FastInput("acct-2", 200)));
  RECKON_CO_TRY(co_await std::move(transfer));
  RECKON_CO_TRY(co_await host.UntilIdle());
  co_return co_await Get(host.metrics_port(), "/metrics");
}

asio::awaitable<Result<std::string>> RecoverAndScrape(EmbeddedHost& host) {
  RECKON_CO_TRY(co_await host.Recover());
  RECKON_CO_TRY(co_await host.UntilIdle());
  const std::string other = co_await Get(host.metrics_port(), "/other");
  if (other.rfind("404\n", 0) != 0) co_return Err(Errc::kInternal, "not 404: " + other);
  co_return co_await Get(host.metrics_port(), "/metrics");
}

class EmbeddedMetricsTest : public ::testing::Test {
 protected:
  std::unique_ptr<EmbeddedHost> OpenHost() {
    EmbeddedHostOptions options;
    options.metrics_listen = "127.0.0.1:0";
    auto host = EmbeddedHost::Open(journal_, options);
    EXPECT_TRUE(host) << host.error().ToString();
    EmbeddedHost& h = *host.value();
    auto parked = FastContract("transfer", SideEffect::kNonRepeatableWrite);
    parked.reconcile = {.mode = ReconcileMode::kNeedsHuman};
    EXPECT_TRUE(h.tools().Register(
        testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
    EXPECT_TRUE(h.tools().Register(testkit::ProviderTool(std::move(parked), provider_)));
    EXPECT_TRUE(h.workflows().Register(kCallOnce, CallOnce));
    return std::move(host).value();
  }

  TempDir dir_;
  const std::string journal_ = storage::NewTestJournalOrThrow(dir_);  // SQLite or PostgreSQL
  testkit::FakeProvider provider_;
};

TEST_F(EmbeddedMetricsTest, ServesMetricsAndRecoversTheGaugesFromTheJournal) {
  {
    auto host = OpenHost();
    // The request is lost: the outcome is unknown, and the contract leaves it to a person.
    provider_.Script("transfer", {testkit::Step{testkit::Behaviour::kLoseRequest}});
    auto scraped = host->Run(StartTwoAndScrape(*host));
    ASSERT_TRUE(scraped) << scraped.error().ToString();
    const std::string& text = scraped.value();
    EXPECT_EQ(text.rfind("200\n", 0), 0u) << text;
    EXPECT_NE(text.find("reckon_operation_transitions_total{tool=\"reserve\",kind=\"OperationCommitted\"} 1\n"),
              std::string::npos) << text;
    EXPECT_NE(text.find("reckon_needs_person 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("reckon_commit_seconds_count"), std::string::npos) << text;
  }
  // A new process life: nothing happens, yet the person-waiting operation is counted.
  auto host = OpenHost();
  auto scraped = host->Run(RecoverAndScrape(*host));
  ASSERT_TRUE(scraped) << scraped.error().ToString();
  EXPECT_NE(scraped.value().find("reckon_needs_person 1\n"), std::string::npos) << scraped.value();
  EXPECT_NE(scraped.value().find("reckon_operations{state=\"needs_human\"} 1\n"), std::string::npos)
      << scraped.value();
}

TEST_F(EmbeddedMetricsTest, AnAddressThatCannotBeBoundFailsRecover) {
  EmbeddedHostOptions options;
  options.metrics_listen = "not-an-ip:1";
  auto host = EmbeddedHost::Open(journal_, options);
  ASSERT_TRUE(host);
  auto recovered = host.value()->Run(host.value()->Recover());
  ASSERT_FALSE(recovered);
  EXPECT_EQ(recovered.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(recovered.error().message().find("not-an-ip"), std::string::npos);
}

}  // namespace
}  // namespace reckon
