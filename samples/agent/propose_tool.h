// The model as a tool: "model.propose" sends the agent's conversation to a ChatModel and
// returns its reply. Making the model call a tool is what makes the agent loop durable: the
// reply is journaled like any tool result, so replay after a crash reads it from the journal
// and never asks the model again. The call has no side effect (read_only): a lost reply is
// simply asked for again, under the same operation id.
//
//   input  {"messages": [{"role": "system"|"user"|"assistant", "content": "..."}, ...]}
//   output {"content": "...", "model": "...", "finish_reason": "..."}
#pragma once

#include "samples/agent/chat_model.h"
#include "reckon/worker/tool.h"

namespace reckon::agent {

inline constexpr char kProposeTool[] = "model.propose";

ToolContract ProposeContract();

// `model` must outlive the tool registry.
Tool ProposeTool(ChatModel& model);

}  // namespace reckon::agent
