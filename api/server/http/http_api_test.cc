// The HTTP API against the real `reckon server --http` and a real worker, over real HTTP on
// 127.0.0.1 (Beast's synchronous client): bearer tokens and console sessions (cookie flags,
// CSRF), the protocol's refusals as JSON with their statuses, pagination by cursor, the
// inbox, decisions bound to the intent hash, and the limits (oversized body, unknown paths).
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <fstream>

#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

struct Reply {
  unsigned status = 0;
  json::value body;
  std::string raw;
  std::string set_cookie;
  std::string csp;
};

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The HTTP port file goes next to the test binary's own temporary directory.
    ReckonServerOptions options;
    options.extra_args = {"--http", "127.0.0.1:0", "--http-port-file", ports_.File("http-port")};
    auto server = ReckonServer::Start(RECKON_CLI_PATH, options);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    ASSERT_TRUE(server_->StartWorker(RECKON_TEST_WORKER, "worker"));
    std::ifstream port_file(ports_.File("http-port"));
    ASSERT_TRUE(port_file >> port_) << "the server did not write --http-port-file";
  }

  std::string Token(const std::string& role) {
    std::ifstream in(server_->TokenFile(role));
    std::string token;
    in >> token;
    return token;
  }

  Reply Send(http::verb verb, const std::string& target, const std::string& body = "",
             const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(port_)));
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "127.0.0.1");
    for (const auto& [name, value] : headers) request.set(name, value);
    if (!body.empty()) {
      request.set(http::field::content_type, "application/json");
      request.body() = body;
    }
    request.prepare_payload();
    beast::error_code ec;
    // A refused body may be cut short by the server (413): the reply still comes.
    http::write(stream, request, ec);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response, ec);
    Reply reply;
    reply.status = response.result_int();
    reply.raw = response.body();
    reply.set_cookie = std::string(response[http::field::set_cookie]);
    reply.csp = std::string(response["Content-Security-Policy"]);
    boost::system::error_code parse_error;
    reply.body = json::parse(reply.raw, parse_error);
    return reply;
  }

  Reply As(const std::string& role, http::verb verb, const std::string& target,
           const std::string& body = "") {
    return Send(verb, target, body, {{"Authorization", "Bearer " + Token(role)}});
  }

  static std::string Code(const Reply& reply) {
    const json::value* error = reply.body.is_object() ? reply.body.as_object().if_contains("error")
                                                      : nullptr;
    return error ? std::string(error->at("code").as_string()) : "";
  }

  TempDir ports_;
  std::unique_ptr<ReckonServer> server_;
  int port_ = 0;
};

std::string StartBody(const std::string& id, const std::string& tool, int amount) {
  return json::serialize(json::object{
      {"workflow_id", id},
      {"workflow_type", "call_once"},
      {"input", json::object{{"tool", tool},
                             {"input", json::object{{"account", "acct-7"},
                                                    {"amount_cents", amount}}}}}});
}

TEST_F(HttpApiTest, EveryCallNeedsATokenAndRefusalsAreJsonWithTheirStatus) {
  const Reply none = Send(http::verb::get, "/api/v1/runs");
  EXPECT_EQ(none.status, 401u) << none.raw;
  EXPECT_EQ(Code(none), "unauthenticated");
  const Reply bad = Send(http::verb::get, "/api/v1/runs", "", {{"Authorization", "Bearer rk1_00"}});
  EXPECT_EQ(bad.status, 401u) << bad.raw;
  const Reply reader_starts = As("reader", http::verb::post, "/api/v1/runs", StartBody("h-0", "charge", 1));
  EXPECT_EQ(reader_starts.status, 403u) << reader_starts.raw;
  EXPECT_EQ(Code(reader_starts), "permission_denied");
  const Reply unknown = As("reader", http::verb::get, "/api/v1/runs/no-such-run");
  EXPECT_EQ(unknown.status, 404u) << unknown.raw;
  EXPECT_EQ(Code(unknown), "not_found");
  const Reply nowhere = As("reader", http::verb::get, "/api/v1/nowhere");
  EXPECT_EQ(nowhere.status, 404u);
  EXPECT_EQ(Code(nowhere), "not_found");
  const Reply page = Send(http::verb::get, "/no/such/page");
  EXPECT_EQ(page.status, 404u);
  EXPECT_EQ(Code(page), "not_found");
  const Reply bad_id = As("operator", http::verb::post, "/api/v1/runs", StartBody("a\"><img src=x>", "charge", 1));
  EXPECT_EQ(bad_id.status, 400u) << bad_id.raw;
  const Reply not_json = As("operator", http::verb::post, "/api/v1/runs", "{not json");
  EXPECT_EQ(not_json.status, 400u) << not_json.raw;
  const Reply big = As("operator", http::verb::post, "/api/v1/runs", std::string(2 << 20, ' '));
  EXPECT_EQ(big.status, 413u) << big.raw;
  EXPECT_EQ(Code(big), "payload_too_large");
  // Every reply carries the console's policy.
  EXPECT_NE(none.csp.find("script-src 'self'"), std::string::npos) << none.csp;
}

