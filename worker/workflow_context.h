// WorkflowContext: everything workflow code may touch. A workflow is a C++20 coroutine
//
//     Task<WorkflowOutcome> Refund(WorkflowContext& ctx, boost::json::value input);
//
// that reaches the world only through its context: tool calls, durable sleeps, signals, and
// the time and randomness the context records. It must be deterministic: the same code over
// the same history issues the same commands, because after a crash the history is replayed
// into a fresh coroutine and every recorded result is handed back without running anything.
//
// Step ids: each command gets the next number of a per-run counter, "<tool>#<n>" for calls
// ("send_refund#2"), "sleep#<n>", "now#<n>", "random#<n>"; a call may name its step instead
// (CallOptions::step_id, used by agent plans). Operation ids derive from the run and the step
// id (engine/operation_id.h).
//
// Changing the code of runs in flight (docs/VERSIONING.md): replay checks that the code issues
// the same steps the history records (calls and their tools, timers, now/random markers,
// signal waits, publishes, patches); the first difference stops the run with
// Errc::kNondeterminism, naming the run, the step, what the history says and what the code
// did. A change is made safe with a patch:
//
//     if (ctx.Patched("refund-v2-notify")) { ...new code... } else { ...old code... }
//
// Patched returns true for a run that reaches it for the first time (and journals a marker
// "patch:<id>", so every later replay of that run takes the new branch too), and false for a
// run whose history had already gone past that point without it: such a run started on the
// old code and replays the old branch. Once no run without the marker is left, the old branch
// goes and Patched becomes DeprecatePatch, which accepts histories with or without the
// marker and records nothing; once no run with the marker is left either, it goes too.
// WaitSignal records a marker "signal:<name>#<k>" (the k-th wait on that name, counted apart
// so the other ids do not move), so the journal says which signal a run waits for
// (engine/run_wait.h); histories without it replay as before, and gain it on replay.
//
// Cancellation reaches the code (worker/workflow_cancelled.h): the await the main code is
// blocked in when a cancel request arrives throws WorkflowCancelledError; code that catches it
// may clean up with durable steps, then `co_return ctx.Cancelled()`.
//
// Calls are issued when Call() is invoked, not when awaited, so independent calls run in
// parallel: issue both, then await both. Replies come back as CallResult: the tool's output,
// or a CallFailure (rejected input, definitive provider rejection, denied approval, attempts
// exhausted, an operation a person resolved as not committed).
//
// Safe forms on GCC 12. GCC 12 miscompiles a brace-initialized aggregate with a destructor
// inside a `co_await` expression: it copies it bitwise and destroys both copies (`free():
// invalid pointer` on the first activation). A default argument `CallOptions options = {}`
// is such an aggregate, and so is `CallOptions{.step_id = "pay"}` when it holds a std::string.
// So Call is two overloads (no default argument), CallOptions is trivially copyable (its step
// id is held inline, worker/step_id.h), and Engine::Start has no default argument either; the
// natural forms are then safe, and tested under ASan (tests/engine/natural_forms_test.cc):
//
//     CallResult r = co_await ctx.Call("reserve", std::move(input));
//     CallResult s = co_await ctx.Call("charge", Input(), CallOptions{.step_id = "pay"});
//     co_await ctx.Sleep(std::chrono::minutes(5));
//     std::string payload = co_await ctx.WaitSignal("approved");
//
// Arguments of class types with constructors (string literals into std::string,
// `std::move(obj)`, `json::value(...)`, `std::string(...)`) are fine. What is not: your own
// aggregate with a std::string (or any destructor) brace-initialized inside a co_await, and a
// lambda with non-trivial captures written there; build either on the line before. A braced
// `json::object{{"a", "b"}}` inside a co_await does not compile on GCC 12 ("array used as
// initializer"): safe, but build it on the line before too.
//
// Owned by its WorkflowInstance; references handed to workflow code stay valid for the life of
// the coroutine. Not thread-safe (one run, one thread).
#pragma once

#include <boost/json/value.hpp>
#include <boost/outcome/basic_result.hpp>  // not result.hpp (decision 55)
#include <boost/outcome/policy/terminate.hpp>

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/engine/command.h"
#include "reckon/engine/operation_id.h"
#include "reckon/storage/event.h"
#include "reckon/worker/step_id.h"
#include "reckon/worker/task.h"
#include "reckon/worker/workflow_cancelled.h"

