// Engine: owns runs. It keeps each active run's state (a fold of its journal), decides every
// transition through a Decider, makes it durable through group commit, and only then acts:
// starts attempts, arms timers, runs lookups. It never runs user code: workflow code runs in a
// WorkflowHost and tool calls in a ToolDispatcher (engine/workflow_host.h,
// engine/tool_dispatcher.h).
//
// Concurrency: the engine lives on ONE single-threaded executor (an io_context run by one
// thread, or a strand). Every public method must be called, and every awaitable awaited, on
// that executor. Each run has at most one batch in flight; inputs arriving meanwhile queue and
// form the next batch, while batches of different runs share commits.
//
// Failure: if a commit fails, what reached the disk is unknown, so the engine stops (failed()
// turns true, every run stops) and the process must restart; a read that finds the journal
// damaged (Errc::kCorruption) stops it too; recovery then resumes every run
// from the journal. A bug (illegal transition) stops only the run it happened in.
//
// Bad input: Start, Signal, Cancel, DecideApproval and Resolve first check what they are given
// (engine/input_checks.h: identifiers, one-line texts, no value for a secret field in an
// input or a signal payload) and refuse it with Errc::kInvalidArgument, journaling nothing.
//
// Observing: sinks (engine/trace_sink.h) hear of every committed batch and every stopped run;
// OnFailed hears of the engine's stop; UntilIdle() completes when nothing shown is pending,
// UntilSettled(id) when one run can go no further by itself.
//
// Lifetime: the journal, contracts, host, dispatcher, clock and sinks passed in must outlive
// the engine.
//
// Awaiting on GCC 12: GCC 12 miscompiles a brace-initialized aggregate with a destructor inside
// a `co_await` expression (it copies it bitwise and destroys both copies), and a default
// argument such as `Options options = {}` is one. No awaitable-returning method here takes a
// default argument or such an aggregate (Start is two overloads), so
// `co_await engine.Start("id", "type", std::move(input))` and
// `co_await engine.Signal("id", "go", "{}")` are safe as written
// (tests/engine/natural_forms_test.cc runs them under ASan). Keep it so when adding methods:
// overload instead of defaulting.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/json/value.hpp>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/engine/clock.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/engine/decider.h"
#include "reckon/engine/run_state.h"
#include "reckon/engine/run_wait.h"
#include "reckon/engine/timer_queue.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/engine/trace_sink.h"
#include "reckon/engine/workflow_host.h"
#include "reckon/storage/group_commit.h"
#include "reckon/storage/journal.h"

