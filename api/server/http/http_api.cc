#include "reckon/api/server/http/http_api.h"

#include <boost/json.hpp>

#include <algorithm>
#include <map>

#include "reckon/protocol/client.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/protocol/wire_json.h"
#include "reckon/api/server/http/console_assets.h"
#include "reckon/api/server/http/http_json.h"
#include "reckon/auth/role.h"
#include "reckon/base/identifier.h"
#include "reckon/contract/contract_json.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/plan/mcp_catalog.h"

namespace reckon::api {
namespace {

namespace json = boost::json;
namespace http = boost::beast::http;
using namespace std::chrono_literals;
using Method = wire::Request::Method;

constexpr std::chrono::milliseconds kCallTimeout = 30s;
constexpr const char* kCookie = "reckon_session";

unsigned StatusOf(std::string_view code) {
  static const std::map<std::string_view, unsigned> kStatus = {
      {"invalid_argument", 400},   {"unauthenticated", 401},     {"permission_denied", 403},
      {"csrf_missing", 403},       {"not_found", 404},           {"already_exists", 409},
      {"failed_precondition", 409}, {"conflict", 409},           {"payload_too_large", 413},
      {"resource_exhausted", 429}, {"unavailable", 503},         {"deadline_exceeded", 504},
      {"unimplemented", 501},      {"not_owner", 421},           {"fenced", 409}};
  auto it = kStatus.find(code);
  return it == kStatus.end() ? 500 : it->second;
}

HttpReply JsonReply(json::value value, unsigned status = 200) {
  HttpReply reply;
  reply.status = status;
  reply.body = json::serialize(value);
  return reply;
}

std::unique_ptr<capnp::MallocMessageBuilder> NewMessage() {
  auto message = std::make_unique<capnp::MallocMessageBuilder>();
  message->initRoot<wire::Request>();
  return message;
}

Method::Builder MethodOf(const std::unique_ptr<capnp::MallocMessageBuilder>& message) {
  return message->getRoot<wire::Request>().initMethod();
}

bool IsStateChange(http::verb verb) {
  return verb == http::verb::post || verb == http::verb::delete_ || verb == http::verb::put ||
         verb == http::verb::patch;
}

}  // namespace

// Every error reply of every route is built here: its message, whatever bytes of the request it
// quotes (a path, a query parameter, a body field), becomes valid UTF-8 without control
// characters (CleanMessage), so the JSON is valid and whole.
HttpReply ErrorReply(std::string_view code, std::string_view message) {
  return JsonReply(
      json::object{{"error", json::object{{"code", code}, {"message", CleanMessage(message)}}}},
      StatusOf(code));
}

// A not_owner error (cluster mode) also names the owner: {"error": {..., "redirect": "HOST:PORT"}}.
HttpReply ErrorReply(const Error& error) {
  HttpReply reply = ErrorReply(ErrcName(error.code()), error.message());
  if (!error.redirect().empty()) {
    reply.body = json::serialize(json::object{
        {"error", json::object{{"code", ErrcName(error.code())},
                               {"message", CleanMessage(error.message())},
                               {"redirect", error.redirect()}}}});
  }
  return reply;
}

struct HttpApi::Caller {
  std::string token;
  bool bearer = false;     // the token came in an Authorization: Bearer header
  std::string session_id;  // when authenticated by the console's cookie
  std::string csrf;
};

HttpApi::HttpApi(Service& service, ConsoleSessions& sessions, bool secure_cookies,
                 const MetricsRegistry* metrics)
    : service_(service), sessions_(sessions), secure_cookies_(secure_cookies), metrics_(metrics) {}

// Any valid token may read the metrics (the whoAmI permission): they carry no payloads, but
// tool names, workflow types and queue names are the business's to disclose.
boost::asio::awaitable<HttpReply> HttpApi::Metrics(const HttpRequest& request) {
  constexpr std::string_view kBearer = "Bearer ";
  if (request.authorization.rfind(kBearer, 0) != 0) {
    HttpReply refused = ErrorReply("unauthenticated",
                                   "/metrics needs a bearer token (any role; give Prometheus a "
                                   "reader token through its authorization.credentials_file)");
    refused.headers.emplace_back("WWW-Authenticate", "Bearer");
    co_return refused;
  }
  Message who = NewMessage();
  MethodOf(who).setWhoAmI();
  const std::string token = request.authorization.substr(kBearer.size());  // outlives the call
  auto called = Call(token, request, std::move(who), kCallTimeout);
  auto reply = co_await std::move(called);
  if (!reply) co_return ErrorReply(reply.error());
  HttpReply out;
  out.content_type = std::string(MetricsRegistry::kContentType);
  out.body = metrics_->WriteText();
  out.headers.emplace_back("Cache-Control", "no-store");
  co_return out;
}

boost::asio::awaitable<Result<HttpApi::Message>> HttpApi::Call(const std::string& token,
                                                              const HttpRequest& from,
                                                              Message request,
                                                              std::chrono::milliseconds timeout) {
  auto root = request->getRoot<wire::Request>();
  root.setCredential(Text(token));
  auto reply = std::make_unique<capnp::MallocMessageBuilder>();
  auto response = reply->initRoot<wire::Response>();
  SessionState session;
  session.id = next_session_++;
  session.peer = from.peer + " (http)";
  // Verified by the HTTPS handshake (--client-ca): what the Service asks of a worker principal.
  session.client_certificate = from.client_certificate;
  auto handled = service_.Handle(session, root.asReader(), timeout, response);
  co_await std::move(handled);
  auto result = reply->getRoot<wire::Response>().asReader().getResult();
  if (result.isError()) co_return FromWire(result.getError());
  co_return std::move(reply);
}

boost::asio::awaitable<HttpReply> HttpApi::Handle(HttpRequest request) {
  const HttpTarget target = SplitTarget(request.target);
  const std::string& path = target.path;
  const std::string& query = target.query;
  if (path.rfind("/api/", 0) == 0) {
    auto api = Api(request, path, query);
    co_return co_await std::move(api);
  }
  if (path == "/metrics" && metrics_ != nullptr && request.method == http::verb::get) {
    auto metrics = Metrics(request);
    co_return co_await std::move(metrics);
  }
  if (request.method != http::verb::get && request.method != http::verb::head) {
    co_return ErrorReply("not_found", "no such endpoint: " +
                                          std::string(http::to_string(request.method)) + " " +
                                          path);
  }
  std::string name;
  if (path == "/" || path == "/index.html") name = "index.html";
  if (path.rfind("/console/", 0) == 0) name = path.substr(9);
  if (const ConsoleAsset* asset = name.empty() ? nullptr : FindConsoleAsset(name)) {
    HttpReply reply;
    reply.content_type = std::string(asset->content_type);
    reply.body = std::string(asset->body);
    reply.headers.emplace_back("Cache-Control", "no-cache");
    co_return reply;
  }
  co_return ErrorReply("not_found", "no such page: " + path + " (the console is at /)");
}

boost::asio::awaitable<HttpReply> HttpApi::Login(const HttpRequest& request) {
  auto body = BodyObject(request.body);
  if (!body) co_return ErrorReply(body.error());
  auto token = StringField(body.value(), "token");
  if (!token) co_return ErrorReply(token.error());
  if (token.value().empty()) {
    co_return ErrorReply("invalid_argument", "\"token\" is required: paste your API token");
  }
  Message who = NewMessage();
  MethodOf(who).setWhoAmI();
  auto called = Call(token.value(), request, std::move(who), kCallTimeout);
  auto reply = co_await std::move(called);
  if (!reply) co_return ErrorReply(reply.error());
  auto principal = reply.value()->getRoot<wire::Response>().asReader().getResult().getPrincipal();
  auto [id, session] = sessions_.Create(std::move(token).value());
  HttpReply out = JsonReply(
      json::object{{"principal", PrincipalJson(principal)}, {"csrf_token", session.csrf}});
  std::string cookie = std::string(kCookie) + "=" + id +
                       "; HttpOnly; SameSite=Strict; Path=/; Max-Age=" +
                       std::to_string(sessions_.lifetime().count());
  if (secure_cookies_) cookie += "; Secure";
  out.headers.emplace_back("Set-Cookie", std::move(cookie));
  co_return out;
}

boost::asio::awaitable<HttpReply> HttpApi::SessionInfo(const Caller& caller,
                                                       const HttpRequest& request) {
  if (caller.session_id.empty()) {
    co_return ErrorReply("unauthenticated", "no console session: log in with your API token");
  }
  Message who = NewMessage();
  MethodOf(who).setWhoAmI();
  auto called = Call(caller.token, request, std::move(who), kCallTimeout);
  auto reply = co_await std::move(called);
  if (!reply) co_return ErrorReply(reply.error());
  auto principal = reply.value()->getRoot<wire::Response>().asReader().getResult().getPrincipal();
  co_return JsonReply(
      json::object{{"principal", PrincipalJson(principal)}, {"csrf_token", caller.csrf}});
}

boost::asio::awaitable<HttpReply> HttpApi::Inbox(const Caller& caller, const HttpRequest& request) {
  // The runs with an operation waiting for a person (at most 500), their details, and the
  // contracts for the cards and the evidence.
  Message list = NewMessage();
  auto filter = MethodOf(list).initListWorkflows();
  filter.setNeedsHuman(true);
  filter.setLimit(500);
  auto listed = Call(caller.token, request, std::move(list), kCallTimeout);
  auto runs = co_await std::move(listed);
  if (!runs) co_return ErrorReply(runs.error());
  Message contracts_request = NewMessage();
  MethodOf(contracts_request).setListContracts();
  auto contracts_called = Call(caller.token, request, std::move(contracts_request), kCallTimeout);
  auto contracts = co_await std::move(contracts_called);
  if (!contracts) co_return ErrorReply(contracts.error());
  std::map<std::string, std::pair<std::string, std::string>> card_of;  // tool -> card, evidence
  for (auto c : contracts.value()->getRoot<wire::Response>().asReader().getResult().getContracts()) {
    std::string evidence;
    boost::system::error_code ec;
    json::value parsed = json::parse(Str(c.getContractJson()), ec);
    if (!ec) {
      if (auto contract = ContractFromJson(parsed)) evidence = contract.value().evidence;
    }
    card_of[Str(c.getName())] = {Str(c.getCard()), evidence};
  }
  json::array items;
  auto page = runs.value()->getRoot<wire::Response>().asReader().getResult().getWorkflowPage();
  for (auto summary : page.getWorkflows()) {
    Message describe = NewMessage();
    MethodOf(describe).initDescribeWorkflow().setWorkflowId(summary.getWorkflowId());
    auto described_call = Call(caller.token, request, std::move(describe), kCallTimeout);
    auto described = co_await std::move(described_call);
    if (!described) continue;  // gone or not readable since the list: skip it
    auto detail = described.value()->getRoot<wire::Response>().asReader().getResult().getWorkflow();
    for (auto op : detail.getOperations()) {
      const std::string state = Str(op.getState());
      if (state != "awaiting_approval" && state != "needs_human") continue;
      const auto& [card, evidence] = card_of[Str(op.getTool())];
      items.push_back(json::object{{"workflow_id", Str(summary.getWorkflowId())},
                                   {"run_id", Str(summary.getRunId())},
                                   {"workflow_type", Str(summary.getWorkflowType())},
                                   {"started_by", Str(detail.getStartedBy())},
                                   {"updated_at_us", summary.getUpdatedAtUs()},
                                   {"operation", OperationJson(op)},
                                   {"side_effect", Str(op.getSideEffect())},
                                   {"card", card},
                                   {"evidence", evidence}});
    }
  }
  std::sort(items.begin(), items.end(), [](const json::value& a, const json::value& b) {
    return a.at("updated_at_us").to_number<std::int64_t>() <
           b.at("updated_at_us").to_number<std::int64_t>();
  });
  co_return JsonReply(json::object{{"items", std::move(items)}});
}

boost::asio::awaitable<HttpReply> HttpApi::CheckMcp(const Caller& caller,
                                                    const HttpRequest& request) {
  auto body = BodyObject(request.body);
  if (!body) co_return ErrorReply(body.error());
  Message contracts_request = NewMessage();
  MethodOf(contracts_request).setListContracts();
  auto called = Call(caller.token, request, std::move(contracts_request), kCallTimeout);
  auto contracts = co_await std::move(called);
  if (!contracts) co_return ErrorReply(contracts.error());
  ContractRegistry declared;
  for (auto c : contracts.value()->getRoot<wire::Response>().asReader().getResult().getContracts()) {
    boost::system::error_code ec;
    json::value parsed = json::parse(Str(c.getContractJson()), ec);
    if (ec) continue;
    auto contract = ContractFromJson(parsed);
    if (contract) (void)declared.Register(std::move(contract).value());
  }
  auto report = AnalyzeMcpCatalog(json::value(std::move(body).value()), declared);
  if (!report) co_return ErrorReply(report.error());
  co_return JsonReply(McpReportJson(report.value()));
}

boost::asio::awaitable<HttpReply> HttpApi::Api(HttpRequest& request, const std::string& path,
                                               const std::string& query_text) {
  const std::vector<std::string> all = PathSegments(path);
  if (all.size() < 2 || all[1] != "v1") {
    co_return ErrorReply("not_found", "no such endpoint: " + path + " (the API is under /api/v1/)");
  }
  const std::vector<std::string> at(all.begin() + 2, all.end());
  const http::verb verb = request.method;
  const HttpRoute* route = MatchRoute(verb, at);
  const HttpOwnRoute own = route == nullptr ? HttpOwnRoute::kNone : route->own;
  // A browser sends a cross-site form (text/plain, form-urlencoded) without asking; a JSON
  // body makes it ask first (a CORS preflight, which this server never grants). So every POST
  // must say JSON, the login included (no login CSRF).
  if (verb == http::verb::post && request.content_type.rfind("application/json", 0) != 0) {
    co_return ErrorReply("invalid_argument",
                         "a POST body must be JSON: send Content-Type: application/json");
  }
  if (own == HttpOwnRoute::kLogin) {
    auto login = Login(request);
    co_return co_await std::move(login);
  }
  const Caller caller = CallerOf(request);
  // A state change must prove it does not ride a browser's ambient credentials: a bearer
  // token, or a console session with its CSRF token. Without either (a request that relies on
  // --insecure-dev's tokenless access, say) it is refused like a forged one.
  if (IsStateChange(verb) && !caller.bearer &&
      (caller.session_id.empty() || !SameSecret(request.csrf, caller.csrf))) {
    co_return ErrorReply("csrf_missing",
                         "this request changes state and came with the console's cookie but "
                         "without its X-CSRF-Token header; reload the console");
  }
  if (own != HttpOwnRoute::kNone) {
    auto served = Own(own, caller, request);
    co_return co_await std::move(served);
  }
  // The rest map one to one onto a protocol method.
  Result<json::object> body = json::object();
  if (IsStateChange(verb)) body = BodyObject(request.body);
  if (!body) co_return ErrorReply(body.error());
  if (route == nullptr) {
    co_return ErrorReply("not_found", "no such endpoint: " + std::string(http::to_string(verb)) +
                                          " " + path + " (docs/HTTP_API.md lists them)");
  }
  const auto query = ParseQuery(query_text);
  RouteInput in{at, query, body.value(), kCallTimeout};
  Message message = NewMessage();
  route->build(in, MethodOf(message));
  if (!in.bad) co_return ErrorReply(in.bad.error());
  auto called = Call(caller.token, request, std::move(message), in.timeout);
  auto reply = co_await std::move(called);
  if (!reply) co_return ErrorReply(reply.error());
  auto out = route->reply(reply.value()->getRoot<wire::Response>().asReader().getResult());
  if (!out) co_return ErrorReply(out.error());
  co_return JsonReply(std::move(out).value());
}

// Who is calling: a bearer token, else the console session's token, else nobody (the Service
// refuses it as unauthenticated, unless the server runs with --insecure-dev).
HttpApi::Caller HttpApi::CallerOf(const HttpRequest& request) {
  Caller caller;
  constexpr std::string_view kBearer = "Bearer ";
  if (request.authorization.rfind(kBearer, 0) == 0) {
    caller.token = request.authorization.substr(kBearer.size());
    caller.bearer = true;
  } else if (const std::string id = CookieValue(request.cookie, kCookie); !id.empty()) {
    if (auto session = sessions_.Find(id)) {
      caller.token = session->token;
      caller.session_id = id;
      caller.csrf = session->csrf;
    }
  }
  return caller;
}

boost::asio::awaitable<HttpReply> HttpApi::Own(HttpOwnRoute own, const Caller& caller,
                                               const HttpRequest& request) {
  switch (own) {
    case HttpOwnRoute::kSessionInfo: {
      auto info = SessionInfo(caller, request);
      co_return co_await std::move(info);
    }
    case HttpOwnRoute::kLogout: {
      if (!caller.session_id.empty()) sessions_.Remove(caller.session_id);
      HttpReply reply = JsonReply(json::object());
      reply.headers.emplace_back("Set-Cookie", std::string(kCookie) +
                                                   "=; HttpOnly; SameSite=Strict; Path=/; "
                                                   "Max-Age=0");
      co_return reply;
    }
    case HttpOwnRoute::kInbox: {
      auto inbox = Inbox(caller, request);
      co_return co_await std::move(inbox);
    }
    case HttpOwnRoute::kCheckMcp: {
      auto check = CheckMcp(caller, request);
      co_return co_await std::move(check);
    }
    case HttpOwnRoute::kLogin:  // before the caller is known: Api serves it
    case HttpOwnRoute::kNone:
      break;
  }
  co_return ErrorReply("internal", "the route table names a route HttpApi does not serve");
}

}  // namespace reckon::api