namespace reckon {

struct ToolOutput {
  boost::json::value output;
  std::string provider_ref;
};

struct CallFailure {
  std::string code;  // invalid_input, unknown_tool, approval_denied, attempts_exhausted, ...
  std::string message;
};

using CallResult = boost::outcome_v2::basic_result<ToolOutput, CallFailure,
                                                   boost::outcome_v2::policy::terminate>;
using WorkflowOutcome = boost::outcome_v2::basic_result<boost::json::value, CallFailure,
                                                        boost::outcome_v2::policy::terminate>;

struct CallOptions {
  StepId step_id;           // empty: "<tool>#<n>"
  CallOverrides overrides;  // tighten the tool's contract for this call only
};
// Trivially copyable, so `CallOptions{...}` inside a co_await is safe on GCC 12 (step_id.h).
static_assert(std::is_trivially_copyable_v<CallOptions> &&
              std::is_trivially_destructible_v<CallOptions>);

// How ctx.StartChild starts a child workflow (engine/child_workflow.h).
struct ChildOptions {
  // What happens to the child if this run closes while it still runs: kCancel (the default)
  // asks it to cancel, kAbandon lets it run on, kWait holds this run's close until it ends.
  ParentClosePolicy policy = ParentClosePolicy::kCancel;
};
static_assert(std::is_trivially_copyable_v<ChildOptions> &&
              std::is_trivially_destructible_v<ChildOptions>);

struct PublishOptions {
  StepId step_id;  // empty: "publish#<n>"; the message id derives from it
};
static_assert(std::is_trivially_copyable_v<PublishOptions> &&
              std::is_trivially_destructible_v<PublishOptions>);

class WorkflowContext {
 public:
  WorkflowContext(std::string workflow_id, std::string run_id);

  class CallAwaiter;
  class TimerAwaiter;
  class SignalAwaiter;
  class AnyAwaiter;
  class ChildAwaiter;
  // What one awaiter waits on (CallAwaiter/TimerAwaiter/SignalAwaiter::ref()), for WhenAny.
  struct WaitRef {
    bool signal = false;  // a signal name, else a step id
    std::string key;
  };

