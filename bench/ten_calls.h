// The benchmark workflow and tool, shared by the embedded and the server benchmarks: "noop", a
// read_only tool that does nothing, "ten_calls", a workflow of 10 sequential noop calls, and
// "ten_calls_publish", the same that then publishes one message through the outbox (subject
// bench.done, a small JSON payload) in the step of its completion; and "ticker", a long run of
// durable timers for the failover benchmark: input {"ticks": N, "ms": M}, N times a noop call
// then a sleep of M ms (defaults 100 and 50).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <cstdint>

#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_context.h"

namespace reckon::bench {

inline ToolContract NoopContract() {
  ToolContract c;
  c.name = "noop";
  c.description = "Does nothing and says so.";
  c.side_effect = SideEffect::kReadOnly;
  c.attempt_timeout = std::chrono::milliseconds(5000);
  c.retry.max_attempts = 3;
  c.retry.backoff = Backoff{std::chrono::milliseconds(10), 2.0, std::chrono::milliseconds(100)};
  c.input_schema = boost::json::object{{"type", "object"}};
  return c;
}

inline boost::asio::awaitable<AttemptOutcome> Noop(boost::json::value, ToolCallContext) {
  co_return ToolSucceeded(boost::json::object{{"ok", true}});
}

inline Task<WorkflowOutcome> TenCalls(WorkflowContext& ctx, boost::json::value) {
  for (int i = 0; i < 10; ++i) {
    auto call = ctx.Call("noop", boost::json::object{});
    CallResult result = co_await call;
    if (!result) co_return result.error();
  }
  co_return boost::json::object{{"calls", 10}};
}

inline Task<WorkflowOutcome> TenCallsPublish(WorkflowContext& ctx, boost::json::value) {
  for (int i = 0; i < 10; ++i) {
    auto call = ctx.Call("noop", boost::json::object{});
    CallResult result = co_await call;
    if (!result) co_return result.error();
  }
  auto published = ctx.Publish("bench.done", R"({"calls":10})");
  if (!published) co_return CallFailure{"publish_failed", published.error().message()};
  co_return boost::json::object{{"calls", 10}};
}

inline Task<WorkflowOutcome> Ticker(WorkflowContext& ctx, boost::json::value input) {
  std::int64_t ticks = 100, ms = 50;
  if (const auto* object = input.if_object()) {
    if (const auto* n = object->if_contains("ticks"); n && n->is_int64()) ticks = n->as_int64();
    if (const auto* m = object->if_contains("ms"); m && m->is_int64()) ms = m->as_int64();
  }
  for (std::int64_t i = 0; i < ticks; ++i) {
    auto call = ctx.Call("noop", boost::json::object{});
    CallResult result = co_await call;
    if (!result) co_return result.error();
    co_await ctx.Sleep(std::chrono::milliseconds(ms));
  }
  co_return boost::json::object{{"ticks", ticks}};
}

}  // namespace reckon::bench
