#include "reckon/protocol/failure_kind_wire.h"
#include "reckon/api/server/http/http_api.h"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <map>

#include "reckon/protocol/client.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/protocol/wire_json.h"
#include "reckon/api/server/http/console_assets.h"
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
constexpr std::uint32_t kDefaultWatchMs = 20000, kMaxWatchMs = 60000;
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

// A string member of `body`; "" when absent. Errc::kInvalidArgument naming it if not a string.
Result<std::string> StringField(const json::object& body, std::string_view name) {
  const json::value* value = body.if_contains(name);
  if (value == nullptr || value->is_null()) return std::string();
  if (!value->is_string()) {
    return Err(Errc::kInvalidArgument, "\"" + std::string(name) + "\" must be a string");
  }
  return std::string(value->as_string());
}

// A JSON member serialized to text for the wire; "" when absent.
std::string JsonField(const json::object& body, std::string_view name) {
  const json::value* value = body.if_contains(name);
  return value == nullptr ? "" : json::serialize(*value);
}

json::object DetailJson(wire::WorkflowDetail::Reader d) {
  json::array operations;
  for (auto o : d.getOperations()) operations.push_back(OperationJson(o));
  json::array children;
  for (auto c : d.getChildren()) {
    children.push_back(json::object{{"step_id", Str(c.getStepId())},
                                    {"workflow_id", Str(c.getWorkflowId())},
                                    {"workflow_type", Str(c.getWorkflowType())},
                                    {"policy", Str(c.getPolicy())},
                                    {"status", Str(c.getStatus())}});
  }
  json::object out{{"summary", SummaryJson(d.getSummary())},
                   {"input", ParsedJsonField(Str(d.getInputJson()))},
                   {"result", ParsedJsonField(Str(d.getResultJson()))},
                   {"started_by", Str(d.getStartedBy())},
                   {"operations", std::move(operations)},
                   {"children", std::move(children)}};
  if (d.hasParent() && d.getParent().getWorkflowId().size() > 0) {
    out["parent"] = json::object{{"workflow_id", Str(d.getParent().getWorkflowId())},
                                 {"run_id", Str(d.getParent().getRunId())},
                                 {"close_policy", Str(d.getParentClosePolicy())}};
  }
  if (d.getCancelRequested()) {
    // Cancelling: the code was told and cleans up before it closes the run.
    out["cancel_requested"] = json::object{{"reason", Str(d.getCancelReason())}};
  }
  return out;
}

json::object PrincipalJson(wire::PrincipalInfo::Reader p) {
  json::array roles, permissions, tools, types;
  const std::string role_text = Str(p.getRole());
  auto parsed = auth::ParseRoles(role_text);
  if (parsed) {
    for (auth::Role role : parsed.value()) roles.emplace_back(auth::RoleName(role));
    for (int i = 0; i <= static_cast<int>(auth::Permission::kWork); ++i) {
      const auto permission = static_cast<auth::Permission>(i);
      if (std::any_of(parsed.value().begin(), parsed.value().end(),
                      [&](auth::Role role) { return auth::RoleGrants(role, permission); })) {
        permissions.emplace_back(auth::PermissionName(permission));
      }
    }
  }
  for (auto t : p.getTools()) tools.emplace_back(Str(t));
  for (auto t : p.getWorkflowTypes()) types.emplace_back(Str(t));
  return json::object{{"name", Str(p.getName())},       {"roles", std::move(roles)},
                      {"permissions", std::move(permissions)}, {"tools", std::move(tools)},
                      {"workflow_types", std::move(types)},
                      {"expires_at_us", p.getExpiresAtUs()}};
}