  // Two overloads, not a default argument: see "Safe forms on GCC 12" above.
  CallAwaiter Call(std::string tool, boost::json::value input);
  CallAwaiter Call(std::string tool, boost::json::value input, CallOptions options);
  TimerAwaiter Sleep(std::chrono::milliseconds duration);
  SignalAwaiter WaitSignal(std::string name);
  // Waits for signal `name` for at most `timeout`: its payload (JSON text), or nullopt when the
  // timeout passed first. The timeout is a durable timer (step "sleep#<n>"), so "wait for the
  // person or give up after 3 days" survives restarts; which came first is what the history
  // says, so a replay decides the same. A wait that timed out journals a marker (kind
  // wait_signal_end), so the run no longer shows as waiting for the signal; a signal that
  // arrives later is kept for the next wait on that name. The timer of a wait the signal won
  // stays armed and fires without effect.
  Task<std::optional<std::string>> WaitSignal(std::string name,
                                              std::chrono::milliseconds timeout);
  // Completes when the first of `awaiters` (calls, timers, signal waits of this context,
  // created before) is ready, and returns its index: the one whose result came first in the
  // history. It consumes nothing: await the winner itself for its value (at once), and keep
  // or drop the others. One waiter per signal name at a time.
  //
  //     auto reply = ctx.Call("ask_person", q);
  //     auto later = ctx.Sleep(std::chrono::hours(72));
  //     if (co_await ctx.WhenAny(reply, later) == 0) { CallResult r = co_await reply; ... }
  template <class... Awaiters>
  AnyAwaiter WhenAny(const Awaiters&... awaiters);
  // Starts child workflow `workflow_id` of type `workflow_type` with `input`, and returns an
  // awaiter of its result: the value the child's last run returned, or a CallFailure (code
  // "workflow_cancelled" for a cancelled child, the child's failure code for a failed one,
  // "child_id_in_use" when a workflow of that id exists already, "invalid_child" for a bad id
  // or type, "child_workflows_unavailable" in cluster mode). An empty `workflow_id` derives
  // one from this run and the step (engine/child_workflow.h, DefaultChildId).
  //
  // Step id "child#<n>". The start is journaled with this run's next batch, in the same
  // transaction as the child's first event, so a crash never loses the child nor starts it
  // twice; replay matches the step against the history (type and id) and starts nothing. Like
  // Call, the child starts when StartChild is invoked: start several, then await them.
  //
  //     WorkflowOutcome r = co_await ctx.StartChild("refund", "refund-42", std::move(input));
  ChildAwaiter StartChild(std::string workflow_type, std::string workflow_id,
                          boost::json::value input);
  ChildAwaiter StartChild(std::string workflow_type, std::string workflow_id,
                          boost::json::value input, ChildOptions options);
  // Versioning (see the top of this file): true when this run takes the new branch of change
  // `change_id`. The first call for a change id decides, and its answer holds for the rest of
  // the run. `change_id`: a short name, unique in the workflow, never reused.
  bool Patched(std::string_view change_id);
  // The new branch of `change_id` is the only one left: accepts a history with the patch's
  // marker (it is matched) or without it (the run started after the marker stopped being
  // recorded), and records nothing. A run whose history went past this point on the old
  // branch (it never met the patch) stops with a nondeterminism error: keep Patched while such
  // runs are in flight.
  void DeprecatePatch(std::string_view change_id);
  // Ends this run and starts the next run of the same workflow id with `input`, in one
  // transaction; the next run begins with a history of its own (its WorkflowStarted, then the
  // signals this run received and its code had not consumed). Use it to bound the history of
  // a long-lived workflow (an agent loop every N rounds):
  //
  //     co_return ctx.ContinueAsNew(std::move(next_input));
  //
  // Return its result at once: a command issued after it is a nondeterminism error. Refused
  // while a call the run issued has no result yet (its operation is not terminal, and a new
  // run must not forget an effect that may be happening): the result is then a CallFailure
  // "continue_as_new_refused" whose message names each such step; returning it fails the run.
  WorkflowOutcome ContinueAsNew(boost::json::value input);
  // --- queries and updates (docs/GUIDE.md, "Asking and instructing a running workflow") ---
  //
  // A query handler answers `reckon query` / Engine::Query from the run's state, which it
  // reads through references it captured; nothing is journaled. It must only read: a handler
  // that calls, sleeps, waits, publishes, draws or reads the time is refused
  // (kFailedPrecondition, "query handlers must only read"), and its answer is dropped.
  // Queries are answered while the run is running; a finished run's state is gone with its
  // coroutine, so they are refused then.
  using QueryHandler =
      std::function<Result<boost::json::value>(const boost::json::value& args)>;
  // An update's validator: synchronous and read-only (the same rule as a query handler). An
  // error rejects the update: nothing is journaled and the caller gets its message.
  using UpdateValidator = std::function<Result<void>(const boost::json::value& args)>;
  // An update's handler: a workflow coroutine of its own (it may call, sleep, wait), started
  // when the accepted update reaches the code, in history order. Its result (or failure) is
  // journaled as UpdateCompleted and answers the caller. Its steps are numbered apart from the
  // main code's ("update:<update id>/<tool>#<n>"), so the main code's step ids do not move.
  // The std::function (and so a lambda's captures) is kept alive while a handler runs.
  using UpdateHandler = std::function<Task<WorkflowOutcome>(boost::json::value args)>;
  // Registers (or replaces) the handler of query `name`. Register before the first co_await,
  // so that a replay has it at the same point of the history.
  void OnQuery(std::string name, QueryHandler handler);
  // Registers (or replaces) update `name`. Register before the first co_await, and keep the
  // handler's behaviour a function of its arguments and the run's history: replay re-runs it
  // and checks its steps and its result against the history.
  void OnUpdate(std::string name, UpdateValidator validator, UpdateHandler handler);
  // Completes once no accepted update's handler is running (at once when none is). An update
  // accepted by a run is answered by that run: await this before ctx.ContinueAsNew (which is
  // refused while a handler runs) and before returning, and have the validators reject new
  // updates meanwhile if more may keep coming.
  class UpdatesDoneAwaiter;
  UpdatesDoneAwaiter AllUpdatesDone();

