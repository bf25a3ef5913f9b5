// LocalWorker: how embedded mode runs one attempt of a tool (local_worker.h): under the
// engine's cancellation (the hard deadline), with the tool's own heartbeats kept for the
// attempt's report, and, when the contract declares heartbeat_timeout, a watchdog that stops
// a tool that stopped heartbeating and reports the attempt lost (code heartbeat_timeout).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>

#include "reckon/host/local_worker.h"

namespace reckon {
namespace asio = boost::asio;

namespace {

struct Watch {
  std::shared_ptr<ToolHeartbeat> heartbeat;
  std::shared_ptr<asio::cancellation_signal> cancel;
  std::chrono::milliseconds timeout{0};
  bool done = false;
  bool lost = false;
};

// Wakes at the time the tool's next beat is due; stops the tool if none came.
asio::awaitable<void> WatchHeartbeats(std::shared_ptr<Watch> watch) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!watch->done) {
    timer.expires_at(watch->heartbeat->last_beat() + watch->timeout);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));  // woken early: look again
    if (watch->done) co_return;
    if (std::chrono::steady_clock::now() >= watch->heartbeat->last_beat() + watch->timeout) {
      watch->lost = true;
      watch->cancel->emit(asio::cancellation_type::terminal);
      co_return;
    }
  }
}

}  // namespace

asio::awaitable<AttemptOutcome> LocalWorker::RunTool(const Tool& tool, boost::json::value input,
                                                     ToolCallContext context,
                                                     std::chrono::milliseconds heartbeat_timeout) {
  auto heartbeat = std::make_shared<ToolHeartbeat>();
  context.heartbeat = heartbeat;
  auto watch = std::make_shared<Watch>();
  watch->heartbeat = heartbeat;
  watch->cancel = std::make_shared<asio::cancellation_signal>();
  watch->timeout = heartbeat_timeout;
  // The engine's cancellation (the hard deadline) reaches the tool through our own signal.
  asio::cancellation_state outer = co_await asio::this_coro::cancellation_state;
  if (outer.slot().is_connected()) {
    outer.slot().assign([cancel = watch->cancel](asio::cancellation_type type) {
      cancel->emit(type);
    });
  }
  const auto executor = co_await asio::this_coro::executor;
  if (heartbeat_timeout.count() > 0) asio::co_spawn(executor, WatchHeartbeats(watch), asio::detached);
  AttemptOutcome outcome;
  try {
    auto call = asio::co_spawn(executor, tool.execute(std::move(input), std::move(context)),
                               asio::bind_cancellation_slot(watch->cancel->slot(),
                                                            asio::use_awaitable));
    outcome = co_await std::move(call);
  } catch (const std::exception& e) {
    // It may have acted before it threw (or was stopped): the outcome is unknown.
    outcome = ToolFailed(FailureKind::kUnknown, "tool_exception", e.what());
  }
  watch->done = true;
  if (outer.slot().is_connected()) outer.slot().clear();
  if (watch->lost && !outcome.success) {
    outcome = ToolFailed(FailureKind::kUnknown, std::string(kHeartbeatTimeoutCode),
                         "the tool stopped heartbeating for " +
                             std::to_string(heartbeat_timeout.count()) +
                             " ms (the contract's heartbeat_timeout)");
  }
  if (!outcome.success && outcome.heartbeat_details_json.empty()) {
    outcome.heartbeat_details_json = heartbeat->details_json();
  }
  co_return outcome;
}

}  // namespace reckon
