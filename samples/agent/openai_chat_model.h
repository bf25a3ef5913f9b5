// OpenAiChatModel: a ChatModel that POSTs to an OpenAI-compatible endpoint,
// `http://127.0.0.1:PORT/v1/chat/completions`, through tools::HttpRequest.
//
// Plain HTTP to 127.0.0.1 only (samples::HttpEndpoint cannot name anything else, nor a base
// path): no TLS. To reach a hosted model, run a TLS-terminating proxy on 127.0.0.1 and point
// the endpoint at it.
//
// Request:  {"model": config.model, "messages": [{"role", "content"}, ...],
//            "temperature": config.temperature}, with "Authorization: Bearer <api_key>" only
//            when api_key is non-empty. The key is never logged nor put in an error message
//            (it is redacted from any quoted response text too).
// Reply:    choices[0].message.content (a string), choices[0].finish_reason ("" if absent or
//           null) and "model" ("" if absent).
// Errors (as chat_model.h promises; a model call has no side effect, so a lost reply is
// retryable here, unlike a tool's write):
//   kDeadlineExceeded  request.deadline passed (before sending or while waiting);
//   kUnavailable       connection refused or lost, cancelled, 408, 429, any 5xx;
//   kInvalidArgument   any other non-2xx status (400, 401, 403, 404, 422, 3xx, ...), or a
//                      2xx body that is not JSON or lacks choices[0].message.content; the
//                      message names the status or the missing field and quotes at most the
//                      first 200 characters of the body.
// A default-constructed request.deadline (the epoch) means "unset": config.default_timeout
// from the start of the call applies instead; time_point::max() means no deadline at all.
//
// Thread-safety: the model is immutable after construction; concurrent Complete calls are
// independent (each opens its own connection).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "samples/agent/chat_model.h"
#include "samples/common/http_url.h"

namespace reckon::agent {

struct OpenAiChatConfig {
  samples::HttpEndpoint endpoint;  // e.g. ParseHttpUrl("http://127.0.0.1:8080")
  std::string model;               // sent as "model"; must be non-empty
  std::string api_key;             // optional; sent as a Bearer token when non-empty
  double temperature = 0;
  std::chrono::milliseconds default_timeout = std::chrono::seconds(120);
};

class OpenAiChatModel final : public ChatModel {
 public:
  explicit OpenAiChatModel(OpenAiChatConfig config) : config_(std::move(config)) {}

  // Sends the conversation and returns the assistant's message. The coroutine holds a copy of
  // the config, so the model object may be destroyed while a call is in flight.
  boost::asio::awaitable<Result<ChatReply>> Complete(ChatRequest request) override;

 private:
  OpenAiChatConfig config_;
};

// The parts of Complete, exposed for tests.
// The JSON request body for `messages` under `config` (no key in it).
std::string ChatRequestBody(const OpenAiChatConfig& config,
                            const std::vector<ChatMessage>& messages);
// Maps a response (any status) to a reply or to the error described above. `api_key` is
// redacted from any quoted body text.
Result<ChatReply> ParseChatResponse(int status, std::string_view body, std::string_view api_key);

}  // namespace reckon::agent