  // Microseconds since the epoch, recorded on first execution and replayed afterwards.
  std::int64_t NowMicros();
  // A random 64-bit value, recorded on first execution and replayed afterwards.
  std::uint64_t Random();
  // Publishes `payload` (UTF-8 text, commonly JSON) to the NATS subject `subject` through the
  // transactional outbox (engine/outbox_message.h): the message is journaled with this step's
  // events, in the same transaction, and a dispatcher delivers it once that commit is durable;
  // the code does not wait for the broker. Step id "publish#<n>". Returns the message id,
  // derived from the workflow id and the step id, which the broker (Nats-Msg-Id) and consumers
  // deduplicate by. On replay nothing new is journaled; a publish that differs from the one
  // journaled at its step (subject or payload) is a nondeterminism error that stops the run.
  // kInvalidArgument (nothing journaled, the step id is used) for a subject that breaks the
  // NATS rule, a payload over 256 KiB or not UTF-8.
  Result<std::string> Publish(std::string_view subject, std::string_view payload);
  // The same at the step id `options.step_id` (agent plans publish at their own step ids);
  // kInvalidArgument for a step id over StepId::kMaxBytes.
  Result<std::string> Publish(std::string_view subject, std::string_view payload,
                              PublishOptions options);

  // --- cancellation (worker/workflow_cancelled.h) -----------------------------------------
  // True once a cancel request reached the code (from the point of the history where the
  // await threw WorkflowCancelledError on): clean-up code can ask.
  bool cancel_requested() const { return cancel_.has_value(); }
  // The canceller's reason; empty before a request, or when they gave none.
  std::string cancel_reason() const { return cancel_ ? cancel_->reason : std::string(); }
  // The outcome that ends the run as cancelled once the code has cleaned up (a CallFailure of
  // code "workflow_cancelled"); without a cancel request in the history the run fails with it.
  WorkflowOutcome Cancelled() const;

  const std::string& workflow_id() const { return workflow_id_; }
  const std::string& run_id() const { return run_id_; }
  // The run this one continues (ContinueAsNew), or empty.
  const std::string& previous_run_id() const { return previous_run_id_; }

  // --- for WorkflowInstance only ---
  struct RunningUpdate;
  // A suspended coroutine and the code it belongs to (the main code: nullptr, or an update's
  // handler), so that steps issued after it resumes are numbered in the right scope.
  struct Waiter {
    std::coroutine_handle<> handle;
    RunningUpdate* scope = nullptr;
    explicit operator bool() const { return static_cast<bool>(handle); }
  };
  struct Step {
    std::optional<CallResult> result;   // calls
    std::optional<WorkflowOutcome> child_result;  // child workflows
    bool fired = false;                 // timers
    std::int64_t seq = 0;               // of the event that completed it (WhenAny's order)
    Waiter waiter;
  };
  // The main coroutine (its end ends queries and stops update handlers from resuming).
  void SetMain(const Task<WorkflowOutcome>* main) { main_ = main; }
  // Query `name` with `args` (kNotFound: no such handler; kFailedPrecondition: the handler
  // issued a command, or the run's code finished); its reply.
  Result<boost::json::value> AnswerQuery(const std::string& name, const boost::json::value& args);
  // Runs update `name`'s validator (kNotFound: no such update; the validator's error as is).
  Result<void> ValidateUpdate(const std::string& name, const boost::json::value& args);
  void BeginActivation(std::int64_t now_us, std::uint64_t random_seed);
  Result<void> Observe(const storage::Event& event);  // folds one event of the history
  // Hands the code what the history holds for it one event at a time, in history order (a
  // result, a timer, a signal, an accepted update), resuming whoever waits on it, until the
  // code has seen everything or the main code finished. A replay of the whole history thus
  // resumes the main code and update handlers in the order they ran the first time.
  void RunReady();
  std::vector<Command> TakeCommands() { return std::move(commands_); }
  void AddCommand(Command command) { commands_.push_back(std::move(command)); }
  // kNondeterminism if the code diverged from the history.
  Result<void> CheckDeterminism(bool finished) const;
  // The command that ends the run when the code returns success: ContinueAsNew if the code
  // asked for it, else none.
  std::optional<reckon::ContinueAsNew> TakeContinuation();
  // Moves the signals received and not consumed into `out` (a continuation held while a child
  // of policy wait ran takes those that came meanwhile).
  void CarrySignals(std::vector<CarriedSignal>& out);
  // True while a child started with policy kWait has not ended: the run must not close yet.
  bool HasOpenWaitChildren() const;