TEST_F(HttpApiTest, AConsoleSessionIsAnHttpOnlyStrictCookieAndStateChangesNeedItsCsrfToken) {
  const Reply login = Send(http::verb::post, "/api/v1/session",
                           json::serialize(json::object{{"token", Token("operator")}}));
  ASSERT_EQ(login.status, 200u) << login.raw;
  EXPECT_NE(login.set_cookie.find("HttpOnly"), std::string::npos) << login.set_cookie;
  EXPECT_NE(login.set_cookie.find("SameSite=Strict"), std::string::npos) << login.set_cookie;
  EXPECT_EQ(login.raw.find(Token("operator")), std::string::npos) << "the token never comes back";
  const std::string cookie = login.set_cookie.substr(0, login.set_cookie.find(';'));
  const std::string csrf(login.body.at("csrf_token").as_string());
  EXPECT_EQ(login.body.at("principal").at("name"), "operator");

  const Reply read = Send(http::verb::get, "/api/v1/runs", "", {{"Cookie", cookie}});
  EXPECT_EQ(read.status, 200u) << read.raw;
  const Reply forged = Send(http::verb::post, "/api/v1/runs", StartBody("s-1", "charge", 100),
                            {{"Cookie", cookie}});
  EXPECT_EQ(forged.status, 403u) << forged.raw;
  EXPECT_EQ(Code(forged), "csrf_missing");
  const Reply wrong = Send(http::verb::post, "/api/v1/runs", StartBody("s-1", "charge", 100),
                           {{"Cookie", cookie}, {"X-CSRF-Token", std::string(64, '0')}});
  EXPECT_EQ(wrong.status, 403u) << wrong.raw;
  const Reply listed_before = As("reader", http::verb::get, "/api/v1/runs");
  EXPECT_EQ(listed_before.body.at("runs").as_array().size(), 0u) << "nothing was started";
  Reply started;
  EXPECT_TRUE(Eventually([&] {  // until the worker has registered
    started = Send(http::verb::post, "/api/v1/runs", StartBody("s-1", "charge", 100),
                   {{"Cookie", cookie}, {"X-CSRF-Token", csrf}});
    return started.status == 200;
  })) << started.raw;

  const Reply out = Send(http::verb::delete_, "/api/v1/session", "",
                         {{"Cookie", cookie}, {"X-CSRF-Token", csrf}});
  EXPECT_EQ(out.status, 200u) << out.raw;
  const Reply after = Send(http::verb::get, "/api/v1/runs", "", {{"Cookie", cookie}});
  EXPECT_EQ(after.status, 401u) << after.raw;
}

