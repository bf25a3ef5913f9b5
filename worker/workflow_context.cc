#include "reckon/worker/workflow_context.h"

#include <boost/json/serialize.hpp>

#include "reckon/base/jcs.h"
#include "reckon/engine/operation_id.h"
#include "reckon/engine/outbox_message.h"

namespace reckon {

using namespace storage;
namespace json = boost::json;

WorkflowContext::WorkflowContext(std::string workflow_id, std::string run_id)
    : workflow_id_(std::move(workflow_id)), run_id_(std::move(run_id)) {}

std::string WorkflowContext::NextStepId(std::string_view kind) {
  return std::string(kind) + "#" + std::to_string(++counter_);
}

WorkflowContext::CallAwaiter WorkflowContext::Call(std::string tool, json::value input) {
  return Call(std::move(tool), std::move(input), CallOptions{});
}

WorkflowContext::CallAwaiter WorkflowContext::Call(std::string tool, json::value input,
                                                   CallOptions options) {
  if (options.step_id.too_long()) return RefusedCall(tool);
  std::string step_id = options.step_id.empty() ? NextStepId(tool) : options.step_id.str();
  if (!options.step_id.empty()) ++counter_;  // keep numbering stable whichever form is used
  step_of_op_[OperationIdFor(workflow_id_, step_id)] = step_id;
  steps_[step_id];
  if (issued_.count(step_id) && divergence_.empty()) {
    divergence_ = "step '" + step_id + "' was issued twice; step ids must be unique";
  }
  auto recorded = history_calls_.find(step_id);
  if (recorded != history_calls_.end() && !issued_.count(step_id)) --unmatched_history_calls_;
  issued_.insert(step_id);
  if (recorded != history_calls_.end()) {
    if (recorded->second != tool && divergence_.empty()) {
      divergence_ = "step '" + step_id + "' calls '" + tool +
                    "', but the history records a call to '" + recorded->second +
                    "'; the workflow code changed incompatibly";
    }
    commands_.push_back(
        ScheduleCall{step_id, std::move(tool), std::move(input), true, options.overrides});
  } else {
    commands_.push_back(
        ScheduleCall{step_id, std::move(tool), std::move(input), false, options.overrides});
  }
  return CallAwaiter(this, std::move(step_id));
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
  issued_.insert(step_id);
  if (!history_timers_.count(step_id)) {
    commands_.push_back(StartTimer{step_id, now_us_ + duration.count() * 1000});
  }
  return TimerAwaiter(this, std::move(step_id));
}

WorkflowContext::SignalAwaiter WorkflowContext::WaitSignal(std::string name) {
  // Journaled, so that what the run waits on is known without its code; a count of its own
  // per name keeps every other step id as it was before waits were recorded.
  std::string step_id = "signal:" + name + "#" + std::to_string(++signal_waits_[name]);
  if (!history_markers_.count(step_id)) {
    std::string value = json::serialize(json::string(name));
    history_markers_[step_id] = value;
    commands_.push_back(RecordMarker{std::move(step_id), std::string(kWaitSignalMarker), value});
  }
  return SignalAwaiter(this, std::move(name));
}

std::int64_t WorkflowContext::NowMicros() {
  std::string step_id = NextStepId("now");
  issued_.insert(step_id);
  if (auto it = history_markers_.find(step_id); it != history_markers_.end()) {
    return std::stoll(it->second);
  }
  std::string value = std::to_string(now_us_);
  history_markers_[step_id] = value;
  commands_.push_back(RecordMarker{step_id, "now", value});
  return now_us_;
}

std::uint64_t WorkflowContext::Random() {
  std::string step_id = NextStepId("random");
  issued_.insert(step_id);
  if (auto it = history_markers_.find(step_id); it != history_markers_.end()) {
    return std::stoull(it->second);
  }
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
    ++counter_;  // numbered like any publish, so later ids do not move
    return Err(Errc::kInvalidArgument,
               "a publish to '" + std::string(subject) + "' names a step id longer than " +
                   std::to_string(StepId::kMaxBytes) + " bytes; choose a shorter one");
  }
  std::string step_id =
      options.step_id.empty() ? NextStepId(kPublishMarker) : options.step_id.str();
  if (!options.step_id.empty()) ++counter_;  // keep numbering stable whichever form is used
  if (issued_.count(step_id)) {
    if (divergence_.empty()) {
      divergence_ = "step '" + step_id + "' was issued twice; step ids must be unique";
    }
    return Err(Errc::kNondeterminism, "run '" + workflow_id_ + "': " + divergence_);
  }
  issued_.insert(step_id);
  RECKON_TRY(std::string value, EncodePublishMarker(subject, payload));
  if (auto it = history_markers_.find(step_id); it != history_markers_.end()) {
    if (it->second != value) {
      if (divergence_.empty()) {
        divergence_ = "step '" + step_id + "' publishes to '" + std::string(subject) +
                      "' a message that differs from the one journaled at that step; the "
                      "workflow code changed incompatibly";
      }
      return Err(Errc::kNondeterminism, "run '" + workflow_id_ + "': " + divergence_);
    }
  } else {
    history_markers_[step_id] = value;
    commands_.push_back(RecordMarker{step_id, std::string(kPublishMarker), std::move(value)});
  }
  return MessageIdFor(workflow_id_, step_id);
}