 private:
  std::string NextStepId(std::string_view kind);
  // Notes that the code issued `step_id` (`what` names it for messages): it matches the
  // history's step of that id, if any; a step issued after ContinueAsNew is a divergence.
  void Issue(const std::string& step_id, std::string_view what);
  // Records the first divergence seen (later ones follow from it).
  void Diverge(std::string message);
  // True when every step the history records has been issued again by the code: the code is
  // past the end of the history, executing for the first time.
  bool AtFrontier() const { return pending_history_.empty(); }
  // "run '<workflow id>' (run id <run id>)", for messages.
  std::string RunName() const;
  // WhenAny: the index of the ready wait that completed first (lowest seq), or -1.
  int Winner(const std::vector<WaitRef>& waits) const;
  void Register(const std::vector<WaitRef>& waits, std::coroutine_handle<> h);
  void Unregister(const std::vector<WaitRef>& waits, std::coroutine_handle<> h);
  // Journals that the k-th wait on `name` timed out.
  void EndWait(const std::string& name, int k);
  // A call whose step id is too long: it fails at once, nothing is scheduled.
  CallAwaiter RefusedCall(const std::string& tool);
  // `step_id` completed at history position `seq`: the code may see it once RunReady gets
  // there.
  void Ready(const std::string& step_id, std::int64_t seq);
  // Resumes what can run at the current history position.
  void Drain();
  void Resume(Waiter waiter);
  bool MainDone() const { return main_ != nullptr && main_->done(); }
  // Step ids and counters of the code running now (main or an update handler).
  std::string Scoped(std::string step_id) const;
  int& Counter();
  std::map<std::string, int>& SignalWaits();
  // The cancel request at the current history position reached the code: the await the main
  // code is blocked in throws WorkflowCancelledError (nothing happens once the main code is
  // done).
  void DeliverCancel(std::string reason, std::string requested_by);
  // The main code's suspended coroutine, unregistered from whatever it waited on; null when
  // the main code is not blocked in an await of this context. `signal`: the signal name it
  // waited for, if any.
  std::coroutine_handle<> TakeMainWaiter(std::string& signal);
  // Called first by every awaiter's await_resume: throws when the awaiter was resumed to be
  // told of a cancellation (DeliverCancel), once.
  void ThrowIfCancelDelivered();
  // An accepted update reached the code: its handler starts (or it completes at once with an
  // error when the code has no such update).
  void StartUpdate(const std::string& update_id, const std::string& name,
                   const std::string& args_json);
  void CompleteFinishedUpdates();
  void CompleteUpdateWith(const std::string& update_id, reckon::CompleteUpdate done);
  // Runs a query handler or validator; refuses it if it issued anything.
  template <class F>
  auto Inspect(std::string_view what, const std::string& name, F f)
      -> decltype(f());