TEST_F(HttpApiTest, APostMustSayJsonSoABrowserCannotSendItCrossSite) {
  const Reply form = Send(http::verb::post, "/api/v1/runs", "", {
      {"Authorization", "Bearer " + Token("operator")},
      {"Content-Type", "application/x-www-form-urlencoded"}});
  EXPECT_EQ(form.status, 400u) << form.raw;
  const Reply login = Send(http::verb::post, "/api/v1/session", "", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(login.status, 400u) << login.raw;
}

// Under --insecure-dev a request without a token acts as 'dev'; a state change still needs a
// bearer token or a console session with its CSRF token, or any page the developer visits
// could make the browser post to 127.0.0.1.
TEST(HttpApiDevTest, TokenlessStateChangesAreRefusedEvenInDevelopmentMode) {
  TempDir ports;
  ReckonServerOptions options;
  options.extra_args = {"--insecure-dev", "--http", "127.0.0.1:0", "--http-port-file",
                        ports.File("http-port")};
  auto server = ReckonServer::Start(RECKON_CLI_PATH, options);
  ASSERT_TRUE(server) << server.error().ToString();
  int port = 0;
  std::ifstream(ports.File("http-port")) >> port;
  ASSERT_GT(port, 0);
  auto send = [&](http::verb verb, const std::string& target, const std::string& body) {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(port)));
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::content_type, "application/json");
    request.body() = body;
    request.prepare_payload();
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    return response;
  };
  EXPECT_EQ(send(http::verb::get, "/api/v1/runs", "").result_int(), 200u);
  const auto posted = send(http::verb::post, "/api/v1/runs/x/cancel", "{}");
  EXPECT_EQ(posted.result_int(), 403u) << posted.body();
  EXPECT_NE(posted.body().find("csrf_missing"), std::string::npos) << posted.body();
}

TEST_F(HttpApiTest, RunsPageByCursorAndFilter) {
  for (int i = 0; i < 5; ++i) {
    const std::string id = "p-" + std::to_string(i);
    Reply started;
    ASSERT_TRUE(Eventually([&] {
      started = As("operator", http::verb::post, "/api/v1/runs", StartBody(id, "charge", 100 + i));
      return started.status == 200;
    })) << started.raw;
  }
  std::vector<std::string> seen;
  std::string cursor;
  for (int pages = 0; pages < 5; ++pages) {
    const Reply page = As("reader", http::verb::get,
                          "/api/v1/runs?id_prefix=p-&limit=2" +
                              (cursor.empty() ? std::string() : "&after=" + cursor));
    ASSERT_EQ(page.status, 200u) << page.raw;
    for (const auto& run : page.body.at("runs").as_array()) {
      seen.emplace_back(run.at("workflow_id").as_string());
    }
    if (page.body.at("next_cursor").is_null()) break;
    cursor = std::string(page.body.at("next_cursor").as_string());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"p-4", "p-3", "p-2", "p-1", "p-0"}));
  const Reply typed = As("reader", http::verb::get, "/api/v1/runs?type=no_such_type");
  EXPECT_EQ(typed.body.at("runs").as_array().size(), 0u);
  const Reply bad_limit = As("reader", http::verb::get, "/api/v1/runs?limit=100000");
  EXPECT_EQ(bad_limit.status, 400u) << bad_limit.raw;
  const Reply bad_cursor = As("reader", http::verb::get, "/api/v1/runs?limit=2&after=xyz");
  EXPECT_EQ(bad_cursor.status, 400u) << bad_cursor.raw;
}

