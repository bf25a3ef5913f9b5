// ScriptedModel: a deterministic ChatModel for the agent sample and its tests. Its reply to a
// conversation is the script's entry at the conversation's turn (the number of assistant
// messages already in it), so the same conversation always gets the same reply; past the end
// of the script it repeats the last entry.
#pragma once

#include <string>
#include <vector>

#include "samples/agent/chat_model.h"

namespace reckon::agent {

class ScriptedModel final : public ChatModel {
 public:
  explicit ScriptedModel(std::vector<std::string> script) : script_(std::move(script)) {}
  boost::asio::awaitable<Result<ChatReply>> Complete(ChatRequest request) override;
  int calls() const { return calls_; }

 private:
  std::vector<std::string> script_;
  int calls_ = 0;
};

}  // namespace reckon::agent
