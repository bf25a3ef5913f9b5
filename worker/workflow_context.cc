#include "reckon/worker/workflow_context.h"

#include <boost/json/serialize.hpp>

#include <algorithm>

#include "reckon/base/jcs.h"
#include "reckon/engine/operation_id.h"
#include "reckon/engine/outbox_message.h"

namespace reckon {

using namespace storage;
namespace json = boost::json;

namespace {

// What a history's marker is, in a message.
std::string DescribeMarker(const MarkerRecorded& e) {
  if (e.kind == kWaitSignalMarker) return "a wait for signal " + e.value_json;
  if (e.kind == kPatchMarker) return "patch " + e.value_json;
  if (e.kind == kPublishMarker) return "a publish";
  if (e.kind == "now") return "a ctx.NowMicros() reading";
  if (e.kind == "random") return "a ctx.Random() draw";
  return "a marker of kind '" + e.kind + "'";
}

constexpr std::string_view kPatchAdvice =
    "; the workflow code changed incompatibly for runs in flight: put the change behind "
    "ctx.Patched(\"<change-id>\") so that they keep the old code path (docs/VERSIONING.md)";

}  // namespace

WorkflowContext::WorkflowContext(std::string workflow_id, std::string run_id)
    : workflow_id_(std::move(workflow_id)), run_id_(std::move(run_id)) {
  id_scope_ = IdScope{kRunScopedIds, "", workflow_id_, run_id_};
}

std::string WorkflowContext::NextStepId(std::string_view kind) {
  return Scoped(std::string(kind) + "#" + std::to_string(++Counter()));
}

void WorkflowContext::Diverge(std::string message) {
  if (divergence_.empty()) divergence_ = std::move(message);
}

void WorkflowContext::Issue(const std::string& step_id, std::string_view what) {
  if (continuation_) {
    Diverge("step '" + step_id + "' (" + std::string(what) +
            ") was issued after ctx.ContinueAsNew; return ContinueAsNew's result at once");
  }
  if (issued_.count(step_id)) {
    Diverge("step '" + step_id + "' was issued twice; step ids must be unique");
  }
  issued_.insert(step_id);
  if (pending_history_.erase(step_id) == 0 && !AtFrontier() && first_new_step_.empty()) {
    // A step the history does not have, while steps it does have are still to come.
    first_new_step_ = "'" + step_id + "' (" + std::string(what) + ")";
  }
}

WorkflowContext::CallAwaiter WorkflowContext::Call(std::string tool, json::value input) {
  return Call(std::move(tool), std::move(input), CallOptions{});
}

WorkflowContext::CallAwaiter WorkflowContext::Call(std::string tool, json::value input,
                                                   CallOptions options) {
  if (options.step_id.too_long()) return RefusedCall(tool);
  std::string step_id =
      options.step_id.empty() ? NextStepId(tool) : Scoped(options.step_id.str());
  if (!options.step_id.empty()) ++Counter();  // keep numbering stable whichever form is used
  steps_[step_id];
  call_steps_[step_id] = tool;
  auto recorded = history_calls_.find(step_id);
  const bool replayed = recorded != history_calls_.end();
  // A replayed call's operation was mapped to its step by the history's OperationPrepared
  // (Observe); only a new one needs its id derived here.
  if (!replayed) step_of_op_[OperationIdFor(id_scope_, step_id)] = step_id;
  if (!replayed && pending_history_.count(step_id)) {
    Diverge("step '" + step_id + "': the history records " + pending_history_[step_id].Describe() +
            " there, but the code now calls '" + tool + "'" + std::string(kPatchAdvice));
  }
  Issue(step_id, "a call to '" + tool + "'");
  if (replayed && recorded->second != tool) {
    Diverge("step '" + step_id + "': the history records a call to '" + recorded->second +
            "', but the code now calls '" + tool + "'" + std::string(kPatchAdvice));
  }
  commands_.push_back(
      ScheduleCall{step_id, std::move(tool), std::move(input), replayed, options.overrides});
  return CallAwaiter(this, std::move(step_id));
}

WorkflowContext::ChildAwaiter WorkflowContext::StartChild(std::string workflow_type,
                                                          std::string workflow_id,
                                                          json::value input) {
  return StartChild(std::move(workflow_type), std::move(workflow_id), std::move(input),
                    ChildOptions{});
}

WorkflowContext::ChildAwaiter WorkflowContext::StartChild(std::string workflow_type,
                                                          std::string workflow_id,
                                                          json::value input,
                                                          ChildOptions options) {
  std::string step_id = NextStepId("child");
  Step& step = steps_[step_id];
  const std::string what = "a start of child workflow '" +
                           (workflow_id.empty() ? std::string("<derived id>") : workflow_id) +
                           "' of type '" + workflow_type + "'";
  auto recorded = history_children_.find(step_id);
  const bool replayed = recorded != history_children_.end();
  if (!replayed && pending_history_.count(step_id)) {
    Diverge("step '" + step_id + "': the history records " + pending_history_[step_id].Describe() +
            " there, but the code now makes " + what + std::string(kPatchAdvice));
  }
  Issue(step_id, what);
  if (replayed) {
    const HistoryChild& h = recorded->second;
    if (h.workflow_type != workflow_type || (!workflow_id.empty() && h.workflow_id != workflow_id)) {
      Diverge("step '" + step_id + "': the history records a start of child workflow '" +
              h.workflow_id + "' of type '" + h.workflow_type + "', but the code now makes " +
              what + std::string(kPatchAdvice));
    }
  }
  if (options.policy == ParentClosePolicy::kWait) wait_children_[step_id] = options.policy;
  if (replayed) return ChildAwaiter(this, std::move(step_id), std::move(workflow_id));
  auto canonical = CanonicalizeJson(input);
  if (!canonical) {
    // Nothing is journaled: the code learns at once, as with a call it cannot make.
    step.child_result = WorkflowOutcome(CallFailure{
        "invalid_input", "the input of child workflow '" + workflow_id +
                             "' is not valid JSON for a run: " + canonical.error().message()});
    wait_children_.erase(step_id);
    return ChildAwaiter(this, std::move(step_id), std::move(workflow_id));
  }
  history_children_[step_id] = HistoryChild{workflow_type, workflow_id};
  commands_.push_back(reckon::StartChild{step_id, workflow_id, std::move(workflow_type),
                                         std::move(canonical).value(), options.policy});
  return ChildAwaiter(this, std::move(step_id), std::move(workflow_id));
}

bool WorkflowContext::HasOpenWaitChildren() const {
  for (const auto& [step_id, policy] : wait_children_) {
    auto it = steps_.find(step_id);
    if (it == steps_.end() || !it->second.child_result) return true;
  }
  return false;
}

WorkflowContext::CallAwaiter WorkflowContext::RefusedCall(const std::string& tool) {
  std::string step_id = NextStepId(tool);  // numbered like a call, so later ids do not move
  steps_[step_id].result = CallResult(CallFailure{
      "invalid_step_id", "a call to '" + tool + "' names a step id longer than " +
                             std::to_string(StepId::kMaxBytes) +
                             " bytes; choose a shorter CallOptions::step_id"});
  issued_.insert(step_id);
  return CallAwaiter(this, std::move(step_id));
}

WorkflowContext::TimerAwaiter WorkflowContext::Sleep(std::chrono::milliseconds duration) {
  std::string step_id = NextStepId("sleep");
  steps_[step_id];
  const bool replayed = history_timers_.count(step_id) > 0;
  if (!replayed && pending_history_.count(step_id)) {
    Diverge("step '" + step_id + "': the history records " + pending_history_[step_id].Describe() +
            " there, but the code now sleeps" + std::string(kPatchAdvice));
  }
  Issue(step_id, "a timer");
  if (!replayed) commands_.push_back(StartTimer{step_id, now_us_ + duration.count() * 1000});
  return TimerAwaiter(this, std::move(step_id));
}

WorkflowContext::SignalAwaiter WorkflowContext::WaitSignal(std::string name) {
  // Journaled, so that what the run waits on is known without its code; a count of its own
  // per name keeps every other step id as it was before waits were recorded.
  std::string step_id = Scoped("signal:" + name + "#" + std::to_string(++SignalWaits()[name]));
  std::string value = json::serialize(json::string(name));
  if (auto it = history_markers_.find(step_id); it == history_markers_.end()) {
    history_markers_[step_id] = value;
    commands_.push_back(RecordMarker{step_id, std::string(kWaitSignalMarker), value});
  }
  Issue(step_id, "a wait for signal " + value);
  return SignalAwaiter(this, std::move(name));
}

bool WorkflowContext::Patched(std::string_view change_id) {
  const std::string step_id = "patch:" + std::string(change_id);
  if (auto it = patches_.find(step_id); it != patches_.end()) return it->second;
  bool taken = false;
  if (history_markers_.count(step_id)) {
    taken = true;  // the run passed here on the new code before
    Issue(step_id, "patch");
  } else if (AtFrontier()) {
    // First execution of this point: the new branch, for good.
    taken = true;
    std::string value = json::serialize(json::string(std::string(change_id)));
    history_markers_[step_id] = value;
    Issue(step_id, "patch");
    commands_.push_back(RecordMarker{step_id, std::string(kPatchMarker), std::move(value)});
  }
  // Otherwise the history went past this point without the marker: the run started on the
  // old code, and replays the old branch.
  patches_[step_id] = taken;
  return taken;
}

void WorkflowContext::DeprecatePatch(std::string_view change_id) {
  const std::string step_id = "patch:" + std::string(change_id);
  if (patches_.count(step_id)) return;
  patches_[step_id] = true;
  if (history_markers_.count(step_id)) Issue(step_id, "patch");
  // Without a marker: a run started after the marker stopped being recorded. A run that took
  // the old branch shows as the steps that differ from its history.
}

WorkflowOutcome WorkflowContext::ContinueAsNew(json::value input) {
  if (continuation_) {
    Diverge("ctx.ContinueAsNew was called twice; return its result at once");
    return WorkflowOutcome(CallFailure{"continue_as_new_refused",
                                       "ctx.ContinueAsNew was called twice in one run"});
  }
  std::map<std::string, std::string> unfinished;  // sorted: the message names them in order
  for (const auto& [step_id, tool] : call_steps_) {
    if (!steps_[step_id].result) unfinished.emplace(step_id, tool);
  }
  std::string open;
  for (const auto& [step_id, tool] : unfinished) {
    open += (open.empty() ? "" : ", ") + std::string("'") + step_id + "' (" + tool + ")";
  }
  if (!open.empty()) {
    return WorkflowOutcome(CallFailure{
        "continue_as_new_refused",
        "run '" + workflow_id_ + "' cannot continue as new while operations it started are "
        "not terminal: steps " + open + " have no result yet; await them first"});
  }
  std::string updates;
  for (const auto& [id, update] : running_updates_) {
    if (!update->finished) updates += (updates.empty() ? "'" : ", '") + id + "'";
  }
  if (!updates.empty()) {
    // An accepted update belongs to this run: its caller waits for this run's answer.
    return WorkflowOutcome(CallFailure{
        "continue_as_new_refused",
        "run '" + workflow_id_ + "' cannot continue as new while the handlers of updates " +
            updates + " have not returned; let them finish first"});
  }
  auto canonical = CanonicalizeJson(input);
  if (!canonical) {
    return WorkflowOutcome(CallFailure{
        "invalid_input", "the input of ctx.ContinueAsNew is not valid JSON for a run: " +
                             canonical.error().message()});
  }
  continuation_ = reckon::ContinueAsNew{std::move(canonical).value(), {}};
  return WorkflowOutcome(json::value(nullptr));
}

std::optional<reckon::ContinueAsNew> WorkflowContext::TakeContinuation() {
  if (!continuation_) return std::nullopt;
  reckon::ContinueAsNew next = std::move(*continuation_);
  CarrySignals(next.signals);
  return next;
}

void WorkflowContext::CarrySignals(std::vector<CarriedSignal>& out) {
  // The signals received and not consumed go to the next run, by name.
  for (auto& [name, queue] : signals_) {
    for (BufferedSignal& signal : queue) {
      out.push_back(
          CarriedSignal{name, std::move(signal.payload_json), std::move(signal.sent_by)});
    }
    queue.clear();
  }
}

Task<std::optional<std::string>> WorkflowContext::WaitSignal(std::string name,
                                                            std::chrono::milliseconds timeout) {
  const int k = SignalWaits()[name] + 1;  // the number WaitSignal gives this wait
  auto signal = WaitSignal(name);
  auto timer = Sleep(timeout);
  const std::size_t first = co_await WhenAny(signal, timer);
  if (first == 0) co_return co_await signal;
  EndWait(name, k);
  co_return std::nullopt;
}

void WorkflowContext::EndWait(const std::string& name, int k) {
  const std::string step_id = Scoped("signal:" + name + "#" + std::to_string(k) + ":timeout");
  std::string value = json::serialize(json::string(name));
  if (!history_markers_.count(step_id)) {
    history_markers_[step_id] = value;
    commands_.push_back(RecordMarker{step_id, std::string(kWaitSignalEndMarker), value});
  }
  Issue(step_id, "the end of a timed wait for signal " + value);
}

int WorkflowContext::Winner(const std::vector<WaitRef>& waits) const {
  int winner = -1;
  std::int64_t best = 0;
  for (std::size_t i = 0; i < waits.size(); ++i) {
    std::int64_t seq = -1;
    if (waits[i].signal) {
      auto it = signals_.find(waits[i].key);
      if (it != signals_.end() && !it->second.empty()) seq = it->second.front().seq;
    } else if (auto it = steps_.find(waits[i].key); it != steps_.end()) {
      if (it->second.result || it->second.fired || it->second.child_result) seq = it->second.seq;
    }
    if (seq < 0 || seq > position_) continue;  // not handed to the code yet
    if (winner < 0 || seq < best) {
      winner = static_cast<int>(i);
      best = seq;
    }
  }
  return winner;
}

void WorkflowContext::Register(const std::vector<WaitRef>& waits, std::coroutine_handle<> h) {
  for (const WaitRef& wait : waits) {
    if (wait.signal) {
      signal_waiters_[wait.key].push_back(Waiter{h, scope_});
    } else {
      steps_[wait.key].waiter = Waiter{h, scope_};
    }
  }
}

void WorkflowContext::Unregister(const std::vector<WaitRef>& waits, std::coroutine_handle<> h) {
  for (const WaitRef& wait : waits) {
    if (wait.signal) {
      auto& queue = signal_waiters_[wait.key];
      queue.erase(std::remove_if(queue.begin(), queue.end(),
                                 [h](const Waiter& w) { return w.handle == h; }),
                  queue.end());
    } else if (auto it = steps_.find(wait.key);
               it != steps_.end() && it->second.waiter.handle == h) {
      it->second.waiter = {};
    }
  }
}

std::int64_t WorkflowContext::NowMicros() {
  std::string step_id = NextStepId("now");
  const bool replayed = history_markers_.count(step_id) > 0;
  if (!replayed && pending_history_.count(step_id)) {
    Diverge("step '" + step_id + "': the history records " + pending_history_[step_id].Describe() +
            " there, but the code now reads the time" + std::string(kPatchAdvice));
  }
  Issue(step_id, "a ctx.NowMicros() reading");
  if (replayed) return std::stoll(history_markers_[step_id]);
  std::string value = std::to_string(now_us_);
  history_markers_[step_id] = value;
  commands_.push_back(RecordMarker{step_id, "now", value});
  return now_us_;
}

std::uint64_t WorkflowContext::Random() {
  std::string step_id = NextStepId("random");
  const bool replayed = history_markers_.count(step_id) > 0;
  if (!replayed && pending_history_.count(step_id)) {
    Diverge("step '" + step_id + "': the history records " + pending_history_[step_id].Describe() +
            " there, but the code now draws a random value" + std::string(kPatchAdvice));
  }
  Issue(step_id, "a ctx.Random() draw");
  if (replayed) return std::stoull(history_markers_[step_id]);
  // splitmix64 over the seed the host supplied.
  std::uint64_t z = (random_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  std::string value = std::to_string(z);
  history_markers_[step_id] = value;
  commands_.push_back(RecordMarker{step_id, "random", value});
  return z;
}

Result<std::string> WorkflowContext::Publish(std::string_view subject, std::string_view payload) {
  return Publish(subject, payload, PublishOptions{});
}

Result<std::string> WorkflowContext::Publish(std::string_view subject, std::string_view payload,
                                             PublishOptions options) {
  if (options.step_id.too_long()) {
    ++Counter();  // numbered like any publish, so later ids do not move
    return Err(Errc::kInvalidArgument,
               "a publish to '" + std::string(subject) + "' names a step id longer than " +
                   std::to_string(StepId::kMaxBytes) + " bytes; choose a shorter one");
  }
  std::string step_id =
      options.step_id.empty() ? NextStepId(kPublishMarker) : Scoped(options.step_id.str());
  if (!options.step_id.empty()) ++Counter();  // keep numbering stable whichever form is used
  if (issued_.count(step_id)) {
    Diverge("step '" + step_id + "' was issued twice; step ids must be unique");
    return Err(Errc::kNondeterminism, RunName() + ": " + divergence_);
  }
  const bool replayed = history_markers_.count(step_id) > 0;
  if (!replayed && pending_history_.count(step_id)) {
    Diverge("step '" + step_id + "': the history records " + pending_history_[step_id].Describe() +
            " there, but the code now publishes to '" + std::string(subject) + "'" +
            std::string(kPatchAdvice));
  }
  Issue(step_id, "a publish");
  RECKON_TRY(std::string value, EncodePublishMarker(subject, payload));
  if (replayed) {
    if (history_markers_[step_id] != value) {
      Diverge("step '" + step_id + "': the history records a publish, but the code now "
              "publishes to '" + std::string(subject) + "' a message that differs from it" +
              std::string(kPatchAdvice));
      return Err(Errc::kNondeterminism, RunName() + ": " + divergence_);
    }
  } else {
    history_markers_[step_id] = value;
    commands_.push_back(RecordMarker{step_id, std::string(kPublishMarker), std::move(value)});
  }
  return MessageIdFor(id_scope_, step_id);
}

std::string WorkflowContext::RunName() const {
  return "run '" + workflow_id_ + "' (run id " + run_id_ + ")";
}

void WorkflowContext::BeginActivation(std::int64_t now_us, std::uint64_t random_seed) {
  now_us_ = now_us;
  if (random_state_ == 0) random_state_ = random_seed | 1;
}

void WorkflowContext::Ready(const std::string& step_id, std::int64_t seq) {
  news_[seq] = News{News::kStep, step_id, {}, {}};
}

Result<void> WorkflowContext::Observe(const Event& event) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, WorkflowStarted>) {
          id_scope_ = IdScope{e.id_version, e.id_namespace, workflow_id_, run_id_};
          previous_run_id_ = e.previous_run_id;
        } else if constexpr (std::is_same_v<T, OperationPrepared>) {
          history_calls_.emplace(e.step_id, e.tool);
          if (!issued_.count(e.step_id)) {
            pending_history_[e.step_id] = {event.seq, e.tool, true};
          }
          step_of_op_[e.operation_id] = e.step_id;
        } else if constexpr (std::is_same_v<T, OperationCommitted>) {
          auto it = step_of_op_.find(e.operation_id);
          if (it == step_of_op_.end()) return;
          auto parsed = ParseStrictJson(e.result_json);
          steps_[it->second].result =
              CallResult(ToolOutput{parsed ? std::move(parsed).value() : json::value(),
                                    e.provider_ref});
          steps_[it->second].seq = event.seq;
          Ready(it->second, event.seq);
        } else if constexpr (std::is_same_v<T, OperationRejected>) {
          auto it = step_of_op_.find(e.operation_id);
          if (it == step_of_op_.end()) return;
          steps_[it->second].result = CallResult(CallFailure{e.code, e.message});
          steps_[it->second].seq = event.seq;
          Ready(it->second, event.seq);
        } else if constexpr (std::is_same_v<T, ApprovalDenied>) {
          auto it = step_of_op_.find(e.operation_id);
          if (it == step_of_op_.end()) return;
          steps_[it->second].result =
              CallResult(CallFailure{"approval_denied", "denied by " + e.denied_by + ": " + e.reason});
          steps_[it->second].seq = event.seq;
          Ready(it->second, event.seq);
        } else if constexpr (std::is_same_v<T, TimerStarted>) {
          history_timers_.insert(e.timer_id);
          if (!issued_.count(e.timer_id)) {
            pending_history_[e.timer_id] = {event.seq, "a timer (ctx.Sleep)"};
          }
        } else if constexpr (std::is_same_v<T, TimerFired>) {
          steps_[e.timer_id].fired = true;
          steps_[e.timer_id].seq = event.seq;
          Ready(e.timer_id, event.seq);
        } else if constexpr (std::is_same_v<T, SignalReceived>) {
          signals_[e.name].push_back(BufferedSignal{e.payload_json, e.sent_by, event.seq});
          news_[event.seq] = News{News::kSignal, e.name, {}, {}};
        } else if constexpr (std::is_same_v<T, ChildWorkflowInitiated>) {
          history_children_[e.step_id] = HistoryChild{e.workflow_type, e.child_workflow_id};
          if (!issued_.count(e.step_id)) {
            pending_history_[e.step_id] = {event.seq, "a start of child workflow '" +
                                                          e.child_workflow_id + "' of type '" +
                                                          e.workflow_type + "'"};
          }
        } else if constexpr (std::is_same_v<T, ChildWorkflowClosed>) {
          Step& step = steps_[e.step_id];
          if (e.status == kChildCompleted) {
            auto parsed = ParseStrictJson(e.result_json);
            step.child_result =
                WorkflowOutcome(parsed ? std::move(parsed).value() : json::value());
          } else {
            step.child_result = WorkflowOutcome(CallFailure{e.code, e.message});
          }
          step.seq = event.seq;
          Ready(e.step_id, event.seq);
        } else if constexpr (std::is_same_v<T, WorkflowCancelRequested>) {
          // An older history's request closed the run in its own batch, unseen by the code.
          if (e.to_code) {
            news_[event.seq] = News{News::kCancel, {}, e.reason, e.requested_by};
          }
        } else if constexpr (std::is_same_v<T, UpdateAccepted>) {
          news_[event.seq] = News{News::kUpdate, e.update_id, e.name, e.args_json};
        } else if constexpr (std::is_same_v<T, UpdateCompleted>) {
          history_update_results_[e.update_id] = RecordedUpdate{e.result_json, e.error_code};
        } else if constexpr (std::is_same_v<T, MarkerRecorded>) {
          history_markers_[e.step_id] = e.value_json;
          if (!issued_.count(e.step_id)) {
            pending_history_[e.step_id] = {event.seq, DescribeMarker(e)};
          }
        }
      },
      event.body);
  return Ok();
}

