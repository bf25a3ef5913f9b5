// WorkflowCancelledError: how a cancellation reaches workflow code.
//
// `reckon cancel`, Engine::Cancel, a parent's close policy or a person journals
// WorkflowCancelRequested (engine/decider.h says when it is refused). At that point of the
// history, the await the main workflow code is blocked in (a call, a sleep, a signal wait, a
// child, WhenAny, AllUpdatesDone) throws WorkflowCancelledError instead of returning. The
// calls the engine had not started yet fail with code "workflow_cancelled"; calls that may have
// acted were settled before the request was accepted.
//
// Code that lets the error escape ends the run as cancelled, as before. Code that catches it
// may clean up with durable steps of its own (calls, sleeps, children: each is journaled and
// survives a crash like any other step), then end the run as it chooses:
//
//     bool cancelled = false;
//     try {
//       co_await ctx.Sleep(std::chrono::hours(72));
//     } catch (const WorkflowCancelledError&) {
//       cancelled = true;  // C++ allows no co_await inside a handler: note it, act after
//     }
//     if (cancelled) {
//       co_await ctx.Call("release_hold", hold);
//       co_return ctx.Cancelled();  // the run ends cancelled
//     }
//
// The error is thrown once, at the await the code was blocked in when the request reached
// it; the awaits of the clean-up work normally. Update handlers are not interrupted. Replay
// throws it at the same point of the history, so clean-up is deterministic like any code.
// A run whose code never returns stays open (and shows that its cancel was requested).
#pragma once

#include <exception>
#include <string>

namespace reckon {

class WorkflowCancelledError : public std::exception {
 public:
  WorkflowCancelledError(std::string reason, std::string requested_by)
      : reason_(std::move(reason)),
        requested_by_(std::move(requested_by)),
        what_("the workflow was cancelled" +
              (requested_by_.empty() ? std::string() : " by " + requested_by_) +
              (reason_.empty() ? std::string() : ": " + reason_)) {}

  const char* what() const noexcept override { return what_.c_str(); }
  // Why, as the canceller said; empty when they gave no reason.
  const std::string& reason() const { return reason_; }
  // The principal who asked (server mode); empty in embedded mode.
  const std::string& requested_by() const { return requested_by_; }

 private:
  std::string reason_;
  std::string requested_by_;
  std::string what_;
};

}  // namespace reckon