namespace reckon {

// How long a run's history may grow (EngineOptions::history; docs/OPERATIONS.md, "History size
// limits"). The defaults leave a busy agent loop weeks of rounds, and stop a run whose code
// forgot to continue as new before its history slows every replay of it.
struct HistoryLimits {
  std::int64_t warn_events = 10'000;
  std::int64_t max_events = 50'000;
};
inline constexpr std::string_view kHistoryTooLarge = "history_too_large";

struct EngineOptions {
  DeciderOptions decider;
  // How long one reconciliation lookup may take before it counts as still_unknown.
  std::chrono::milliseconds lookup_timeout{5000};
  // Where commits run. Empty: inline on the engine's executor (one thread does everything).
  // A separate thread (e.g. a one-thread pool) lets the engine go on reading the network
  // while a commit waits for its fsync, so more batches share the next commit; then every
  // read the engine makes goes through `reader`, a second connection to the same file, since
  // the journal itself belongs to the commit thread.
  boost::asio::any_io_executor commit_executor;
  storage::Journal* reader = nullptr;
  // Told of each group commit (storage/group_commit.h), on the commit executor: metrics of
  // commit latency and group size. Empty: nothing is measured.
  storage::GroupCommitter::CommitObserver on_commit;
  // History size limits, in events per run (its journal's next_seq - 1); 0 turns one off.
  // At the soft limit the engine logs a warning once per run (and once more after each
  // restart); past the hard limit it fails the run with code `history_too_large` and a
  // message recommending continue-as-new, in the batch that crossed it. The limit is checked
  // after the workflow code reacted, so a run's history ends at most one batch past it.
  HistoryLimits history;
  // Whether runs may start child workflows (ctx.StartChild; engine/child_workflow.h). Cluster
  // mode turns it off: a child's start is committed with its parent's batch, and its workflow
  // id may belong to another server's shard. Off, a child start is refused
  // (child_workflows_unavailable) and the code sees the failure.
  bool child_workflows = true;
};

// What a caller can see of a run.
// What Engine::Start journals besides the type and input.
struct StartOptions {
  std::string definition_hash;  // what defines the run besides its type and input (a plan)
  std::string started_by;       // who started it (server mode: the principal)
  // 0: none. Else the run's deadline, journaled; past it the run ends as engine/run_timeout.h
  // says (failed with code run_timeout, never forgetting an effect that may exist).
  std::chrono::milliseconds run_timeout{0};
};

struct RunSummary {
  storage::RunRef ref;
  std::string workflow_type;
  storage::RunStatus status = storage::RunStatus::kRunning;
  std::string stuck_reason;  // non-empty when the engine stopped driving the run
  RunWait wait;              // what the run waits on (engine/run_wait.h)
  std::string result_json;
  int committed_operations = 0;
  std::vector<OperationRecord> operations;
  // A cancel was requested and the run is still open: its code is cleaning up
  // (worker/workflow_cancelled.h).
  bool cancel_requested = false;
};

// An update to a running run (Engine::Update; ctx.OnUpdate).
struct UpdateRequest {
  std::string update_id;  // the caller's idempotency key; empty: the engine chooses one
  std::string name;
  std::string args_json;  // JSON; journaled canonical
  std::string sent_by;    // the principal (server mode)
};

// The journaled answer to an update: the handler's result, or its error (error_code set; also
// "run_finished" when the run ended before the handler returned).
struct UpdateOutcome {
  std::string update_id;
  std::string result_json;
  std::string error_code;
  std::string error_message;
};

class Engine {
 public:
  Engine(boost::asio::any_io_executor executor, storage::Journal& journal,
         const ContractRegistry& contracts, WorkflowHost& host, ToolDispatcher& tools,
         Clock& clock, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Loads every running run from the journal and resumes it: replays its code, turns
  // attempts that were in flight into unknown outcomes, re-arms timers. Returns how many runs
  // it resumed. Call once, before anything else.
  boost::asio::awaitable<Result<int>> Recover();
  // Cluster mode (several servers, each owning some shards of the runs): resumes only the
  // running runs for which `owns(workflow_id)` holds and that this engine does not hold
  // already; called each time the server takes shards over. Returns how many it resumed.
  boost::asio::awaitable<Result<int>> Recover(std::function<bool(const std::string&)> owns);

  // Cluster mode: stops driving every run for which `leaving(workflow_id)` holds (its shard
  // goes to another server, or was taken over): its queued requests are answered with
  // Errc::kNotOwner, its timers and the reports of its attempts still running are dropped,
  // and it disappears from Runs() and Describe() (which reads only finished runs from the
  // journal). Attempts on workers are left to finish: the new owner learns their fate from
  // the journal and the provider, never from here. A batch of
  // the run being committed finishes first, and acts on nothing. Completes when no batch of
  // these runs is in flight any more, or after `patience` (a batch may wait on a workflow task
  // no worker takes; the caller's fence refuses what it would write); returns how many runs it
  // let go.
  boost::asio::awaitable<int> Release(std::function<bool(const std::string&)> leaving,
                                      std::string reason, std::chrono::milliseconds patience);

  // Starts a workflow, idempotently: a second start of the same workflow id returns the
  // existing run if the type and input match, else Errc::kAlreadyExists. Completes once the
  // start is durable.
  // `definition_hash` (second form) is journaled with the start: what defines the run besides
  // its type and input, e.g. the canonical hash of an agent plan.
  boost::asio::awaitable<Result<storage::RunRef>> Start(std::string workflow_id,
                                                        std::string workflow_type,
                                                        boost::json::value input);
  boost::asio::awaitable<Result<storage::RunRef>> Start(std::string workflow_id,
                                                        std::string workflow_type,
                                                        boost::json::value input,
                                                        std::string definition_hash);
  // The third form also journals who started the run (server mode: the principal), which
  // separation of duties reads (Decider::ApprovalDecided).
  boost::asio::awaitable<Result<storage::RunRef>> Start(std::string workflow_id,
                                                        std::string workflow_type,
                                                        boost::json::value input,
                                                        StartOptions options);
  // `sent_by` (second form) is journaled with the signal: the principal in server mode.
  boost::asio::awaitable<Result<void>> Signal(std::string workflow_id, std::string name,
                                              std::string payload_json);
  boost::asio::awaitable<Result<void>> Signal(std::string workflow_id, std::string name,
                                              std::string payload_json, std::string sent_by);
  // The third form carries the sender's request id: a signal whose request id the run
  // received already is acknowledged and applied once (Decider::Signal).
  boost::asio::awaitable<Result<void>> Signal(std::string workflow_id, std::string name,
                                              std::string payload_json, std::string sent_by,
                                              std::string request_id);
  // A provider's completion of an operation that answered "accepted" (or is still in flight),
  // keyed by operation id and delivery id (Decider::CompletionArrived says what it does).
  // Completes once its batch is durable. A repeated delivery, or a completion of an operation
  // already settled (in the journal too), is Ok and changes nothing. Errors: kInvalidArgument
  // (no operation or delivery id, oversized fields), kNotFound (no such operation),
  // kNotOwner (its run is not held here: another server owns it, or it is being recovered;
  // retry, or send it to the owner), kFailedPrecondition (no attempt started yet).
  boost::asio::awaitable<Result<void>> Complete(Completion completion);
  boost::asio::awaitable<Result<void>> DecideApproval(std::string workflow_id,
                                                      ApprovalDecision decision);
  boost::asio::awaitable<Result<void>> Resolve(std::string workflow_id,
                                               HumanResolution resolution);
  // Requests a run's cancellation (Decider::Cancel says when it is refused): the code is told
  // at its current await (worker/workflow_cancelled.h) in the same batch. Completes once that
  // batch is durable: the run is cancelled then, unless its code catches the cancellation to
  // clean up first (RunSummary::cancel_requested shows it).
  boost::asio::awaitable<Result<void>> Cancel(std::string workflow_id, std::string reason);
  boost::asio::awaitable<Result<void>> Cancel(std::string workflow_id, std::string reason,
                                              std::string requested_by);

  // A completion of an attempt the engine may no longer wait for: server mode hands over a
  // worker's report that arrived after its lease ran out or after a restart. A success is
  // evidence that the effect happened (never a second effect); anything else is dropped by
  // the decider unless the attempt is still the current one.
  void ReportLateAttempt(const std::string& workflow_id, std::string operation_id,
                         std::uint32_t attempt, AttemptOutcome outcome);

  // Runs the engine holds in memory: the active ones (running, or stopped by a bug), in
  // cluster mode of the shards it holds. A finished run is let go once its last batch is
  // durable, its attempts and lookups have reported and its waiters were answered (the engine
  // keeps no memory per finished run): the journal lists finished runs.
  std::vector<RunSummary> Runs() const;
  // One run: from memory while the engine holds it, else, if it finished, from the journal
  // (one read of its history). nullopt for a run neither held nor finished in the journal
  // (never started, not recovered yet, or in cluster mode another server's running run), and
  // when the journal cannot be read (logged; a damaged journal stops the engine).
  std::optional<RunSummary> Describe(const std::string& workflow_id);
  // Why the engine stopped driving a run it holds (RunSummary::stuck_reason); empty when it
  // drives the run or does not hold it. Reads nothing: for listings of many runs.
  std::string StuckReason(const std::string& workflow_id) const;
  // Active runs that still have work the engine can do by itself: each run that is not
  // settled (run_wait.h: it works or sleeps; not waiting on a signal, an approval or a person,
  // not stopped, not finished). A run whose batch is still being committed counts as busy, so
  // 0 also means that what Runs() shows is durable.
  int BusyRuns() const;

  // Completes once BusyRuns() is 0: every run is finished, stopped, or waits on something
  // outside the engine (a signal, an approval, a person), and everything Runs()/Describe()
  // show is durable. Completes at once when that holds already; with Errc::kUnavailable when
  // the engine fails (or has failed).
  boost::asio::awaitable<Result<void>> UntilIdle();

  // Completes once run `workflow_id` is settled (engine/run_wait.h): finished, stopped, or
  // waiting on something outside the engine (a signal, an approval, a person), with what it
  // waits on durable; returns its summary, whose `wait` says which. A run that works or sleeps
  // keeps it waiting. Completes at once when the run is settled already. A finished run (the
  // engine lets go of it; see Runs()) is read from the journal. Errors: Errc::kNotFound for a
  // run neither held nor finished in the journal (never started, or not recovered yet),
  // Errc::kUnavailable when the engine fails (or has failed).
  boost::asio::awaitable<Result<RunSummary>> UntilSettled(std::string workflow_id);

  // Asks query `name` of run `workflow_id`'s code (ctx.OnQuery) with `args_json` and returns
  // the handler's reply (JSON text). Nothing is journaled: the host answers from the run's
  // durable history (WorkflowHost::Query), so a batch being committed is not seen yet.
  // Errors: kInvalidArgument for a bad name or args; kNotFound for an unknown run or query
  // name; kFailedPrecondition for a finished run (its code's state is gone; describe shows
  // its result) or a handler that tried to issue a command; the host's errors (server mode:
  // kDeadlineExceeded when no worker answers).
  boost::asio::awaitable<Result<std::string>> Query(std::string workflow_id, std::string name,
                                                    std::string args_json);
  // Sends update `request` to run `workflow_id` (ctx.OnUpdate) and completes with its
  // journaled answer. The validator runs inside the run's next batch, against the run's
  // history up to that point, so no other batch of the run can slip between the check and the
  // acceptance (docs/ARCHITECTURE.md, decision 45). A rejection is an error carrying the
  // validator's message, and nothing is journaled. An accepted update is journaled
  // (UpdateAccepted) before its handler starts and answered once its UpdateCompleted is
  // durable; a repeated update id is answered with the first one's answer (waiting for it if
  // the handler still runs), never run twice, including after a restart. Update ids are
  // remembered per run: after a continue-as-new, the new run does not know its predecessor's.
  // Errors: kInvalidArgument, kNotFound (unknown run or update name), kFailedPrecondition (a
  // finished run, a stopped run), the validator's error, kUnavailable when the engine stops.
  boost::asio::awaitable<Result<UpdateOutcome>> Update(std::string workflow_id,
                                                       UpdateRequest request);

  // Adds a sink (not owned: it must outlive the engine, or be removed first).
  void AddSink(TraceSink& sink) { sinks_.Add(sink); }
  void RemoveSink(TraceSink& sink) { sinks_.Remove(sink); }
  // Called once, on the engine's executor, when a failed commit stops the engine. The process
  // should then exit: recovery from the journal is the way back.
  void OnFailed(std::function<void(const Error&)> callback) { on_failed_ = std::move(callback); }

  // The group committer that owns the journal's writes: a party that must write besides the
  // engine (the server's retention pass) goes through GroupCommitter::AsyncExclusive.
  storage::GroupCommitter& committer() { return committer_; }

  bool failed() const { return failed_; }
  const std::string& failure() const { return failure_; }

 private:
  struct Slot;
  using Reply = boost::asio::any_completion_handler<void(Result<void>)>;
  struct StartInput {
    std::string type;
    boost::json::value input;
    std::string definition_hash;
    std::string started_by;
    std::chrono::milliseconds run_timeout{0};
  };
  struct AttemptDone { std::string operation_id; std::uint32_t attempt; AttemptOutcome outcome; };
  struct DueInput { std::string operation_id; };
  struct LookupDone { std::string operation_id; std::uint32_t round; ReconcileOutcome outcome; };
  // A workflow timer of run `run_id` fired (a run that continued as new leaves its timers
  // armed; they must not fire in the next run, whose step ids start over).
  struct TimerInput { std::string timer_id; std::string run_id; };
  struct SignalInput {
    std::string name;
    std::string payload_json;
    std::string sent_by;
    std::string request_id;
  };
  struct CompletionInput { Completion completion; };
  struct RecoverInput {};
  struct CancelInput { std::string reason; std::string requested_by; };
  // A child of the run ended (engine/child_workflow.h).
  struct ChildDoneInput { storage::ChildWorkflowClosed closed; };
  struct UpdateInput { std::string update_id, name, args_json, sent_by; };
  using Input = std::variant<StartInput, AttemptDone, DueInput, LookupDone, TimerInput,
                             SignalInput, ApprovalDecision, HumanResolution, RecoverInput,
                             CancelInput, ChildDoneInput, UpdateInput, CompletionInput>;
  struct Queued {
    Input input;
    Reply reply;
  };

  void Submit(Slot& slot, Input input, Reply reply = {});
  // --- updates (engine/engine_updates.cc) ---
  // Inside the run's batch: true when `update` is new and passed its validator (the decider
  // may accept it), false when the run knows its id already; the validator's error otherwise.
  boost::asio::awaitable<Result<bool>> AdmitUpdate(Slot& slot, Decider& decider,
                                                   const UpdateInput& update);
  // Completes with update `update_id`'s answer once run `run_id` journaled it.
  boost::asio::awaitable<Result<UpdateOutcome>> AwaitUpdate(std::string workflow_id,
                                                            std::string run_id,
                                                            std::string update_id);
  // An update of a run the engine no longer holds: its answer from the journal, or why none.
  Result<UpdateOutcome> UpdateFromJournal(const storage::RunRef& run, const std::string& update_id);
  // Answers the waiters of every UpdateCompleted in `events` (just made durable).
  void AnswerUpdates(const Slot& slot, const std::vector<storage::Event>& events);
  // Answers the waiters of `workflow_id`'s updates (every run's when empty) with `error`.
  void DropUpdateWaiters(const std::string& workflow_id, const Error& error);
  boost::asio::awaitable<void> Drive(Slot* slot);
  Result<void> ApplyInput(Decider& decider, Slot& slot, Input& input);
  boost::asio::awaitable<Result<void>> Activate(Slot& slot, Decider& decider,
                                                std::size_t& shown);
  void Perform(Slot& slot, const std::vector<Action>& actions);
  // The run continued as new and `next` is durable: the slot drives `next` from now on.
  void BeginNextRun(Slot& slot, const NextRun& next);
  // --- child workflows (engine_children.cc) ---
  // What the decider of `slot`'s batch uses to reserve child ids; they are noted in
  // `reserved` so that the batch can let go of them (ReleaseChildIds) if it is not committed.
  ChildReserver ChildReserverFor(std::vector<std::string>& reserved);
  void ReleaseChildIds(const std::vector<std::string>& reserved);
  // The batch that started these children is durable: the engine drives them from now on.
  void BeginChildren(const std::vector<NextRun>& children);
  // `run` ended its workflow id's chain: if it is a child whose parent run waits, tell it.
  void TellParent(const RunState& run);
  // After a parent's restart: learns whether the child ended while nobody listened.
  void WatchChild(Slot& parent, const WatchChildAction& action);
  void CancelChild(const CancelChildAction& action);
  // After a restart: a child whose parent run closed meanwhile, under policy cancel, is
  // cancelled (the parent's CancelChildAction may have been lost with the process).
  void CancelOrphan(Slot& child);
  static storage::ChildWorkflowClosed ClosedOf(const RunState& run);
  void StartAttempt(Slot& slot, const StartAttemptAction& action);
  void StartLookup(Slot& slot, const StartReconcileAction& action);
  void Stop(Slot& slot, const Error& error);
  // Takes `slot` out of slots_ (into retired_, so that the timers and completions that point
  // at it stay valid) and answers its queue with kNotOwner.
  void Retire(Slot& slot, const std::string& reason);
  void Fail(const Error& error);
  RunSummary Summarize(const Slot& slot) const;
  static RunSummary SummaryOf(const RunState& state, const std::string& stuck, bool busy);
  // A finished run the engine let go of, or one of an earlier life (no slot): from the journal.
  Result<RunSummary> SummarizeFinished(const std::string& workflow_id);
  boost::asio::awaitable<Result<void>> Await(Slot& slot, Input input);
  // Hands `input` to the run's slot and completes when its batch is durable (or refused).
  boost::asio::awaitable<Result<void>> SubmitToRun(std::string workflow_id, Input input);
  Slot* FindSlot(const std::string& workflow_id) const;
  // The slot of the run that holds operation `operation_id`, if the engine holds it.
  Slot* FindSlotOfOperation(const std::string& operation_id) const;
  // The slot `serial` names, if the engine still holds it: completions and timers that
  // outlive a slot (its run finished and was let go, or moved) find nothing and drop.
  Slot* FindLive(const std::string& workflow_id, std::uint64_t serial) const;
  // Lets go of a finished run with nothing left to report (Runs()).
  void DropIfFinished(Slot& slot);
  // Warns at the soft history limit; past the hard one, fails the run (EngineOptions::history).
  Result<void> CheckHistoryLimit(Slot& slot, Decider& decider);
  // Completes the UntilIdle() waiters if the engine is idle (or failed), and the
  // UntilSettled() waiters whose run is settled.
  void WakeIdleWaiters();
  void WakeRunWaiters();
  // A read of the journal: a damaged file (kCorruption) stops the engine as a failed commit
  // does, since nothing it decides on such a file can be trusted.
  template <class T>
  Result<T> Read(Result<T> read) {
    if (!read && read.error().code() == Errc::kCorruption) Fail(read.error());
    return read;
  }

  boost::asio::any_io_executor executor_;
  storage::Journal& journal_;  // reads only; `reader` of the options when set
  storage::GroupCommitter committer_;
  const ContractRegistry& contracts_;
  WorkflowHost& host_;
  ToolDispatcher& tools_;
  Clock& clock_;
  TraceFanOut sinks_;
  EngineOptions options_;
  TimerQueue timers_;
  std::map<std::string, std::unique_ptr<Slot>> slots_;  // by workflow id
  std::uint64_t next_serial_ = 1;  // Slot::serial; 0 names no slot
  // Runs let go to another server (Release): kept so that pointers to them stay valid; they
  // refuse every input.
  std::vector<std::unique_ptr<Slot>> retired_;
  // Workflow ids of children whose start is being committed (ChildReserverFor).
  std::set<std::string> reserved_children_;
  std::function<void(const Error&)> on_failed_;
  std::vector<Reply> idle_waiters_;  // UntilIdle() callers
  struct RunWaiter {
    std::string workflow_id;
    boost::asio::any_completion_handler<void(Result<RunSummary>)> handler;
  };
  std::vector<std::unique_ptr<RunWaiter>> run_waiters_;  // UntilSettled() callers
  struct UpdateWaiter {
    std::string workflow_id, run_id, update_id;
    boost::asio::any_completion_handler<void(Result<UpdateOutcome>)> handler;
  };
  std::vector<std::unique_ptr<UpdateWaiter>> update_waiters_;  // Update() callers
  bool failed_ = false;
  std::string failure_;
  std::shared_ptr<bool> alive_;  // completions that outlive the engine check it
};

}  // namespace reckon