void WorkflowContext::RunReady() {
  for (;;) {
    Drain();
    if (news_.empty() || MainDone()) return;
    auto first = news_.begin();
    News news = std::move(first->second);
    position_ = first->first;
    news_.erase(first);
    if (news.kind == News::kStep) {
      ready_.push_back(std::move(news.key));
    } else if (news.kind == News::kUpdate) {
      StartUpdate(news.key, news.name, news.args_json);
    } else if (news.kind == News::kCancel) {
      DeliverCancel(std::move(news.name), std::move(news.args_json));
    }
  }
}

void WorkflowContext::Resume(Waiter waiter) {
  scope_ = waiter.scope;
  waiter.handle.resume();
  scope_ = nullptr;
  CompleteFinishedUpdates();
}

void WorkflowContext::Drain() {
  bool progressed = true;
  while (progressed && !MainDone()) {
    progressed = false;
    while (!ready_.empty() && !MainDone()) {
      std::string step_id = std::move(ready_.front());
      ready_.pop_front();
      auto it = steps_.find(step_id);
      if (it == steps_.end() || !it->second.waiter) continue;
      Resume(std::exchange(it->second.waiter, {}));
      progressed = true;
    }
    if (!updates_done_waiters_.empty() && !UpdatesOpen() && !MainDone()) {
      // The last handler returned: whoever waits in AllUpdatesDone goes on.
      std::vector<Waiter> waiters;
      waiters.swap(updates_done_waiters_);
      for (Waiter& waiter : waiters) Resume(waiter);
      progressed = true;
    }
    for (auto& [name, waiters] : signal_waiters_) {
      while (!waiters.empty() && !MainDone()) {
        const auto& queue = signals_[name];
        if (queue.empty() || queue.front().seq > position_) break;
        Waiter waiter = waiters.front();
        waiters.pop_front();
        Resume(waiter);
        progressed = true;
      }
    }
  }
}

Result<void> WorkflowContext::CheckDeterminism(bool finished) const {
  if (!divergence_.empty()) return Err(Errc::kNondeterminism, RunName() + ": " + divergence_);
  if (pending_history_.empty()) return Ok();
  // The code blocked (or finished) without issuing a step its history records: it no longer
  // takes the path the run took. The earliest such step in the history names it.
  auto first = pending_history_.begin();
  for (auto it = first; it != pending_history_.end(); ++it) {
    if (it->second.seq < first->second.seq) first = it;
  }
  const std::string& step_id = first->first;
  const std::string what = first->second.Describe();
  return Err(Errc::kNondeterminism,
             RunName() + ": the history records " + what + " at step '" + step_id +
                 "', but the code " + (finished ? "finished" : "blocked") +
                 " without issuing it" +
                 (first_new_step_.empty() ? std::string()
                                          : " (it issued " + first_new_step_ + " instead)") +
                 std::string(kPatchAdvice));
}

}  // namespace reckon
