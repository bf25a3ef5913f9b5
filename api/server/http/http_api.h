// HttpApi: docs/HTTP_API.md as code. Each API call is a row of the route table
// (http_routes.h) and becomes one protocol Request, handled by the Service exactly as one from
// the Cap'n Proto port: the same authentication (a bearer token, or the token behind a console
// session), authorization, validation and audit lines. The console's page and assets come from
// ConsoleAssets().
//
// What it adds to the protocol: console sessions (login, cookie, CSRF), JSON in and out, the
// inbox (every operation waiting for a person, with its contract card and evidence) and the
// MCP catalog check, and the Prometheus metrics at /metrics. Refusals are JSON errors with the HTTP status of their code.
//
// Threads: on the server's event loop, like the Service.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/verb.hpp>
#include <capnp/message.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "reckon/api/server/http/console_sessions.h"
#include "reckon/api/server/http/http_parse.h"
#include "reckon/api/server/http/http_routes.h"
#include "reckon/api/server/service.h"
#include "reckon/telemetry/metrics.h"

namespace reckon::api {

struct HttpReply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides the security headers
};

// {"error": {"code", "message"}} with the status docs/HTTP_API.md gives `code`.
HttpReply ErrorReply(std::string_view code, std::string_view message);
HttpReply ErrorReply(const Error& error);

class HttpApi {
 public:
  // `secure_cookies`: the port is HTTPS, so the session cookie is marked Secure. `metrics`:
  // served at GET /metrics to any valid bearer token (docs/SECURITY.md, "Metrics"); nullptr:
  // /metrics is 404. Not owned; must outlive the HttpApi.
  HttpApi(Service& service, ConsoleSessions& sessions, bool secure_cookies,
          const MetricsRegistry* metrics = nullptr);

  boost::asio::awaitable<HttpReply> Handle(HttpRequest request);

 private:
  struct Caller;
  using Message = std::unique_ptr<capnp::MallocMessageBuilder>;

  // /api/v1/...: the route of the route table (http_routes.h) the request matches.
  boost::asio::awaitable<HttpReply> Api(HttpRequest& request, const std::string& path,
                                        const std::string& query);
  Caller CallerOf(const HttpRequest& request);
  // The routes HttpApi serves itself (HttpOwnRoute), once the caller passed the CSRF check.
  boost::asio::awaitable<HttpReply> Own(HttpOwnRoute own, const Caller& caller,
                                        const HttpRequest& request);
  boost::asio::awaitable<HttpReply> Login(const HttpRequest& request);
  boost::asio::awaitable<HttpReply> SessionInfo(const Caller& caller, const HttpRequest& request);
  boost::asio::awaitable<HttpReply> Inbox(const Caller& caller, const HttpRequest& request);
  boost::asio::awaitable<HttpReply> CheckMcp(const Caller& caller, const HttpRequest& request);
  boost::asio::awaitable<HttpReply> Metrics(const HttpRequest& request);

  // Sends `request` (its method filled) as `token`, from the peer and with the client
  // certificate of `from`, and returns the reply message, or the error reply's Error.
  boost::asio::awaitable<Result<Message>> Call(const std::string& token, const HttpRequest& from,
                                               Message request,
                                               std::chrono::milliseconds timeout);

  Service& service_;
  ConsoleSessions& sessions_;
  bool secure_cookies_;
  const MetricsRegistry* metrics_;  // not owned; may be null
  SessionId next_session_ = SessionId{1} << 62;  // apart from the protocol port's ids
};

}  // namespace reckon::api