json::array EventsJson(capnp::List<wire::HistoryEvent>::Reader events, Result<void>& status) {
  json::array out;
  for (auto e : events) {
    auto fields = EventFieldsJson(e.getPayload());
    if (!fields) {
      status = fields.error();
      return out;
    }
    out.push_back(json::object{{"seq", e.getSeq()},
                               {"recorded_at_us", e.getRecordedAtUs()},
                               {"type", Str(e.getType())},
                               {"event", std::move(fields).value()}});
  }
  return out;
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
  auto is = [&](std::initializer_list<std::string_view> shape, http::verb want) {
    if (verb != want || shape.size() != at.size()) return false;
    std::size_t i = 0;
    for (std::string_view part : shape) {
      if (part != "*" && part != at[i]) return false;
      ++i;
    }
    return true;
  };
  // A browser sends a cross-site form (text/plain, form-urlencoded) without asking; a JSON
  // body makes it ask first (a CORS preflight, which this server never grants). So every POST
  // must say JSON, the login included (no login CSRF).
  if (verb == http::verb::post && request.content_type.rfind("application/json", 0) != 0) {
    co_return ErrorReply("invalid_argument",
                         "a POST body must be JSON: send Content-Type: application/json");
  }
  if (is({"session"}, http::verb::post)) {
    auto login = Login(request);
    co_return co_await std::move(login);
  }

  // Who is calling: a bearer token, else the console session's token, else nobody (the
  // Service refuses it as unauthenticated, unless the server runs with --insecure-dev).
  Caller caller;
  constexpr std::string_view kBearer = "Bearer ";
  if (request.authorization.rfind(kBearer, 0) == 0) {
    caller.token = request.authorization.substr(kBearer.size());
  } else if (const std::string id = CookieValue(request.cookie, kCookie); !id.empty()) {
    if (auto session = sessions_.Find(id)) {
      caller.token = session->token;
      caller.session_id = id;
      caller.csrf = session->csrf;
    }
  }
  // A state change must prove it does not ride a browser's ambient credentials: a bearer
  // token, or a console session with its CSRF token. Without either (a request that relies on
  // --insecure-dev's tokenless access, say) it is refused like a forged one.
  const bool bearer = request.authorization.rfind(kBearer, 0) == 0;
  if (IsStateChange(verb) && !bearer &&
      (caller.session_id.empty() || !SameSecret(request.csrf, caller.csrf))) {
    co_return ErrorReply("csrf_missing",
                         "this request changes state and came with the console's cookie but "
                         "without its X-CSRF-Token header; reload the console");
  }
  if (at == std::vector<std::string>{"session"}) {
    if (verb == http::verb::get) {
      auto info = SessionInfo(caller, request);
      co_return co_await std::move(info);
    }
    if (verb == http::verb::delete_) {
      if (!caller.session_id.empty()) sessions_.Remove(caller.session_id);
      HttpReply reply = JsonReply(json::object());
      reply.headers.emplace_back("Set-Cookie", std::string(kCookie) +
                                                   "=; HttpOnly; SameSite=Strict; Path=/; "
                                                   "Max-Age=0");
      co_return reply;
    }
  }
  if (is({"inbox"}, http::verb::get)) {
    auto inbox = Inbox(caller, request);
    co_return co_await std::move(inbox);
  }
  if (is({"contracts", "check-mcp"}, http::verb::post)) {
    auto check = CheckMcp(caller, request);
    co_return co_await std::move(check);
  }

  // The rest map one to one onto a protocol method.
  const auto query = ParseQuery(query_text);
  auto param = [&](const std::string& name) {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  };
  Result<json::object> body = json::object();
  if (IsStateChange(verb)) body = BodyObject(request.body);
  if (!body) co_return ErrorReply(body.error());
  Result<void> bad = Ok();
  Message message = NewMessage();
  Method::Builder method = MethodOf(message);
  std::chrono::milliseconds timeout = kCallTimeout;
  // How to turn the reply into JSON.
  enum class Shape {
    kNone, kWhoAmI, kPage, kDetail, kEvents, kTrace, kStarted, kContracts, kQuery, kUpdate
  };
  Shape shape = Shape::kNone;
  auto text = [&](std::string_view name) {
    auto value = StringField(body.value(), name);
    if (!value) {
      bad = value.error();
      return std::string();
    }
    return std::move(value).value();
  };
  if (is({"whoami"}, http::verb::get)) {
    method.setWhoAmI();
    shape = Shape::kWhoAmI;
  } else if (is({"runs"}, http::verb::get)) {
    auto list = method.initListWorkflows();
    list.setStatus(Text(param("status")));
    list.setWorkflowType(Text(param("type")));
    list.setTool(Text(param("tool")));
    list.setIdPrefix(Text(param("id_prefix")));
    const std::string needs = param("needs_human");
    list.setNeedsHuman(needs == "1" || needs == "true");
    list.setLimit(std::max<std::uint32_t>(1, NumberParam(query, "limit", 50, 500, bad)));
    list.setCursor(Text(param("after")));
    shape = Shape::kPage;
  } else if (is({"runs"}, http::verb::post)) {
    auto start = method.initStartWorkflow();
    start.setWorkflowId(Text(text("workflow_id")));
    start.setWorkflowType(Text(text("workflow_type")));
    start.setInputJson(Text(JsonField(body.value(), "input")));
    shape = Shape::kStarted;
  } else if (is({"runs", "*"}, http::verb::get)) {
    auto key = method.initDescribeWorkflow();
    key.setWorkflowId(Text(at[1]));
    key.setRunId(Text(param("run_id")));  // an earlier run of a chain; empty: the newest
    shape = Shape::kDetail;
  } else if (is({"runs", "*", "history"}, http::verb::get)) {
    auto key = method.initGetHistory();
    key.setWorkflowId(Text(at[1]));
    key.setRunId(Text(param("run_id")));
    shape = Shape::kEvents;
  } else if (is({"runs", "*", "trace"}, http::verb::get)) {
    auto key = method.initGetTrace();
    key.setWorkflowId(Text(at[1]));
    key.setRunId(Text(param("run_id")));
    shape = Shape::kTrace;
  } else if (is({"runs", "*", "watch"}, http::verb::get)) {
    auto watch = method.initWatchWorkflow();
    watch.setWorkflowId(Text(at[1]));
    const std::string after = param("after_seq");
    std::int64_t after_seq = 0;
    if (!after.empty()) {
      const auto [end, ec] = std::from_chars(after.data(), after.data() + after.size(), after_seq);
      if (ec != std::errc() || end != after.data() + after.size() || after_seq < 0) {
        bad = Err(Errc::kInvalidArgument, "after_seq must be a sequence number");
      }
    }
    watch.setAfterSeq(after_seq);
    const std::uint32_t wait = NumberParam(query, "wait_ms", kDefaultWatchMs, kMaxWatchMs, bad);
    watch.setWaitMs(wait);
    timeout = std::chrono::milliseconds(wait) + 5s;
    shape = Shape::kEvents;
  } else if (is({"runs", "*", "cancel"}, http::verb::post)) {
    auto cancel = method.initCancelWorkflow();
    cancel.setWorkflowId(Text(at[1]));
    cancel.setReason(Text(text("reason")));
  } else if (is({"runs", "*", "signal"}, http::verb::post)) {
    auto signal = method.initSignalWorkflow();
    signal.setWorkflowId(Text(at[1]));
    signal.setName(Text(text("name")));
    signal.setPayloadJson(Text(JsonField(body.value(), "payload")));
    signal.setRequestId(Text(text("request_id")));
  } else if (is({"operations", "*", "completion"}, http::verb::post) ||
             is({"runs", "*", "operations", "*", "completion"}, http::verb::post)) {
    // A provider's completion (a webhook, relayed): applied once per delivery id.
    auto complete = method.initCompleteOperation();
    const bool with_run = at[0] == "runs";
    if (with_run) complete.setWorkflowId(Text(at[1]));
    complete.setOperationId(Text(at[with_run ? 3 : 1]));
    complete.setDeliveryId(Text(text("delivery_id")));
    const std::string status = text("status");
    if (status != "succeeded" && status != "failed" && bad) {
      bad = Err(Errc::kInvalidArgument,
                "\"status\" must be \"succeeded\" or \"failed\": what the provider reports of "
                "the operation");
    }
    complete.setSucceeded(status == "succeeded");
    complete.setOutputJson(Text(JsonField(body.value(), "output")));
    complete.setProviderRef(Text(text("provider_ref")));
    const std::string kind = text("kind");
    auto parsed_kind = ParseFailureKind(kind.empty() ? "definitive" : kind);
    if (!parsed_kind && bad) bad = parsed_kind.error().WithContext("\"kind\" (default definitive)");
    complete.setKind(FailureKindToWire(parsed_kind ? parsed_kind.value() : FailureKind::kDefinitive));
    complete.setCode(Text(text("code")));
    complete.setMessage(Text(text("message")));
  } else if (is({"runs", "*", "query"}, http::verb::post)) {
    // A reader's question to the run's code (ctx.OnQuery): nothing is journaled.
    auto ask = method.initQueryWorkflow();
    ask.setWorkflowId(Text(at[1]));
    ask.setName(Text(text("name")));
    ask.setArgsJson(Text(JsonField(body.value(), "args")));
    shape = Shape::kQuery;
  } else if (is({"runs", "*", "update"}, http::verb::post)) {
    // An instruction to the run's code (ctx.OnUpdate), answered once its handler returns.
    auto update = method.initUpdateWorkflow();
    update.setWorkflowId(Text(at[1]));
    update.setName(Text(text("name")));
    update.setArgsJson(Text(JsonField(body.value(), "args")));
    update.setUpdateId(Text(text("update_id")));
    timeout = std::chrono::milliseconds(NumberParam(query, "wait_ms", 60000, 600000, bad));
    shape = Shape::kUpdate;
  } else if (is({"runs", "*", "operations", "*", "approve"}, http::verb::post) ||
             is({"runs", "*", "operations", "*", "deny"}, http::verb::post)) {
    auto decide = method.initDecideApproval();
    decide.setWorkflowId(Text(at[1]));
    decide.setOperationId(Text(at[3]));
    const std::string hash = text("intent_hash");
    if (bad && hash.empty()) {
      bad = Err(Errc::kInvalidArgument,
                "\"intent_hash\" is required: the intent hash you were shown, so that you "
                "decide on exactly that intent");
    }
    decide.setExpectedIntentHash(Text(hash));
    decide.setGranted(at[4] == "approve");
    // The person's words: a note beside the principal; for a denial also its reason (the
    // journal's ApprovalDenied keeps a reason, not a note), unless "reason" is given.
    const std::string note = text("note");
    std::string reason = text("reason");
    if (reason.empty() && at[4] == "deny") reason = note;
    decide.setDecidedBy(Text(note));
    decide.setReason(Text(reason));
  } else if (is({"runs", "*", "operations", "*", "resolve"}, http::verb::post)) {
    auto resolve = method.initResolveOperation();
    resolve.setWorkflowId(Text(at[1]));
    resolve.setOperationId(Text(at[3]));
    const json::value* committed = body.value().if_contains("committed");
    if (committed == nullptr || !committed->is_bool()) {
      bad = Err(Errc::kInvalidArgument,
                "\"committed\" is required, true or false: did the effect happen?");
    } else {
      resolve.setCommitted(committed->as_bool());
    }
    resolve.setProviderRef(Text(text("provider_ref")));
    resolve.setNote(Text(text("note")));
  } else if (is({"contracts"}, http::verb::get)) {
    method.setListContracts();
    shape = Shape::kContracts;
  } else {
    co_return ErrorReply("not_found", "no such endpoint: " + std::string(http::to_string(verb)) +
                                          " " + path + " (docs/HTTP_API.md lists them)");
  }
  if (!bad) co_return ErrorReply(bad.error());

  auto called = Call(caller.token, request, std::move(message), timeout);
  auto reply = co_await std::move(called);
  if (!reply) co_return ErrorReply(reply.error());
  auto result = reply.value()->getRoot<wire::Response>().asReader().getResult();
  Result<void> decoded = Ok();
  json::value out;
  switch (shape) {
    case Shape::kNone:
      out = json::object();
      break;
    case Shape::kWhoAmI:
      out = PrincipalJson(result.getPrincipal());
      break;
    case Shape::kPage: {
      json::array runs;
      auto page = result.getWorkflowPage();
      for (auto s : page.getWorkflows()) runs.push_back(SummaryJson(s));
      const std::string next = Str(page.getNextCursor());
      out = json::object{{"runs", std::move(runs)},
                         {"next_cursor", next.empty() ? json::value(nullptr) : json::value(next)}};
      break;
    }
    case Shape::kDetail:
      out = DetailJson(result.getWorkflow());
      break;
    case Shape::kEvents:
      out = json::object{{"events", EventsJson(result.getHistory(), decoded)}};
      break;
    case Shape::kTrace: {
      json::array lines;
      for (auto line : result.getTrace()) lines.push_back(ParsedJsonField(Str(line)));
      out = json::object{{"lines", std::move(lines)}};
      break;
    }
    case Shape::kStarted:
      out = json::object{{"workflow_id", Str(result.getStarted().getWorkflowId())},
                         {"run_id", Str(result.getStarted().getRunId())}};
      break;
    case Shape::kContracts: {
      json::array contracts;
      for (auto c : result.getContracts()) {
        contracts.push_back(json::object{{"name", Str(c.getName())},
                                         {"hash", Str(c.getHash())},
                                         {"side_effect", Str(c.getSideEffect())},
                                         {"contract", ParsedJsonField(Str(c.getContractJson()))},
                                         {"card", Str(c.getCard())}});
      }
      out = json::object{{"contracts", std::move(contracts)}};
      break;
    }
    case Shape::kQuery:
      out = json::object{{"result", ParsedJsonField(Str(result.getQueryResult()))}};
      break;
    case Shape::kUpdate: {
      auto answer = result.getUpdateResult();
      json::object o{{"update_id", Str(answer.getUpdateId())}};
      if (answer.getErrorCode().size() == 0) {
        o["result"] = ParsedJsonField(Str(answer.getResultJson()));
      } else {
        // The handler's own failure: the update was accepted and answered.
        o["error"] = json::object{{"code", Str(answer.getErrorCode())},
                                  {"message", CleanMessage(Str(answer.getErrorMessage()))}};
      }
      out = std::move(o);
      break;
    }
  }
  if (!decoded) co_return ErrorReply(decoded.error());
  co_return JsonReply(std::move(out));
}

}  // namespace reckon::api
