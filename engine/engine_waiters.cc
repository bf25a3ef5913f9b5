// The engine's waiters (UntilIdle, UntilSettled) and queries (Runs, Describe, BusyRuns): what a
// caller can see of the runs. Part of engine/engine.h's Engine; split from engine.cc, which
// drives the runs.
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "reckon/engine/engine.h"
#include "reckon/engine/engine_slot.h"

namespace reckon {

namespace asio = boost::asio;
using namespace storage;

asio::awaitable<Result<void>> Engine::UntilIdle() {
  if (failed_) co_return Err(Errc::kUnavailable, "engine stopped: " + failure_);
  if (BusyRuns() == 0) co_return Ok();
  auto initiate = [this](auto handler) { idle_waiters_.emplace_back(std::move(handler)); };
  auto idle = asio::async_initiate<decltype(asio::use_awaitable), void(Result<void>)>(
      std::move(initiate), asio::use_awaitable);
  co_return co_await std::move(idle);
}

asio::awaitable<Result<RunSummary>> Engine::UntilSettled(std::string workflow_id) {
  if (failed_) co_return Err(Errc::kUnavailable, "engine stopped: " + failure_);
  const Slot* slot = FindSlot(workflow_id);
  if (slot == nullptr) co_return SummarizeFinished(workflow_id);
  RunSummary summary = Summarize(*slot);
  if (Settled(summary.wait)) co_return summary;
  auto initiate = [this](auto handler, std::string id) {
    run_waiters_.push_back(std::make_unique<RunWaiter>(RunWaiter{std::move(id), std::move(handler)}));
  };
  auto settled = asio::async_initiate<decltype(asio::use_awaitable), void(Result<RunSummary>)>(
      std::move(initiate), asio::use_awaitable, std::move(workflow_id));
  co_return co_await std::move(settled);
}

void Engine::WakeRunWaiters() {
  std::vector<std::unique_ptr<RunWaiter>> waiters;
  waiters.swap(run_waiters_);
  for (auto& waiter : waiters) {
    std::optional<Result<RunSummary>> result;
    if (failed_) {
      result.emplace(Err(Errc::kUnavailable, "engine stopped: " + failure_));
    } else if (const Slot* slot = FindSlot(waiter->workflow_id)) {
      // Runs after every batch: the summary (a copy of every operation of the run) only once
      // the run is settled, or a waiter on a long run would cost its whole history per batch.
      if (Settled(WaitOf(slot->state, slot->stuck, slot->busy || !slot->inbox.empty()))) {
        result.emplace(Summarize(*slot));
      }
    } else {
      result.emplace(SummarizeFinished(waiter->workflow_id));  // let go since it waited
    }
    if (!result) {
      run_waiters_.push_back(std::move(waiter));
      continue;
    }
    asio::post(executor_, [waiter = std::move(waiter), result = std::move(*result)]() mutable {
      std::move(waiter->handler)(std::move(result));
    });
  }
}

void Engine::WakeIdleWaiters() {
  WakeRunWaiters();
  if (idle_waiters_.empty()) return;
  if (!failed_ && BusyRuns() > 0) return;
  std::vector<Reply> waiters;
  waiters.swap(idle_waiters_);
  Result<void> result = failed_ ? Result<void>(Err(Errc::kUnavailable, "engine stopped: " + failure_))
                                : Result<void>(Ok());
  for (Reply& waiter : waiters) {
    asio::post(executor_, [waiter = std::move(waiter), result]() mutable {
      std::move(waiter)(result);
    });
  }
}

// --- queries ---------------------------------------------------------------------------------

RunSummary Engine::Summarize(const Slot& slot) const {
  return SummaryOf(slot.state, slot.stuck, slot.busy || !slot.inbox.empty());
}

RunSummary Engine::SummaryOf(const RunState& state, const std::string& stuck, bool busy) {
  RunSummary summary;
  summary.ref = state.ref();
  summary.workflow_type = state.workflow_type();
  summary.status = state.status();
  summary.stuck_reason = stuck;
  summary.wait = WaitOf(state, stuck, busy);
  summary.result_json = state.result_json();
  summary.committed_operations = state.committed_operations();
  summary.cancel_requested = state.cancel_requested() && !state.terminal();
  for (const auto& [id, op] : state.operations()) summary.operations.push_back(op);
  return summary;
}

Result<RunSummary> Engine::SummarizeFinished(const std::string& workflow_id) {
  RECKON_TRY(auto row, Read(journal_.FindLatestRun(workflow_id)));
  if (!row || !storage::IsTerminal(row->status)) {
    return Err(Errc::kNotFound, "no workflow '" + workflow_id +
                                    "' in this engine; start it or Recover() first");
  }
  RECKON_TRY(auto events, Read(journal_.ReadEvents(row->ref)));
  RunState state(row->ref);
  RECKON_TRY(state.ApplyAll(events));
  return SummaryOf(state, "", false);
}

std::vector<RunSummary> Engine::Runs() const {
  std::vector<RunSummary> runs;
  for (const auto& [id, slot] : slots_) runs.push_back(Summarize(*slot));
  return runs;
}

std::optional<RunSummary> Engine::Describe(const std::string& workflow_id) {
  if (const Slot* slot = FindSlot(workflow_id)) return Summarize(*slot);
  auto finished = SummarizeFinished(workflow_id);
  if (finished) return std::move(finished).value();
  if (finished.error().code() != Errc::kNotFound) {
    spdlog::warn("cannot describe run {} from the journal: {}", workflow_id,
                 finished.error().ToString());
  }
  return std::nullopt;
}

std::string Engine::StuckReason(const std::string& workflow_id) const {
  const Slot* slot = FindSlot(workflow_id);
  return slot != nullptr ? slot->stuck : std::string();
}

int Engine::BusyRuns() const {
  int busy = 0;
  for (const auto& [id, slot] : slots_) {
    if (!slot->stuck.empty()) continue;
    // Checked before terminal(): a batch folds its events into the state before its commit is
    // durable, so a run can look terminal while the append that makes it so is still pending.
    if (slot->busy || !slot->inbox.empty()) {
      ++busy;
      continue;
    }
    // Otherwise the run's own wait decides: busy while it works or sleeps, idle once only
    // something outside the engine (a signal, an approval, a person) can move it, or it ended.
    if (!Settled(WaitOf(slot->state, "", false))) ++busy;
  }
  return busy;
}

}  // namespace reckon