  std::string workflow_id_, run_id_, previous_run_id_;
  IdScope id_scope_;
  std::int64_t now_us_ = 0;
  std::uint64_t random_state_ = 0;
  int counter_ = 0;
  std::map<std::string, int> signal_waits_;             // WaitSignal calls so far, by name
  // Keyed by step or operation id, looked up once or more per call: hash maps, since ids share
  // long prefixes ("noop#1", "noop#2", ...) that an ordered map compares again at every level.
  // Nothing iterates them where order would reach a command or the journal.
  std::unordered_map<std::string, Step> steps_;          // by step id
  std::unordered_map<std::string, std::string> step_of_op_;     // operation id -> step id
  std::unordered_map<std::string, std::string> history_calls_;  // step id -> tool, from the history
  std::unordered_set<std::string> history_timers_;
  std::unordered_map<std::string, std::string> history_markers_;  // step id -> value json
  struct HistoryChild {
    std::string workflow_type, workflow_id;
  };
  std::map<std::string, HistoryChild> history_children_;  // step id -> what the history started
  std::map<std::string, ParentClosePolicy> wait_children_;  // step id -> policy, started here
  std::unordered_set<std::string> issued_;              // steps the code issued this life
  // Steps the history records (calls, timers, markers) that the code has not issued yet this
  // life, with what the history says of each, for messages.
  struct HistoryStep {
    std::int64_t seq = 0;  // of the event that records it
    std::string what;      // or, for a call, the tool's name (Describe)
    bool call = false;
    std::string Describe() const { return call ? "a call to '" + what + "'" : what; }
  };
  std::unordered_map<std::string, HistoryStep> pending_history_;
  std::optional<reckon::ContinueAsNew> continuation_;  // ContinueAsNew accepted
  std::string first_new_step_;  // the first step issued that the history lacks, mid-history
  std::unordered_map<std::string, std::string> call_steps_;  // call step id -> tool, issued this life
  std::map<std::string, bool> patches_;                 // patch step id -> branch taken
  std::deque<std::string> ready_;                       // steps whose results just arrived
  struct BufferedSignal {
    std::string payload_json;
    std::string sent_by;
    std::int64_t seq = 0;
  };
  std::map<std::string, std::deque<BufferedSignal>> signals_;  // received, not consumed, by name
  std::map<std::string, std::deque<Waiter>> signal_waiters_;
  // History events the code has not been handed yet, by seq (RunReady).
  struct News {
    enum Kind { kStep, kSignal, kUpdate, kCancel } kind = kStep;
    std::string key;  // step id, signal name or update id
    std::string name, args_json;  // an update's; a cancel's reason and requester
  };
  std::map<std::int64_t, News> news_;
  std::int64_t position_ = 0;  // the seq of the last event handed to the code
  const Task<WorkflowOutcome>* main_ = nullptr;
  std::map<std::string, QueryHandler> queries_;
  struct UpdateRegistration {
    UpdateValidator validator;
    UpdateHandler handler;
  };
  std::map<std::string, std::shared_ptr<UpdateRegistration>> updates_;
  std::map<std::string, std::unique_ptr<RunningUpdate>> running_updates_;  // by update id
  RunningUpdate* scope_ = nullptr;  // the update handler running now; nullptr: the main code
  struct RecordedUpdate {
    std::string result_json, error_code;
  };
  std::map<std::string, RecordedUpdate> history_update_results_;  // by update id
  bool inspecting_ = false;  // a query handler or validator runs
  std::vector<Waiter> updates_done_waiters_;  // AllUpdatesDone()
  bool UpdatesOpen() const;
  std::vector<Command> commands_;
  std::string divergence_;  // first nondeterminism seen
  struct CancelNotice {
    std::string reason, requested_by;
  };
  std::optional<CancelNotice> cancel_;  // the request that reached the code
  bool cancel_delivery_ = false;        // DeliverCancel is resuming the main code to throw
};

// An accepted update whose handler runs (or ran) in this context.
struct WorkflowContext::RunningUpdate {
  std::string update_id;
  std::string prefix;  // "update:<update id>/": its step ids
  int counter = 0;
  std::map<std::string, int> signal_waits;
  std::shared_ptr<UpdateRegistration> registration;  // keeps the handler alive while it runs
  Task<WorkflowOutcome> task;
  bool finished = false;
};

class WorkflowContext::UpdatesDoneAwaiter {
 public:
  explicit UpdatesDoneAwaiter(WorkflowContext* ctx) : ctx_(ctx) {}
  bool await_ready() const { return !ctx_->UpdatesOpen(); }
  void await_suspend(std::coroutine_handle<> h) {
    ctx_->updates_done_waiters_.push_back(Waiter{h, ctx_->scope_});
  }
  void await_resume() { ctx_->ThrowIfCancelDelivered(); }

 private:
  WorkflowContext* ctx_;
};

class WorkflowContext::CallAwaiter {
 public:
  CallAwaiter(WorkflowContext* ctx, std::string step_id) : ctx_(ctx), step_id_(std::move(step_id)) {}
  const std::string& step_id() const { return step_id_; }
  WaitRef ref() const { return WaitRef{false, step_id_}; }
  bool await_ready() const {
    const Step& step = ctx_->steps_[step_id_];
    return step.result.has_value() && step.seq <= ctx_->position_;
  }
  void await_suspend(std::coroutine_handle<> h) {
    ctx_->steps_[step_id_].waiter = Waiter{h, ctx_->scope_};
  }
  CallResult await_resume() {
    ctx_->ThrowIfCancelDelivered();
    return *ctx_->steps_[step_id_].result;
  }