void WorkflowContext::BeginActivation(std::int64_t now_us, std::uint64_t random_seed) {
  now_us_ = now_us;
  if (random_state_ == 0) random_state_ = random_seed | 1;
}

void WorkflowContext::Ready(const std::string& step_id) { ready_.push_back(step_id); }

Result<void> WorkflowContext::Observe(const Event& event) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, OperationPrepared>) {
          if (history_calls_.emplace(e.step_id, e.tool).second && !issued_.count(e.step_id)) {
            ++unmatched_history_calls_;
          }
          step_of_op_[e.operation_id] = e.step_id;
        } else if constexpr (std::is_same_v<T, OperationCommitted>) {
          auto it = step_of_op_.find(e.operation_id);
          if (it == step_of_op_.end()) return;
          auto parsed = ParseStrictJson(e.result_json);
          steps_[it->second].result =
              CallResult(ToolOutput{parsed ? std::move(parsed).value() : json::value(),
                                    e.provider_ref});
          Ready(it->second);
        } else if constexpr (std::is_same_v<T, OperationRejected>) {
          auto it = step_of_op_.find(e.operation_id);
          if (it == step_of_op_.end()) return;
          steps_[it->second].result = CallResult(CallFailure{e.code, e.message});
          Ready(it->second);
        } else if constexpr (std::is_same_v<T, ApprovalDenied>) {
          auto it = step_of_op_.find(e.operation_id);
          if (it == step_of_op_.end()) return;
          steps_[it->second].result =
              CallResult(CallFailure{"approval_denied", "denied by " + e.denied_by + ": " + e.reason});
          Ready(it->second);
        } else if constexpr (std::is_same_v<T, TimerStarted>) {
          history_timers_.insert(e.timer_id);
        } else if constexpr (std::is_same_v<T, TimerFired>) {
          steps_[e.timer_id].fired = true;
          Ready(e.timer_id);
        } else if constexpr (std::is_same_v<T, SignalReceived>) {
          signals_[e.name].push_back(e.payload_json);
        } else if constexpr (std::is_same_v<T, MarkerRecorded>) {
          history_markers_[e.step_id] = e.value_json;
          if (e.kind == kPublishMarker) history_publishes_.insert(e.step_id);
        }
      },
      event.body);
  return Ok();
}

void WorkflowContext::RunReady() {
  bool progressed = true;
  while (progressed) {
    progressed = false;
    while (!ready_.empty()) {
      std::string step_id = std::move(ready_.front());
      ready_.pop_front();
      auto it = steps_.find(step_id);
      if (it == steps_.end() || !it->second.waiter) continue;
      auto waiter = std::exchange(it->second.waiter, {});
      waiter.resume();
      progressed = true;
    }
    for (auto& [name, waiters] : signal_waiters_) {
      while (!waiters.empty() && !signals_[name].empty()) {
        auto waiter = waiters.front();
        waiters.pop_front();
        waiter.resume();
        progressed = true;
      }
    }
  }
}

Result<void> WorkflowContext::CheckDeterminism(bool finished) const {
  if (!divergence_.empty()) {
    return Err(Errc::kNondeterminism, "run '" + workflow_id_ + "': " + divergence_);
  }
  for (const std::string& step_id : history_publishes_) {
    if (!issued_.count(step_id)) {
      return Err(Errc::kNondeterminism,
                 "run '" + workflow_id_ + "': the history has publish step '" + step_id +
                     "' that the code no longer issues" +
                     (finished ? " before finishing" : " before blocking") +
                     "; the workflow code changed incompatibly");
    }
  }
  if (unmatched_history_calls_ == 0) return Ok();
  for (const auto& [step_id, tool] : history_calls_) {
    if (!issued_.count(step_id)) {
      return Err(Errc::kNondeterminism,
                 "run '" + workflow_id_ + "': the history has step '" + step_id + "' (" + tool +
                     ") that the code no longer issues" +
                     (finished ? " before finishing" : " before blocking") +
                     "; the workflow code changed incompatibly");
    }
  }
  return Ok();
}

}  // namespace reckon
