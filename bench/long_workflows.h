// The workflows and tools of the long-run benchmarks (bench/long_bench.cc), besides "noop" and
// "ten_calls" (bench/ten_calls.h):
//
//   fan_out     input {"calls": N}: issues N parallel noop calls (each issued when Call() is
//               invoked), then awaits them all, and completes with {"calls": N}.
//   agent_loop  input {"rounds": R, "bytes": B}: the shape of an agent loop. Each round calls
//               "model" (read_only), whose output names the next tool ("search" or "fetch",
//               alternately, both read_only), then calls that tool. The first R rounds run at
//               once; after that, each round waits first for a signal "step", forever.
//               Every model and tool output carries a text of B bytes (default 256), the
//               payload an agent's journal holds per call.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/ten_calls.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_context.h"

namespace reckon::bench {

inline ToolContract ReadOnlyContract(std::string name) {
  ToolContract c = NoopContract();  // the same read-only contract, under another name
  c.name = std::move(name);
  c.description = "A benchmark tool: answers at once with a text of the size it is asked for.";
  return c;
}

inline std::int64_t IntField(const boost::json::value& v, const char* key, std::int64_t fallback) {
  if (const auto* object = v.if_object()) {
    if (const auto* field = object->if_contains(key); field && field->is_int64()) {
      return field->as_int64();
    }
  }
  return fallback;
}

// "model": {"round": k, "bytes": B} -> {"tool": "search"|"fetch", "thought": B bytes}.
inline boost::asio::awaitable<AttemptOutcome> Model(boost::json::value input, ToolCallContext) {
  const std::int64_t round = IntField(input, "round", 0);
  const auto bytes = static_cast<std::size_t>(IntField(input, "bytes", 256));
  co_return ToolSucceeded(boost::json::object{{"tool", round % 2 == 0 ? "search" : "fetch"},
                                              {"thought", std::string(bytes, 't')}});
}

// "search" and "fetch": {"bytes": B} -> {"text": B bytes}.
inline boost::asio::awaitable<AttemptOutcome> Lookup(boost::json::value input, ToolCallContext) {
  const auto bytes = static_cast<std::size_t>(IntField(input, "bytes", 256));
  co_return ToolSucceeded(boost::json::object{{"text", std::string(bytes, 'x')}});
}

inline Task<WorkflowOutcome> FanOut(WorkflowContext& ctx, boost::json::value input) {
  const std::int64_t n = IntField(input, "calls", 0);
  std::vector<WorkflowContext::CallAwaiter> calls;
  calls.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) calls.push_back(ctx.Call("noop", boost::json::object{}));
  for (auto& call : calls) {
    CallResult result = co_await call;
    if (!result) co_return result.error();
  }
  co_return boost::json::object{{"calls", n}};
}

inline Task<WorkflowOutcome> AgentLoop(WorkflowContext& ctx, boost::json::value input) {
  const std::int64_t rounds = IntField(input, "rounds", 0);
  const std::int64_t bytes = IntField(input, "bytes", 256);
  for (std::int64_t round = 0;; ++round) {
    if (round >= rounds) {
      auto signal = ctx.WaitSignal("step");
      co_await signal;
    }
    boost::json::object ask{{"round", round}, {"bytes", bytes}};
    auto model = ctx.Call("model", std::move(ask));
    CallResult decided = co_await model;
    if (!decided) co_return decided.error();
    std::string tool(decided.value().output.as_object().at("tool").as_string());
    boost::json::object args{{"round", round}, {"bytes", bytes}};
    auto call = ctx.Call(std::move(tool), std::move(args));
    CallResult looked_up = co_await call;
    if (!looked_up) co_return looked_up.error();
  }
}

}  // namespace reckon::bench
