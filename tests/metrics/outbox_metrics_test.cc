// The outbox metrics (host/outbox_metrics.h) of an embedded host, scraped from its metrics
// listener on 127.0.0.1 and read by the reference parser: workflows publish while the broker
// is unreachable (messages pending, their age growing, failed attempts counted), then a real
// nats-server with JetStream starts on that address and the dispatcher delivers them (nothing
// pending, the acks counted).
#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <functional>

#include "reckon/host/embedded_host.h"
#include "tests/metrics/reference_parser.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using namespace std::chrono_literals;

Task<WorkflowOutcome> PublishOrder(WorkflowContext& ctx, json::value) {
  auto published = ctx.Publish("orders.created", R"({"order":"o-1"})");
  if (!published) co_return CallFailure{"publish_failed", published.error().message()};
  co_return json::object{{"message_id", published.value()}};
}

asio::awaitable<std::string> Scrape(std::uint16_t port) {
  beast::tcp_stream stream(co_await asio::this_coro::executor);
  co_await stream.async_connect(
      asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), asio::use_awaitable);
  http::request<http::empty_body> request{http::verb::get, "/metrics", 11};
  request.set(http::field::host, "127.0.0.1");
  co_await http::async_write(stream, request, asio::use_awaitable);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  co_await http::async_read(stream, buffer, response, asio::use_awaitable);
  co_return response.body();
}

// Scrapes until `done` holds for a scrape's text (the dispatcher works on its own thread), at
// most about a minute; returns the last text.
asio::awaitable<std::string> ScrapeUntil(EmbeddedHost& host,
                                         std::function<bool(const std::string&)> done) {
  std::string text;
  for (int i = 0; i < 1200; ++i) {
    text = co_await Scrape(host.metrics_port());
    if (done(text)) break;
    asio::steady_timer wait(co_await asio::this_coro::executor, 50ms);
    co_await wait.async_wait(asio::use_awaitable);
  }
  co_return text;
}

bool Contains(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

// What the scenario sees: the scrapes with the broker down and after delivery.
struct Scenario {
  EmbeddedHost& host;
  NatsServer& broker;  // killed before the host opened: its port is known, nothing listens
  std::string down, delivered;
  bool broker_ready = false;
};

// The broker back on its port and store, with the stream ORDERS over orders.>.
bool StartBroker(NatsServer& broker) {
  return broker.Restart() && broker.AddStream("ORDERS", {"orders.>"}, std::chrono::minutes(2));
}

asio::awaitable<Result<void>> PublishThenStartTheBroker(Scenario& s) {
  RECKON_CO_TRY(co_await s.host.Recover());
  for (const char* id : {"order-1", "order-2"}) {
    auto start = s.host.engine().Start(id, "order", json::object{});
    RECKON_CO_TRY(co_await std::move(start));
  }
  RECKON_CO_TRY(co_await s.host.UntilIdle());
  s.down = co_await ScrapeUntil(s.host, [](const std::string& text) {
    return text.find("reckon_outbox_attempts_total{result=\"failed\"} 0\n") == std::string::npos;
  });
  s.broker_ready = StartBroker(s.broker);
  if (s.broker_ready) {
    s.delivered = co_await ScrapeUntil(s.host, [](const std::string& text) {
      return Contains(text, "reckon_outbox_pending 0");
    });
  }
  co_return Ok();
}

TEST(OutboxMetrics, PendingWhileTheBrokerIsDownThenDeliveredAndCounted) {
  TempDir dir;
  auto broker = NatsServer::Start({.program = RECKON_NATS_SERVER, .dir = dir.path()});
  ASSERT_TRUE(broker) << broker.error().ToString();
  ASSERT_TRUE(broker.value()->Kill());
  EmbeddedHostOptions options;
  options.metrics_listen = "127.0.0.1:0";
  options.nats_url = broker.value()->url();  // nothing listens yet
  auto opened = EmbeddedHost::Open(dir.File("journal.db"), options);
  ASSERT_TRUE(opened) << opened.error().ToString();
  EmbeddedHost& host = *opened.value();
  ASSERT_TRUE(host.workflows().Register("order", PublishOrder));
  Scenario s{host, *broker.value()};
  auto ran = host.Run(PublishThenStartTheBroker(s));
  ASSERT_TRUE(ran) << ran.error().ToString();
  const std::string& down = s.down;
  const std::string& delivered = s.delivered;

  const ParsedMetrics before = ParseWithReferenceParser(down, dir.File("down"));
  EXPECT_EQ(before.families.at("reckon_outbox_pending").as_string(), "gauge");
  EXPECT_EQ(before.families.at("reckon_outbox_oldest_age_seconds").as_string(), "gauge");
  EXPECT_EQ(before.families.at("reckon_outbox_attempts").as_string(), "counter");
  EXPECT_EQ(before.Value("reckon_outbox_pending"), 2) << down;
  EXPECT_GT(before.Value("reckon_outbox_oldest_age_seconds"), 0) << down;
  EXPECT_LT(before.Value("reckon_outbox_oldest_age_seconds"), 3600) << down;
  EXPECT_GE(before.Value("reckon_outbox_attempts_total", {{"result", "failed"}}), 1) << down;
  EXPECT_EQ(before.Value("reckon_outbox_attempts_total", {{"result", "acked"}}), 0) << down;

  ASSERT_TRUE(s.broker_ready) << "nats-server did not start; see " << dir.File("nats-server.log");
  const ParsedMetrics after = ParseWithReferenceParser(delivered, dir.File("delivered"));
  EXPECT_EQ(after.Value("reckon_outbox_pending"), 0) << delivered;
  EXPECT_EQ(after.Value("reckon_outbox_oldest_age_seconds"), 0) << delivered;
  EXPECT_EQ(after.Value("reckon_outbox_attempts_total", {{"result", "acked"}}), 2) << delivered;
  EXPECT_EQ(after.Value("reckon_outbox_attempts_total", {{"result", "duplicate"}}), 0)
      << delivered;
  EXPECT_GE(after.Value("reckon_outbox_attempts_total", {{"result", "failed"}}),
            before.Value("reckon_outbox_attempts_total", {{"result", "failed"}}));
  // No payload in the metrics.
  EXPECT_EQ(delivered.find("o-1"), std::string::npos);
}

}  // namespace
}  // namespace reckon::testing
