// WorkflowContext's queries and updates (workflow_context.h, "queries and updates"): handler
// registration, answering a query or validating an update without journaling anything, and
// running accepted updates' handlers as coroutines of their own, with step ids of their own.
#include <boost/json/serialize.hpp>

#include <exception>

#include "reckon/base/jcs.h"
#include "reckon/worker/workflow_context.h"

namespace reckon {

namespace json = boost::json;

namespace {

std::string Names(const auto& handlers) {
  std::string names;
  for (const auto& [name, handler] : handlers) names += (names.empty() ? "'" : ", '") + name + "'";
  return names.empty() ? "none" : names;
}

}  // namespace

void WorkflowContext::OnQuery(std::string name, QueryHandler handler) {
  queries_[std::move(name)] = std::move(handler);
}

void WorkflowContext::OnUpdate(std::string name, UpdateValidator validator,
                               UpdateHandler handler) {
  auto registration = std::make_shared<UpdateRegistration>();
  registration->validator = std::move(validator);
  registration->handler = std::move(handler);
  updates_[std::move(name)] = std::move(registration);
}

WorkflowContext::UpdatesDoneAwaiter WorkflowContext::AllUpdatesDone() {
  return UpdatesDoneAwaiter(this);
}

bool WorkflowContext::UpdatesOpen() const {
  for (const auto& [id, update] : running_updates_) {
    if (!update->finished) return true;
  }
  return false;
}

std::string WorkflowContext::Scoped(std::string step_id) const {
  return scope_ == nullptr ? step_id : scope_->prefix + step_id;
}

int& WorkflowContext::Counter() { return scope_ == nullptr ? counter_ : scope_->counter; }

std::map<std::string, int>& WorkflowContext::SignalWaits() {
  return scope_ == nullptr ? signal_waits_ : scope_->signal_waits;
}

template <class F>
auto WorkflowContext::Inspect(std::string_view what, const std::string& name, F f)
    -> decltype(f()) {
  const std::size_t commands = commands_.size();
  const std::size_t issued = issued_.size();
  const int counter = counter_;
  inspecting_ = true;
  auto answer = [&]() -> decltype(f()) {
    try {
      return f();
    } catch (const std::exception& e) {
      // A bug in workflow code: the caller hears of it, the run is not touched.
      return Err(Errc::kInternal, RunName() + ": the " + std::string(what) + " '" + name +
                                      "' threw: " + e.what());
    }
  }();
  inspecting_ = false;
  if (commands_.size() != commands || issued_.size() != issued || counter_ != counter) {
    commands_.erase(commands_.begin() + static_cast<std::ptrdiff_t>(commands), commands_.end());
    return Err(Errc::kFailedPrecondition,
               RunName() + ": the " + std::string(what) + " '" + name +
                   "' issued a command (a call, sleep, signal wait, publish, patch, time or "
                   "random reading); query handlers and update validators must only read the "
                   "run's state, so its answer was dropped and nothing was journaled");
  }
  return answer;
}

Result<json::value> WorkflowContext::AnswerQuery(const std::string& name, const json::value& args) {
  auto it = queries_.find(name);
  if (it == queries_.end()) {
    return Err(Errc::kNotFound, RunName() + " has no query handler named '" + name +
                                    "' (its code registers: " + Names(queries_) +
                                    "); check the name");
  }
  if (MainDone()) {
    return Err(Errc::kFailedPrecondition,
               RunName() + " has finished; queries are answered only while a run is running "
                           "(reckon describe shows a finished run's result)");
  }
  const QueryHandler& handler = it->second;
  return Inspect("query handler", name, [&] { return handler(args); });
}

Result<void> WorkflowContext::ValidateUpdate(const std::string& name, const json::value& args) {
  auto it = updates_.find(name);
  if (it == updates_.end()) {
    return Err(Errc::kNotFound, RunName() + " has no update handler named '" + name +
                                    "' (its code registers: " + Names(updates_) +
                                    "); check the name");
  }
  if (MainDone()) {
    return Err(Errc::kFailedPrecondition, RunName() + " has finished; it takes no updates");
  }
  const auto registration = it->second;
  if (!registration->validator) return Ok();
  return Inspect("update validator", name, [&] { return registration->validator(args); });
}

void WorkflowContext::StartUpdate(const std::string& update_id, const std::string& name,
                                  const std::string& args_json) {
  if (running_updates_.count(update_id)) {
    Diverge("update '" + update_id + "' was accepted twice");
    return;
  }
  auto running = std::make_unique<RunningUpdate>();
  running->update_id = update_id;
  running->prefix = "update:" + update_id + "/";
  RunningUpdate& update = *running;
  running_updates_[update_id] = std::move(running);
  auto it = updates_.find(name);
  if (it == updates_.end()) {
    // Accepted by code that had the handler; this code has not: replay reports the mismatch
    // when the history recorded the handler's answer.
    update.finished = true;
    CompleteUpdateWith(update_id, CompleteUpdate{update_id, "", "unknown_update",
                                                 RunName() + " has no update handler named '" +
                                                     name + "'"});
    return;
  }
  auto args = ParseStrictJson(args_json);
  if (!args) {
    update.finished = true;
    CompleteUpdateWith(update_id, CompleteUpdate{update_id, "", "invalid_args",
                                                 args.error().message()});
    return;
  }
  update.registration = it->second;
  update.task = update.registration->handler(std::move(args).value());
  scope_ = &update;
  update.task.Start();
  scope_ = nullptr;
  CompleteFinishedUpdates();
}

void WorkflowContext::CompleteFinishedUpdates() {
  for (auto& [id, update] : running_updates_) {
    if (update->finished || !update->task.done()) continue;
    update->finished = true;
    CompleteUpdate done{id, "", "", ""};
    try {
      WorkflowOutcome outcome = update->task.Take();
      if (outcome) {
        auto canonical = CanonicalizeJson(outcome.value());
        if (canonical) {
          done.result_json = std::move(canonical).value();
        } else {
          done.error_code = "invalid_result";
          done.error_message = canonical.error().message();
        }
      } else {
        done.error_code = outcome.error().code;
        done.error_message = outcome.error().message;
      }
    } catch (const std::exception& e) {
      done.error_code = "update_exception";
      done.error_message = e.what();
    }
    CompleteUpdateWith(id, std::move(done));
  }
}

void WorkflowContext::CompleteUpdateWith(const std::string& update_id, CompleteUpdate done) {
  auto recorded = history_update_results_.find(update_id);
  if (recorded == history_update_results_.end()) {
    history_update_results_[update_id] = RecordedUpdate{done.result_json, done.error_code};
    commands_.push_back(std::move(done));
    return;
  }
  // Replayed: the history holds the answer the caller got; the code must give it again.
  if (recorded->second.result_json != done.result_json ||
      recorded->second.error_code != done.error_code) {
    auto describe = [](const std::string& result, const std::string& code) {
      return code.empty() ? "result " + result : "error " + code;
    };
    Diverge("update '" + update_id + "': the history records " +
            describe(recorded->second.result_json, recorded->second.error_code) +
            ", but its handler now returns " + describe(done.result_json, done.error_code) +
            "; update handlers must be deterministic (docs/VERSIONING.md)");
  }
}

}  // namespace reckon
