#include "samples/agent/scripted_model.h"

#include <algorithm>

namespace reckon::agent {

boost::asio::awaitable<Result<ChatReply>> ScriptedModel::Complete(ChatRequest request) {
  ++calls_;
  if (script_.empty()) co_return Err(Errc::kInvalidArgument, "the model's script is empty");
  const auto turn = static_cast<std::size_t>(
      std::count_if(request.messages.begin(), request.messages.end(),
                    [](const ChatMessage& m) { return m.role == "assistant"; }));
  co_return ChatReply{script_[std::min(turn, script_.size() - 1)], "scripted", "stop"};
}

}  // namespace reckon::agent
