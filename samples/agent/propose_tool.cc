#include "samples/agent/propose_tool.h"

#include <boost/json.hpp>

namespace reckon::agent {
namespace json = boost::json;
using namespace std::chrono_literals;

ToolContract ProposeContract() {
  ToolContract c;
  c.name = kProposeTool;
  c.description = "Ask the language model for the agent's next plan fragment.";
  c.side_effect = SideEffect::kReadOnly;
  c.attempt_timeout = 60s;
  c.retry = {.max_attempts = 4, .backoff = {.initial = 500ms, .multiplier = 2.0, .max = 10s}};
  c.input_schema = json::parse(R"({
    "type": "object",
    "required": ["messages"],
    "properties": {"messages": {"type": "array", "minItems": 1, "items": {
      "type": "object", "required": ["role", "content"],
      "properties": {"role": {"enum": ["system", "user", "assistant"]},
                     "content": {"type": "string"}},
      "additionalProperties": false}}},
    "additionalProperties": false
  })");
  c.output_schema = json::parse(R"({"type": "object", "properties": {
    "content": {"type": "string"}, "model": {"type": "string"},
    "finish_reason": {"type": "string"}}})");
  c.evidence = "The model's reply, journaled as the step's result.";
  return c;
}

Tool ProposeTool(ChatModel& model) {
  ChatModel* m = &model;
  auto execute = [m](json::value input, ToolCallContext context) -> boost::asio::awaitable<AttemptOutcome> {
    ChatRequest request;
    for (const json::value& message : input.at("messages").as_array()) {
      request.messages.push_back(ChatMessage{std::string(message.at("role").as_string()),
                                             std::string(message.at("content").as_string())});
    }
    request.deadline = context.deadline;
    auto call = m->Complete(std::move(request));
    auto reply = co_await std::move(call);
    if (!reply) {
      const Error& e = reply.error();
      const bool retry = e.action() == ErrorAction::kRetry;
      co_return ToolFailed(retry ? FailureKind::kRetryable : FailureKind::kDefinitive,
                           retry ? "model_unavailable" : "model_refused", e.message());
    }
    co_return ToolSucceeded(json::object{{"content", reply.value().content},
                                         {"model", reply.value().model},
                                         {"finish_reason", reply.value().finish_reason}});
  };
  return Tool{ProposeContract(), std::move(execute), {}};
}

}  // namespace reckon::agent