// The test worker's "ledger" workflow keeps a total: query "total" reads it, update "add"
// (validated: a positive n) charges and adds.
TEST_F(HttpApiTest, AQueryReadsAndAnUpdateInstructsARunningWorkflow) {
  const std::string start = json::serialize(json::object{
      {"workflow_id", "l-1"}, {"workflow_type", "ledger"}, {"input", json::object{}}});
  Reply started;
  ASSERT_TRUE(Eventually([&] {
    started = As("operator", http::verb::post, "/api/v1/runs", start);
    return started.status == 200;
  })) << started.raw;
  const std::string total = R"({"name": "total"})";
  Reply asked;
  ASSERT_TRUE(Eventually([&] {
    asked = As("reader", http::verb::post, "/api/v1/runs/l-1/query", total);
    return asked.status == 200;
  })) << asked.raw;
  EXPECT_EQ(asked.body.at("result").at("total").as_int64(), 0);

  const std::string add = R"({"name": "add", "args": {"n": 5}, "update_id": "u-1"})";
  const Reply updated = As("operator", http::verb::post, "/api/v1/runs/l-1/update", add);
  ASSERT_EQ(updated.status, 200u) << updated.raw;
  EXPECT_EQ(updated.body.at("update_id").as_string(), "u-1");
  EXPECT_EQ(updated.body.at("result").at("total").as_int64(), 5);
  // The same update id is the same update: answered again, not applied twice.
  const Reply again = As("operator", http::verb::post, "/api/v1/runs/l-1/update", add);
  ASSERT_EQ(again.status, 200u) << again.raw;
  EXPECT_EQ(again.body.at("result").at("total").as_int64(), 5);
  asked = As("reader", http::verb::post, "/api/v1/runs/l-1/query", total);
  ASSERT_EQ(asked.status, 200u) << asked.raw;
  EXPECT_EQ(asked.body.at("result").at("total").as_int64(), 5);

  const Reply rejected = As("operator", http::verb::post, "/api/v1/runs/l-1/update",
                            R"({"name": "add", "args": {"n": -1}})");
  EXPECT_EQ(rejected.status, 400u) << rejected.raw;
  EXPECT_NE(rejected.raw.find("positive"), std::string::npos) << rejected.raw;
  const Reply unknown = As("reader", http::verb::post, "/api/v1/runs/l-1/query",
                           R"({"name": "no_such_query"})");
  EXPECT_EQ(unknown.status, 404u) << unknown.raw;
  const Reply no_run = As("reader", http::verb::post, "/api/v1/runs/nobody/query", total);
  EXPECT_EQ(no_run.status, 404u) << no_run.raw;
  const Reply reader_update = As("reader", http::verb::post, "/api/v1/runs/l-1/update", add);
  EXPECT_EQ(reader_update.status, 403u) << reader_update.raw;
}

TEST_F(HttpApiTest, ACompletionIsAppliedOncePerDeliveryAndNeedsAWorkerToken) {
  Reply started;
  ASSERT_TRUE(Eventually([&] {
    started = As("operator", http::verb::post, "/api/v1/runs",
                 StartBody("c-1", "webhook_payout", 300));
    return started.status == 200;
  })) << started.raw;
  std::string op;
  ASSERT_TRUE(Eventually([&] {
    const Reply run = As("reader", http::verb::get, "/api/v1/runs/c-1");
    if (run.status != 200 || run.body.at("operations").as_array().empty()) return false;
    const json::value& first = run.body.at("operations").as_array().front();
    op = std::string(first.at("operation_id").as_string());
    return first.at("state") == "awaiting_completion" &&
           run.body.at("summary").at("waits_on") == "completion";
  }));
  const std::string target = "/api/v1/operations/" + op + "/completion";
  const std::string body = R"({"delivery_id":"evt-1","status":"succeeded","output":{"paid":true}})";
  const Reply reader = As("reader", http::verb::post, target, body);
  EXPECT_EQ(reader.status, 403u) << reader.raw;
  const Reply no_delivery = As("worker", http::verb::post, target, R"({"status":"succeeded"})");
  EXPECT_EQ(no_delivery.status, 400u) << no_delivery.raw;
  const Reply bad_status = As("worker", http::verb::post, target,
                              R"({"delivery_id":"evt-1","status":"done"})");
  EXPECT_EQ(bad_status.status, 400u) << bad_status.raw;
  const Reply unknown = As("worker", http::verb::post,
                           "/api/v1/operations/op_" + std::string(32, '0') + "/completion", body);
  EXPECT_EQ(unknown.status, 404u) << unknown.raw;
  for (int delivery = 0; delivery < 3; ++delivery) {  // a provider retrying its webhook
    const Reply done = As("worker", http::verb::post, target, body);
    EXPECT_EQ(done.status, 200u) << done.raw;
  }
  const Reply other = As("worker", http::verb::post, "/api/v1/runs/c-1/operations/" + op +
                                                         "/completion",
                         R"({"delivery_id":"evt-2","status":"failed","code":"card_declined"})");
  EXPECT_EQ(other.status, 200u) << other.raw;  // settled already: acknowledged, no change
  ASSERT_TRUE(Eventually([&] {
    const Reply run = As("reader", http::verb::get, "/api/v1/runs/c-1");
    return run.status == 200 && run.body.at("summary").at("status") == "completed";
  }));
  const Reply history = As("reader", http::verb::get, "/api/v1/runs/c-1/history");
  int received = 0, committed = 0;
  for (const auto& e : history.body.at("events").as_array()) {
    if (e.at("type") == "CompletionReceived") {
      ++received;
      EXPECT_EQ(e.at("event").at("receivedBy"), "worker");
      EXPECT_EQ(e.at("event").at("deliveryId"), "evt-1");
    }
    if (e.at("type") == "OperationCommitted") {
      ++committed;
      EXPECT_EQ(e.at("event").at("source"), "callback");
    }
  }
  EXPECT_EQ(received, 1);
  EXPECT_EQ(committed, 1);
}

