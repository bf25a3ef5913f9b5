// WorkflowContext: how a cancel request reaches the main code (worker/workflow_cancelled.h).
#include <algorithm>

#include "reckon/worker/workflow_context.h"

namespace reckon {

WorkflowOutcome WorkflowContext::Cancelled() const {
  std::string message = "the workflow was cancelled";
  if (cancel_ && !cancel_->reason.empty()) message += ": " + cancel_->reason;
  return WorkflowOutcome(CallFailure{std::string(kWorkflowCancelledCode), std::move(message)});
}

void WorkflowContext::DeliverCancel(std::string reason, std::string requested_by) {
  if (cancel_) return;  // the engine journals one request per run
  cancel_ = CancelNotice{std::move(reason), std::move(requested_by)};
  if (MainDone()) return;
  std::string signal;
  std::coroutine_handle<> main = TakeMainWaiter(signal);
  if (!main) return;
  // The wait is over: journal its end, so that the run no longer shows as waiting for the
  // signal while its code cleans up (RunState::OutstandingSignalWaits). Main code waits on a
  // name one wait at a time, so it is the latest wait on that name.
  if (!signal.empty()) EndWait(signal, SignalWaits()[signal]);
  cancel_delivery_ = true;
  Resume(Waiter{main, nullptr});
  cancel_delivery_ = false;  // consumed by the awaiter, unless the code was not in one of ours
}

std::coroutine_handle<> WorkflowContext::TakeMainWaiter(std::string& signal) {
  // The main code waits in exactly one await at a time (WhenAny registers one handle for each
  // of its waits); update handlers have a scope of their own and go on.
  std::coroutine_handle<> main;
  for (const auto& [step_id, step] : steps_) {
    if (step.waiter && step.waiter.scope == nullptr) {
      main = step.waiter.handle;
      break;
    }
  }
  for (const auto& [name, waiters] : signal_waiters_) {
    for (const Waiter& waiter : waiters) {
      if (!main && waiter.scope == nullptr) main = waiter.handle;
    }
  }
  for (const Waiter& waiter : updates_done_waiters_) {
    if (!main && waiter.scope == nullptr) main = waiter.handle;
  }
  if (!main) return main;
  const auto is_main = [main](const Waiter& waiter) { return waiter.handle == main; };
  for (auto& [step_id, step] : steps_) {
    if (is_main(step.waiter)) step.waiter = {};
  }
  for (auto& [name, waiters] : signal_waiters_) {
    if (std::any_of(waiters.begin(), waiters.end(), is_main)) signal = name;
    waiters.erase(std::remove_if(waiters.begin(), waiters.end(), is_main), waiters.end());
  }
  updates_done_waiters_.erase(
      std::remove_if(updates_done_waiters_.begin(), updates_done_waiters_.end(), is_main),
      updates_done_waiters_.end());
  return main;
}

void WorkflowContext::ThrowIfCancelDelivered() {
  if (!cancel_delivery_) return;
  cancel_delivery_ = false;
  throw WorkflowCancelledError(cancel_->reason, cancel_->requested_by);
}

}  // namespace reckon
