// The outbox metrics (worker/outbox_metrics.h) of an embedded host, scraped from its metrics
// listener on 127.0.0.1 and read by the reference parser: workflows publish while the broker
// is unreachable (messages pending, their age growing, failed attempts counted), then a real
// nats-server with JetStream starts on that address and the dispatcher delivers them (nothing
// pending, the acks counted).
#include <arpa/inet.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <functional>
#include <optional>

#include "reckon/worker/embedded_host.h"
#include "tests/metrics/reference_parser.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using namespace std::chrono_literals;

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  return ok ? ntohs(addr.sin_port) : -1;
}

// Starts nats-server with JetStream on `port` and declares the stream ORDERS over orders.>.
bool StartBroker(const TempDir& dir, int port, std::optional<Subprocess>& server) {
  SubprocessOptions options;
  options.args = {"-js", "-sd", dir.File("jetstream"), "-a", "127.0.0.1", "-p",
                  std::to_string(port)};
  options.stderr_path = dir.File("nats-server.log");
  auto started = Subprocess::Start(RECKON_NATS_SERVER, options);
  if (!started) return false;
  server.emplace(std::move(started).value());
  natsOptions* opts = nullptr;
  natsOptions_Create(&opts);
  const std::string url = "nats://127.0.0.1:" + std::to_string(port);
  natsOptions_SetURL(opts, url.c_str());
  natsOptions_SetMaxReconnect(opts, 400);
  natsOptions_SetReconnectWait(opts, 25);
  natsOptions_SetRetryOnFailedConnect(opts, true, nullptr, nullptr);
  natsConnection* conn = nullptr;
  natsStatus s = natsConnection_Connect(&conn, opts);
  natsOptions_Destroy(opts);
  jsCtx* js = nullptr;
  if (s == NATS_OK) s = natsConnection_JetStream(&js, conn, nullptr);
  if (s == NATS_OK) {
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    const char* subjects[] = {"orders.>"};
    config.Name = "ORDERS";
    config.Subjects = subjects;
    config.SubjectsLen = 1;
    config.Storage = js_FileStorage;
    jsStreamInfo* info = nullptr;
    jsErrCode error = static_cast<jsErrCode>(0);
    s = js_AddStream(&info, js, &config, nullptr, &error);
    if (info != nullptr) jsStreamInfo_Destroy(info);
  }
  if (js != nullptr) jsCtx_Destroy(js);
  if (conn != nullptr) natsConnection_Destroy(conn);
  return s == NATS_OK;
}

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
  const TempDir& dir;
  int port = 0;
  std::string down, delivered;
  std::optional<Subprocess> broker;
  bool broker_ready = false;
};

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
  s.broker_ready = StartBroker(s.dir, s.port, s.broker);
  if (s.broker_ready) {
    s.delivered = co_await ScrapeUntil(s.host, [](const std::string& text) {
      return Contains(text, "reckon_outbox_pending 0");
    });
  }
  co_return Ok();
}

TEST(OutboxMetrics, PendingWhileTheBrokerIsDownThenDeliveredAndCounted) {
  TempDir dir;
  const int port = FreePort();
  ASSERT_GT(port, 0);
  EmbeddedHostOptions options;
  options.metrics_listen = "127.0.0.1:0";
  options.nats_url = "nats://127.0.0.1:" + std::to_string(port);  // nothing listens yet
  auto opened = EmbeddedHost::Open(dir.File("journal.db"), options);
  ASSERT_TRUE(opened) << opened.error().ToString();
  EmbeddedHost& host = *opened.value();
  ASSERT_TRUE(host.workflows().Register("order", PublishOrder));
  Scenario s{host, dir, port};
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
