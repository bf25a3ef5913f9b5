// The agent loop: a long-running workflow in which a language model proposes the next plan
// fragment from the results so far, and Reckon runs each fragment durably.
//
//   input  {"goal": "...", "max_rounds": 8}
//   round r: ask the model (tool "model.propose", step "r<r>-model") with the conversation;
//            its reply is {"steps": [...]} (plan steps, docs/PLANS.md) or {"done": true,
//            "summary": "..."}; the steps run as a plan fragment with step ids "r<r>-<id>",
//            and their results go back to the model as the next user message. A reply that is
//            not a valid fragment is answered with what is wrong, and the model tries again.
//   result {"summary", "rounds", "results": {"r<r>": {<step>: {status, output?, ...}}}}
//
// Every "rounds_per_run" rounds (default kRoundsPerRun) the run continues as new
// (ctx.ContinueAsNew): the next run of the same workflow id gets the input back with
// "carry": {"round", "messages", "results"}, the conversation so far, and goes on from the
// next round. A loop that works for weeks keeps a history of a few rounds, not of all of them.
//
// Asking and instructing it while it runs (docs/GUIDE.md, "Asking and instructing a running
// workflow"):
//   query "progress"  -> {"round", "max_rounds", "rounds_per_run", "messages", "instructions",
//                         "closing", "last_reply"}: where the loop is, read from its state.
//   update "instruct" {"instruction": "..."} -> {"answer": the model's reply}: the instruction
//            joins the conversation as a user message, the model is asked at once (step
//            "update:<update id>/instruct-model"), and its reply joins the conversation too,
//            so every later round works with both. The validator rejects an empty or
//            over-long instruction, and any instruction while the run is closing (about to
//            continue as new or to finish): an accepted instruction is always answered by the
//            run that accepted it (the loop awaits ctx.AllUpdatesDone() before handing over),
//            and the next run carries the conversation, instruction and answer included.
//
// Durable by construction: the model's replies and the tools' results are journaled, so after
// a crash the loop replays to where it was without asking the model or calling a tool again.
// What a fragment may do is bounded by the tools' contracts, which the engine enforces on
// every call (an override in a fragment can only tighten them).
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <string>

#include "reckon/worker/task.h"
#include "reckon/worker/workflow_context.h"

namespace reckon::agent {

inline constexpr char kAgentLoopWorkflow[] = "agent_loop";
inline constexpr std::int64_t kRoundsPerRun = 4;

// The system prompt: the reply format and the tools the model may use.
std::string SystemPrompt();

Task<WorkflowOutcome> AgentLoopWorkflow(WorkflowContext& ctx, boost::json::value input);

}  // namespace reckon::agent
