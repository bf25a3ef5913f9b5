// ChatModel: the language model behind the agent loop, as the loop sees it. One call sends the
// conversation so far and returns the model's next message.
//
// Two implementations: ScriptedModel (deterministic, for the sample and the tests) and
// OpenAiChatModel (HTTP to an OpenAI-compatible /v1/chat/completions endpoint). The agent loop
// calls a model only through a tool ("model.propose", read_only), so every reply is journaled
// and replay never asks the model again.
//
// Errors say what the loop may conclude, as a tool's failure kinds do:
//   Errc::kUnavailable / kDeadlineExceeded  the request may be retried (the model call has no
//                                           side effect);
//   Errc::kInvalidArgument                  the endpoint refused the request or answered
//                                           something that is not a chat completion; retrying
//                                           unchanged will not help.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::agent {

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  std::chrono::steady_clock::time_point deadline;
};

struct ChatReply {
  std::string content;        // the assistant message
  std::string model;          // as the endpoint names it
  std::string finish_reason;  // "stop", "length", ...
};

class ChatModel {
 public:
  virtual ~ChatModel() = default;
  virtual boost::asio::awaitable<Result<ChatReply>> Complete(ChatRequest request) = 0;
};

}  // namespace reckon::agent
