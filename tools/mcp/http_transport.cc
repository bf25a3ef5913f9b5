#include "reckon/tools/mcp/http_transport.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "reckon/tools/http/http_client.h"

namespace reckon::tools {
namespace asio = boost::asio;
namespace json = boost::json;

Result<McpUrl> ParseMcpUrl(std::string_view url) {
  auto parsed = ParseHttpUrl(url);
  if (!parsed) return parsed.error().WithContext("MCP URL");
  // An MCP endpoint has no conventional port: it must be named (ParseHttpUrl checked its form).
  std::string_view authority = url.substr(std::string_view("http://").size());
  authority = authority.substr(0, authority.find_first_of("/?"));
  if (authority.back() == ']' || authority.rfind(':') == std::string_view::npos) {
    return Err(Errc::kInvalidArgument,
               "MCP URL '" + std::string(url) + "': give HOST:PORT, as http://127.0.0.1:8080/mcp");
  }
  return parsed;
}

// What one POST came to: a reply, or for a notification only whether it was accepted.
struct HttpTransport::Posted {
  McpReply reply;
  bool session_lost = false;  // 404 to a request that carried a session id
  std::string session_id;     // the Mcp-Session-Id the answer carried, if any
};

HttpTransport::HttpTransport(McpUrl url, std::string name)
    : url_(std::move(url)), name_(std::move(name)) {}

namespace {

// The JSON-RPC response to request `id` in a 200 answer's body, JSON or an event stream.
McpReply ResponseIn(const HttpResponse& response, std::int64_t id, const std::string& server) {
  const std::string content_type(response.Header("Content-Type").value_or(""));
  std::vector<std::string> messages;
  if (content_type.find("text/event-stream") != std::string::npos) {
    messages = SseEventData(response.body);
  } else {
    messages.push_back(response.body);
  }
  for (const std::string& text : messages) {
    boost::system::error_code ec;
    json::value message = json::parse(text, ec);
    if (ec) {
      return ReplyUnknown("bad_reply", "MCP server " + server +
                                           ": the answer is not JSON: " + text.substr(0, 200));
    }
    Result<JsonRpcMessage> kind = ClassifyMessage(message);
    if (!kind) {
      return ReplyUnknown("bad_reply", "MCP server " + server + ": " + kind.error().message());
    }
    if (kind.value().kind == JsonRpcMessage::Kind::kResponse && kind.value().id == id) {
      return ReplyFromResponse(message, server);
    }
  }
  return ReplyUnknown("bad_reply", "MCP server " + server +
                                       ": the answer holds no response to request " +
                                       std::to_string(id));
}

}  // namespace

asio::awaitable<HttpTransport::Posted> HttpTransport::Post(json::object message,
                                                           bool expect_response,
                                                           Deadline deadline) {
  const std::int64_t id = message.contains("id") ? message.at("id").as_int64() : 0;
  HttpCall call;
  call.method = "POST";
  call.host = url_.host;
  call.port = url_.port;
  call.target = url_.target;
  call.headers = {{"Content-Type", "application/json"},
                  {"Accept", "application/json, text/event-stream"}};
  if (!session_id_.empty()) call.headers.push_back({"Mcp-Session-Id", session_id_});
  if (!protocol_version_.empty()) call.headers.push_back({"MCP-Protocol-Version", protocol_version_});
  call.body = json::serialize(message);
  call.deadline = deadline;
  const bool had_session = !session_id_.empty();
  Result<HttpResponse> answer = co_await HttpRequest(std::move(call));
  Posted posted;
  if (!answer) {
    const std::optional<HttpFailure> failure = HttpFailureOf(answer.error());
    const std::string& text = answer.error().message();
    // "<tag> <reason>: ...": the reason token is the second word.
    const std::size_t space = text.find(' ');
    const std::size_t colon = text.find(':', space == std::string::npos ? 0 : space);
    std::string reason = space == std::string::npos || colon == std::string::npos
                             ? "http_failure"
                             : text.substr(space + 1, colon - space - 1);
    const std::string what = "MCP server " + name_ + ": " + text;
    posted.reply = failure == HttpFailure::kOutcomeUnknown ? ReplyUnknown(reason, what)
                                                           : ReplyNotSent(reason, what);
    co_return posted;
  }
  const HttpResponse& response = answer.value();
  if (auto session = response.Header("Mcp-Session-Id")) posted.session_id = std::string(*session);
  const int status = response.status;
  const std::string what = "MCP server " + name_ + " answered HTTP " + std::to_string(status);
  if (status == 404 && had_session) {
    posted.session_lost = true;
    posted.reply = ReplyNotSent("session_lost", what + " to session " + session_id_);
  } else if (status == 429) {
    posted.reply = ReplyNotSent("http_429", what + " (too many requests)");
  } else if (status >= 400 && status < 500) {
    posted.reply.status = McpReply::Status::kRefused;
    posted.reply.reason = "http_" + std::to_string(status);
    posted.reply.message = what + ": " + response.body.substr(0, 200);
  } else if (!expect_response) {
    posted.reply.status = status / 100 == 2 ? McpReply::Status::kResult : McpReply::Status::kUnknown;
    posted.reply.reason = "http_" + std::to_string(status);
  } else if (status == 200) {
    posted.reply = ResponseIn(response, id, name_);
  } else {
    posted.reply = ReplyUnknown("http_" + std::to_string(status),
                                what + " to a request: it may have acted on it");
  }
  co_return posted;
}

asio::awaitable<McpReply> HttpTransport::Initialize(Deadline deadline) {
  session_id_.clear();
  protocol_version_.clear();
  Posted init = co_await Post(JsonRpcRequest(next_id_++, "initialize", InitializeParams()),
                              /*expect_response=*/true, deadline);
  Result<std::string> version = init.reply.status == McpReply::Status::kResult
                                    ? CheckInitializeResult(init.reply.result)
                                    : Result<std::string>(Err(Errc::kUnavailable, init.reply.message));
  if (!version) {
    co_return ReplyNotSent(init.reply.reason == "cancelled" ? "cancelled" : "not_started",
                           "MCP server " + name_ + ": initialize failed: " +
                               version.error().message());
  }
  session_id_ = init.session_id;
  protocol_version_ = version.value();
  Posted initialized = co_await Post(JsonRpcNotification("notifications/initialized", {}),
                                     /*expect_response=*/false, deadline);
  if (initialized.reply.status != McpReply::Status::kResult) {
    co_return ReplyNotSent("not_started", "MCP server " + name_ +
                                              ": notifications/initialized was not accepted: " +
                                              initialized.reply.message);
  }
  initialized_ = true;
  ++sessions_;
  McpReply ok;
  ok.status = McpReply::Status::kResult;
  co_return ok;
}

asio::awaitable<McpReply> HttpTransport::Request(std::string method, json::object params,
                                                 Deadline deadline) {
  for (int round = 0;; ++round) {
    if (!initialized_) {
      McpReply ready = co_await Initialize(deadline);
      if (ready.status != McpReply::Status::kResult) co_return ready;
    }
    Posted posted = co_await Post(JsonRpcRequest(next_id_++, method, params),
                                  /*expect_response=*/true, deadline);
    if (posted.session_lost) {
      initialized_ = false;
      if (round == 0) continue;  // the request was not processed: once more, in a new session
    }
    co_return posted.reply;
  }
}

}  // namespace reckon::tools
