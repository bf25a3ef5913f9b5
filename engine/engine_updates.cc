// Engine: queries and updates (engine.h: Query, Update; docs/ARCHITECTURE.md, decision 45).
// A query reads the journal and asks the host; it never enters a run's batch and journals
// nothing. An update enters the run's batch like a signal: its validator runs there
// (AdmitUpdate), the decider journals UpdateAccepted, the code's handler answers with
// CompleteUpdate, and the caller is answered once UpdateCompleted is durable (AnswerUpdates).
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <random>

#include "reckon/base/identifier.h"
#include "reckon/base/jcs.h"
#include "reckon/engine/engine.h"
#include "reckon/engine/engine_slot.h"

namespace reckon {

namespace asio = boost::asio;
using namespace storage;

namespace {

Result<std::string> CanonicalArgs(const std::string& args_json, const std::string& what) {
  auto parsed = ParseStrictJson(args_json.empty() ? std::string("null") : args_json);
  if (!parsed) return parsed.error().WithContext("the arguments of " + what);
  return CanonicalizeJson(parsed.value());
}

std::optional<UpdateOutcome> AnswerOf(const RunState& state, const std::string& update_id) {
  auto it = state.updates().find(update_id);
  if (it == state.updates().end() || !it->second.completed) return std::nullopt;
  return UpdateOutcome{update_id, it->second.result_json, it->second.error_code,
                       it->second.error_message};
}

std::string NewUpdateId() {
  std::random_device random;
  const std::uint64_t bits = (static_cast<std::uint64_t>(random()) << 32) ^ random();
  char text[24];
  std::snprintf(text, sizeof text, "u%016llx", static_cast<unsigned long long>(bits));
  return text;
}

}  // namespace

asio::awaitable<Result<std::string>> Engine::Query(std::string workflow_id, std::string name,
                                                   std::string args_json) {
  if (failed_) co_return Err(Errc::kUnavailable, "engine stopped: " + failure_);
  RECKON_CO_TRY(ValidateId(IdKind::kWorkflowId, workflow_id));
  RECKON_CO_TRY(ValidateId(IdKind::kHandlerName, name));
  RECKON_CO_TRY(std::string args, CanonicalArgs(args_json, "query '" + name + "'"));
  RunRef ref;
  std::string type;
  if (Slot* slot = FindSlot(workflow_id)) {
    ref = slot->state.ref();
    type = slot->state.workflow_type();
  } else {
    RECKON_CO_TRY(auto latest, Read(journal_.FindLatestRun(workflow_id)));
    if (!latest) {
      co_return Err(Errc::kNotFound, "no workflow '" + workflow_id + "'; check the id");
    }
    if (IsTerminal(latest->status)) {
      co_return Err(Errc::kFailedPrecondition,
                    "run '" + workflow_id + "' is " + std::string(RunStatusName(latest->status)) +
                        "; queries are answered only while a run is running (reckon describe "
                        "shows a finished run's result)");
    }
    co_return Err(Errc::kNotFound, "run '" + workflow_id +
                                       "' is not held by this engine (not recovered yet, or "
                                       "another server owns it); ask again shortly");
  }
  RECKON_CO_TRY(std::vector<Event> history, Read(journal_.ReadEvents(ref)));
  QueryRequest request{ref, type, history, false, std::move(name), std::move(args)};
  auto answered = host_.Query(std::move(request));
  co_return co_await std::move(answered);
}

asio::awaitable<Result<UpdateOutcome>> Engine::Update(std::string workflow_id,
                                                      UpdateRequest request) {
  if (failed_) co_return Err(Errc::kUnavailable, "engine stopped: " + failure_);
  RECKON_CO_TRY(ValidateId(IdKind::kWorkflowId, workflow_id));
  RECKON_CO_TRY(ValidateId(IdKind::kHandlerName, request.name));
  if (request.update_id.empty()) request.update_id = NewUpdateId();
  RECKON_CO_TRY(ValidateId(IdKind::kUpdateId, request.update_id));
  RECKON_CO_TRY(std::string args,
                CanonicalArgs(request.args_json, "update '" + request.name + "'"));
  Slot* slot = FindSlot(workflow_id);
  if (slot == nullptr) {
    RECKON_CO_TRY(auto latest, Read(journal_.FindLatestRun(workflow_id)));
    if (!latest) co_return Err(Errc::kNotFound, "no workflow '" + workflow_id + "'; check the id");
    co_return UpdateFromJournal(latest->ref, request.update_id);
  }
  if (auto answer = AnswerOf(slot->state, request.update_id)) co_return *answer;
  const std::string run_id = slot->state.ref().run_id;
  Input input = UpdateInput{request.update_id, std::move(request.name), std::move(args),
                            std::move(request.sent_by)};
  auto admitted = Await(*slot, std::move(input));
  RECKON_CO_TRY(co_await std::move(admitted));
  auto answered = AwaitUpdate(std::move(workflow_id), run_id, std::move(request.update_id));
  co_return co_await std::move(answered);
}

asio::awaitable<Result<bool>> Engine::AdmitUpdate(Slot& slot, Decider& decider,
                                                  const UpdateInput& update) {
  if (slot.state.updates().count(update.update_id)) co_return false;  // a repeat: wait for it
  if (slot.state.terminal()) {
    co_return Err(Errc::kFailedPrecondition,
                  "run '" + slot.state.ref().workflow_id + "' is " +
                      std::string(RunStatusName(slot.state.status())) +
                      "; it takes no more updates");
  }
  // The validator sees exactly the history the acceptance would follow: the journal's, then
  // what this batch decided so far.
  RECKON_CO_TRY(std::vector<Event> history, Read(journal_.ReadEvents(slot.state.ref())));
  history.insert(history.end(), decider.events().begin(), decider.events().end());
  QueryRequest request{slot.state.ref(), slot.state.workflow_type(), history, true, update.name,
                       update.args_json};
  auto validated = host_.Query(std::move(request));
  RECKON_CO_TRY(co_await std::move(validated));
  co_return true;
}

asio::awaitable<Result<UpdateOutcome>> Engine::AwaitUpdate(std::string workflow_id,
                                                           std::string run_id,
                                                           std::string update_id) {
  auto initiate = [this](auto handler, std::string workflow_id, std::string run_id,
                         std::string update_id) {
    auto waiter = std::make_unique<UpdateWaiter>(
        UpdateWaiter{std::move(workflow_id), std::move(run_id), std::move(update_id),
                     std::move(handler)});
    Slot* slot = FindSlot(waiter->workflow_id);
    std::optional<Result<UpdateOutcome>> now;
    if (slot != nullptr && slot->state.ref().run_id == waiter->run_id) {
      if (auto answer = AnswerOf(slot->state, waiter->update_id)) now = *answer;
    } else {
      // The run finished and was let go, or continued as new: its journal has the answer.
      now = UpdateFromJournal(RunRef{waiter->workflow_id, waiter->run_id}, waiter->update_id);
    }
    if (now) {
      asio::post(executor_, [waiter = std::move(waiter), answer = std::move(*now)]() mutable {
        std::move(waiter->handler)(std::move(answer));
      });
      return;
    }
    update_waiters_.push_back(std::move(waiter));
  };
  return asio::async_initiate<decltype(asio::use_awaitable), void(Result<UpdateOutcome>)>(
      std::move(initiate), asio::use_awaitable, std::move(workflow_id), std::move(run_id),
      std::move(update_id));
}

Result<UpdateOutcome> Engine::UpdateFromJournal(const RunRef& run, const std::string& update_id) {
  RECKON_TRY(auto events, Read(journal_.ReadEvents(run)));
  bool accepted = false;
  for (const Event& event : events) {
    if (const auto* done = std::get_if<UpdateCompleted>(&event.body);
        done != nullptr && done->update_id == update_id) {
      return UpdateOutcome{update_id, done->result_json, done->error_code, done->error_message};
    }
    if (const auto* a = std::get_if<UpdateAccepted>(&event.body)) {
      accepted = accepted || a->update_id == update_id;
    }
  }
  RunState state(run);
  auto folded = state.ApplyAll(events);
  if (folded && state.terminal()) {
    return Err(Errc::kFailedPrecondition,
               "run '" + run.workflow_id + "' is " + std::string(RunStatusName(state.status())) +
                   (accepted ? " and has no answer to update '" + update_id + "'"
                             : "; it takes no more updates"));
  }
  return Err(Errc::kNotFound, "run '" + run.workflow_id +
                                  "' is not held by this engine (not recovered yet, or "
                                  "another server owns it); ask again shortly");
}

void Engine::AnswerUpdates(const Slot& slot, const std::vector<Event>& events) {
  for (const Event& event : events) {
    const auto* done = std::get_if<UpdateCompleted>(&event.body);
    if (done == nullptr) continue;
    for (auto it = update_waiters_.begin(); it != update_waiters_.end();) {
      UpdateWaiter& waiter = **it;
      if (waiter.workflow_id != slot.state.ref().workflow_id ||
          waiter.run_id != slot.state.ref().run_id || waiter.update_id != done->update_id) {
        ++it;
        continue;
      }
      UpdateOutcome answer{done->update_id, done->result_json, done->error_code,
                           done->error_message};
      asio::post(executor_, [waiter = std::move(*it), answer = std::move(answer)]() mutable {
        std::move(waiter->handler)(Result<UpdateOutcome>(std::move(answer)));
      });
      it = update_waiters_.erase(it);
    }
  }
}

void Engine::DropUpdateWaiters(const std::string& workflow_id, const Error& error) {
  for (auto it = update_waiters_.begin(); it != update_waiters_.end();) {
    if (!workflow_id.empty() && (*it)->workflow_id != workflow_id) {
      ++it;
      continue;
    }
    asio::post(executor_, [waiter = std::move(*it), error]() mutable {
      std::move(waiter->handler)(Result<UpdateOutcome>(error));
    });
    it = update_waiters_.erase(it);
  }
}

}  // namespace reckon