 private:
  WorkflowContext* ctx_;
  std::string step_id_;
};

class WorkflowContext::TimerAwaiter {
 public:
  TimerAwaiter(WorkflowContext* ctx, std::string step_id) : ctx_(ctx), step_id_(std::move(step_id)) {}
  WaitRef ref() const { return WaitRef{false, step_id_}; }
  bool await_ready() const {
    const Step& step = ctx_->steps_[step_id_];
    return step.fired && step.seq <= ctx_->position_;
  }
  void await_suspend(std::coroutine_handle<> h) {
    ctx_->steps_[step_id_].waiter = Waiter{h, ctx_->scope_};
  }
  void await_resume() { ctx_->ThrowIfCancelDelivered(); }

 private:
  WorkflowContext* ctx_;
  std::string step_id_;
};

class WorkflowContext::SignalAwaiter {
 public:
  SignalAwaiter(WorkflowContext* ctx, std::string name) : ctx_(ctx), name_(std::move(name)) {}
  WaitRef ref() const { return WaitRef{true, name_}; }
  bool await_ready() const {
    const auto& queue = ctx_->signals_[name_];
    return !queue.empty() && queue.front().seq <= ctx_->position_;
  }
  void await_suspend(std::coroutine_handle<> h) {
    ctx_->signal_waiters_[name_].push_back(Waiter{h, ctx_->scope_});
  }
  // The signal's payload as JSON text.
  std::string await_resume() {
    ctx_->ThrowIfCancelDelivered();
    auto& queue = ctx_->signals_[name_];
    std::string payload = std::move(queue.front().payload_json);
    queue.pop_front();
    return payload;
  }

 private:
  WorkflowContext* ctx_;
  std::string name_;
};

class WorkflowContext::ChildAwaiter {
 public:
  ChildAwaiter(WorkflowContext* ctx, std::string step_id, std::string workflow_id)
      : ctx_(ctx), step_id_(std::move(step_id)), workflow_id_(std::move(workflow_id)) {}
  const std::string& step_id() const { return step_id_; }
  // The child's workflow id as the code gave it (empty: derived by the engine).
  const std::string& workflow_id() const { return workflow_id_; }
  WaitRef ref() const { return WaitRef{false, step_id_}; }
  bool await_ready() const {
    const Step& step = ctx_->steps_[step_id_];
    return step.child_result.has_value() && step.seq <= ctx_->position_;
  }
  void await_suspend(std::coroutine_handle<> h) {
    ctx_->steps_[step_id_].waiter = Waiter{h, ctx_->scope_};
  }
  WorkflowOutcome await_resume() {
    ctx_->ThrowIfCancelDelivered();
    return *ctx_->steps_[step_id_].child_result;
  }

 private:
  WorkflowContext* ctx_;
  std::string step_id_;
  std::string workflow_id_;
};

class WorkflowContext::AnyAwaiter {
 public:
  AnyAwaiter(WorkflowContext* ctx, std::vector<WaitRef> waits)
      : ctx_(ctx), waits_(std::move(waits)) {}
  bool await_ready() const { return ctx_->Winner(waits_) >= 0; }
  void await_suspend(std::coroutine_handle<> h) {
    waiter_ = h;
    ctx_->Register(waits_, h);
  }
  std::size_t await_resume() {
    if (waiter_) ctx_->Unregister(waits_, waiter_);
    ctx_->ThrowIfCancelDelivered();
    return static_cast<std::size_t>(ctx_->Winner(waits_));
  }

 private:
  WorkflowContext* ctx_;
  std::vector<WaitRef> waits_;
  std::coroutine_handle<> waiter_;
};

template <class... Awaiters>
WorkflowContext::AnyAwaiter WorkflowContext::WhenAny(const Awaiters&... awaiters) {
  static_assert(sizeof...(Awaiters) > 0, "WhenAny needs something to wait on");
  std::vector<WaitRef> waits;
  (waits.push_back(awaiters.ref()), ...);
  return AnyAwaiter(this, std::move(waits));
}

}  // namespace reckon
