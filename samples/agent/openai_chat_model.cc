#include "samples/agent/openai_chat_model.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <utility>

#include "reckon/tools/http/http_client.h"

namespace reckon::agent {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kPath = "/v1/chat/completions";
constexpr std::size_t kMaxQuoted = 200;

// At most kMaxQuoted characters of `text`, one line, with the key (if any) redacted first so
// that truncation cannot leave part of it behind.
std::string Quote(std::string_view text, std::string_view api_key) {
  std::string out(text);
  if (!api_key.empty()) {
    for (std::size_t at = out.find(api_key); at != std::string::npos; at = out.find(api_key, at)) {
      out.replace(at, api_key.size(), "<redacted>");
    }
  }
  bool truncated = out.size() > kMaxQuoted;
  if (truncated) out.resize(kMaxQuoted);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
  return "\"" + out + (truncated ? "...\"" : "\"");
}

// What an error reply says: OpenAI's {"error": {"message": ...}} if present, else the body.
std::string ErrorDetail(std::string_view body, std::string_view api_key) {
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  if (!ec && value.is_object()) {
    const json::value* error = value.as_object().if_contains("error");
    if (error != nullptr && error->is_object()) {
      const json::value* message = error->as_object().if_contains("message");
      if (message != nullptr && message->is_string()) {
        return Quote(message->as_string(), api_key);
      }
    }
  }
  return body.empty() ? std::string("(empty body)") : Quote(body, api_key);
}

Error Malformed(std::string_view what, std::string_view body, std::string_view api_key) {
  return Err(Errc::kInvalidArgument, "the model endpoint's reply is not a chat completion: " +
                                         std::string(what) + "; body " + Quote(body, api_key));
}

// HttpRequest's failure, seen from a call that has no side effect: anything but an invalid
// call may be retried, whether or not the request was sent. The client's leading tag
// ("http_outcome_unknown", ...) is dropped so that HttpFailureOf() does not read a tool-level
// "outcome unknown" into a model call; the reason token and the detail stay.
Error FromHttpFailure(const Error& error, Clock::time_point deadline) {
  std::string_view detail = error.message();
  if (tools::HttpFailureOf(error) && detail.starts_with("http_")) {
    detail.remove_prefix(std::min(detail.size(), detail.find(' ') + 1));
  }
  if (tools::HttpFailureOf(error) == tools::HttpFailure::kInvalidCall) {
    return Err(Errc::kInvalidArgument, "cannot call the model endpoint: " + std::string(detail));
  }
  bool deadline_passed = error.code() == Errc::kDeadlineExceeded ||
                         detail.starts_with("deadline:") || Clock::now() >= deadline;
  Errc code = deadline_passed ? Errc::kDeadlineExceeded : Errc::kUnavailable;
  return Err(code,
             "the model endpoint did not answer (retryable: a chat completion has no "
             "side effect): " +
                 std::string(detail));
}

boost::asio::awaitable<Result<ChatReply>> CompleteWith(OpenAiChatConfig config,
                                                       ChatRequest request) {
  if (config.model.empty()) {
    co_return Err(Errc::kInvalidArgument, "OpenAiChatConfig.model is empty");
  }
  Clock::time_point deadline = request.deadline;
  if (deadline == Clock::time_point{}) deadline = Clock::now() + config.default_timeout;

  tools::HttpCall call;
  call.method = "POST";
  call.host = config.endpoint.host;
  call.port = config.endpoint.port;
  call.target = std::string(kPath);
  call.headers.push_back({"Content-Type", "application/json"});
  call.headers.push_back({"Accept", "application/json"});
  if (!config.api_key.empty()) {
    call.headers.push_back({"Authorization", "Bearer " + config.api_key});
  }
  call.body = ChatRequestBody(config, request.messages);
  call.deadline = deadline;

  Result<tools::HttpResponse> response = co_await tools::HttpRequest(std::move(call));
  if (!response) co_return FromHttpFailure(response.error(), deadline);
  co_return ParseChatResponse(response.value().status, response.value().body, config.api_key);
}

}  // namespace

std::string ChatRequestBody(const OpenAiChatConfig& config,
                            const std::vector<ChatMessage>& messages) {
  json::array list;
  list.reserve(messages.size());
  for (const ChatMessage& message : messages) {
    list.push_back(json::object{{"role", message.role}, {"content", message.content}});
  }
  json::object body{
      {"model", config.model}, {"messages", std::move(list)}, {"temperature", config.temperature}};
  return json::serialize(body);
}

Result<ChatReply> ParseChatResponse(int status, std::string_view body, std::string_view api_key) {
  if (status == 408 || status == 429 || (status >= 500 && status <= 599)) {
    return Err(Errc::kUnavailable, "the model endpoint answered " + std::to_string(status) +
                                       " (retryable): " + ErrorDetail(body, api_key));
  }
  if (status < 200 || status > 299) {
    return Err(Errc::kInvalidArgument, "the model endpoint refused the request with " +
                                           std::to_string(status) + ": " +
                                           ErrorDetail(body, api_key));
  }
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  if (ec) return Malformed("not JSON (" + ec.message() + ")", body, api_key);
  if (!value.is_object()) return Malformed("not a JSON object", body, api_key);
  const json::object& root = value.as_object();
  const json::value* choices = root.if_contains("choices");
  if (choices == nullptr || !choices->is_array()) {
    return Malformed("no \"choices\" array", body, api_key);
  }
  if (choices->as_array().empty()) return Malformed("\"choices\" is empty", body, api_key);
  const json::value& first = choices->as_array().front();
  const json::value* message =
      first.is_object() ? first.as_object().if_contains("message") : nullptr;
  if (message == nullptr || !message->is_object()) {
    return Malformed("no choices[0].message object", body, api_key);
  }
  const json::value* content = message->as_object().if_contains("content");
  if (content == nullptr || !content->is_string()) {
    return Malformed("choices[0].message.content is not a string", body, api_key);
  }
  ChatReply reply;
  reply.content = std::string(content->as_string());
  const json::value* finish = first.as_object().if_contains("finish_reason");
  if (finish != nullptr && finish->is_string()) reply.finish_reason = finish->as_string();
  const json::value* model = root.if_contains("model");
  if (model != nullptr && model->is_string()) reply.model = model->as_string();
  return reply;
}

boost::asio::awaitable<Result<ChatReply>> OpenAiChatModel::Complete(ChatRequest request) {
  return CompleteWith(config_, std::move(request));
}

}  // namespace reckon::agent