TEST_F(HttpApiTest, ASignalWithARequestIdIsAppliedOnce) {
  const std::string start = json::serialize(json::object{
      {"workflow_id", "s-1"},
      {"workflow_type", "signal_then_call"},
      {"input", json::object{{"signal", "go"},
                             {"tool", "echo"},
                             {"input", json::object{{"account", "a"}, {"amount_cents", 1}}}}}});
  Reply started;
  ASSERT_TRUE(Eventually([&] {
    started = As("operator", http::verb::post, "/api/v1/runs", start);
    return started.status == 200;
  })) << started.raw;
  for (int i = 0; i < 2; ++i) {
    const Reply sent = As("operator", http::verb::post, "/api/v1/runs/s-1/signal",
                          R"({"name":"go","payload":1,"request_id":"req-1"})");
    EXPECT_EQ(sent.status, 200u) << sent.raw;
  }
  ASSERT_TRUE(Eventually([&] {
    const Reply run = As("reader", http::verb::get, "/api/v1/runs/s-1");
    return run.status == 200 && run.body.at("summary").at("status") == "completed";
  }));
  // The run finished: the same request id is still a repeat, answered as the first was; a new
  // one is refused.
  const Reply again = As("operator", http::verb::post, "/api/v1/runs/s-1/signal",
                         R"({"name":"go","payload":1,"request_id":"req-1"})");
  EXPECT_EQ(again.status, 200u) << again.raw;
  const Reply late = As("operator", http::verb::post, "/api/v1/runs/s-1/signal",
                        R"({"name":"go","payload":1,"request_id":"req-2"})");
  EXPECT_EQ(late.status, 409u) << late.raw;
  const Reply history = As("reader", http::verb::get, "/api/v1/runs/s-1/history");
  int signals = 0;
  for (const auto& e : history.body.at("events").as_array()) {
    signals += e.at("type") == "SignalReceived";
  }
  EXPECT_EQ(signals, 1);
}

TEST_F(HttpApiTest, AnApprovalFromTheInboxIsBoundToTheIntentHashShown) {
  Reply started;
  ASSERT_TRUE(Eventually([&] {
    started = As("operator", http::verb::post, "/api/v1/runs", StartBody("i-1", "payout", 900));
    return started.status == 200;
  })) << started.raw;
  json::value item;
  ASSERT_TRUE(Eventually([&] {
    const Reply inbox = As("approver", http::verb::get, "/api/v1/inbox");
    if (inbox.status != 200 || inbox.body.at("items").as_array().empty()) return false;
    item = inbox.body.at("items").as_array().front();
    return true;
  }));
  EXPECT_EQ(item.at("workflow_id"), "i-1");
  EXPECT_EQ(item.at("started_by"), "operator");
  const json::value& op = item.at("operation");
  EXPECT_EQ(op.at("state"), "awaiting_approval");
  // The test worker's payout contract sets no approval deadline.
  EXPECT_EQ(op.at("approval_deadline_us").to_number<std::int64_t>(), 0);
  EXPECT_FALSE(std::string(item.at("card").as_string()).empty());
  const std::string target = "/api/v1/runs/i-1/operations/" +
                             std::string(op.at("operation_id").as_string()) + "/approve";
  const Reply missing = As("approver", http::verb::post, target, R"({"note":"ok"})");
  EXPECT_EQ(missing.status, 400u) << missing.raw;
  const Reply stale = As("approver", http::verb::post, target,
                         json::serialize(json::object{{"intent_hash", std::string(64, 'a')}}));
  EXPECT_EQ(stale.status, 403u) << stale.raw;
  EXPECT_EQ(Code(stale), "permission_denied");
  EXPECT_NE(stale.raw.find("review it again"), std::string::npos) << stale.raw;
  const Reply reader = As("reader", http::verb::post, target,
                          json::serialize(json::object{{"intent_hash", op.at("intent_hash")}}));
  EXPECT_EQ(reader.status, 403u) << reader.raw;
  const Reply approved = As("approver", http::verb::post, target,
                            json::serialize(json::object{{"intent_hash", op.at("intent_hash")},
                                                         {"note", "checked"}}));
  EXPECT_EQ(approved.status, 200u) << approved.raw;
  EXPECT_TRUE(Eventually([&] {
    const Reply run = As("reader", http::verb::get, "/api/v1/runs/i-1");
    return run.status == 200 && run.body.at("summary").at("status") == "completed";
  }));
  const Reply history = As("reader", http::verb::get, "/api/v1/runs/i-1/history");
  bool granted_by_approver = false;
  for (const auto& e : history.body.at("events").as_array()) {
    if (e.at("type") == "ApprovalGranted") {
      granted_by_approver = e.at("event").at("approvedBy") == "approver";
    }
  }
  EXPECT_TRUE(granted_by_approver) << history.raw;
}

// Request bytes that error messages quote (a query parameter the protocol handler names, a
// body field) come back in valid UTF-8 JSON, whole: invalid bytes, NUL and control characters
// are written \xNN, and nothing after a NUL is lost. Boost.JSON's parser refuses invalid UTF-8,
// so a reply that parses is valid.
TEST_F(HttpApiTest, ErrorsThatQuoteOddBytesAreValidUtf8JsonAndWhole) {
  struct Case {
    http::verb verb;
    std::string target;
    std::string body;
    std::string quoted;  // what the message must show of the odd bytes
  };
  const std::vector<Case> cases = {
      {http::verb::get, "/api/v1/runs?after=%FF%FEx%00tail", "", "\\xff\\xfex\\x00tail"},
      {http::verb::get, "/api/v1/runs?status=%FF%00tail%1B%5B2J", "", "\\xff\\x00tail\\x1b[2J"},
      {http::verb::get, "/api/v1/runs?status=caf%C3%A9%C2%9B%00tail", "", "caf\xc3\xa9\\xc2\\x9b\\x00tail"},
      {http::verb::post, "/api/v1/runs",
       R"({"workflow_id": "odd-1", "workflow_type": "t\u0000\u001btail", "input": {}})",
       "\\x00\\x1btail"},
  };
  for (const Case& c : cases) {
    const Reply reply = c.verb == http::verb::get ? As("reader", c.verb, c.target)
                                                  : As("operator", c.verb, c.target, c.body);
    EXPECT_GE(reply.status, 400u) << c.target << ": " << reply.raw;
    ASSERT_TRUE(reply.body.is_object()) << c.target << ": not valid UTF-8 JSON: "
                                        << json::serialize(json::value(json::string(
                                               reply.raw.begin(), reply.raw.end())));
    const std::string message(reply.body.at("error").at("message").as_string());
    for (unsigned char byte : message) EXPECT_GE(byte, 0x20u) << c.target << ": " << message;
    EXPECT_NE(message.find(c.quoted), std::string::npos) << c.target << ": " << message;
  }
}

}  // namespace
}  // namespace reckon::testing
