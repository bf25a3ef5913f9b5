// Decider: the engine's decisions for one run, as a pure function of the run's state, its
// contracts, the time, and one batch of inputs. It emits journal events (applying each to the
// RunState at once) and the actions to perform once those events are durable. It performs no
// I/O: the engine (engine/engine.h) commits what it emitted, then carries out the actions.
//
// The class-by-failure table (contract/failure_policy.h), the reconciliation routing, approval
// binding (engine/approval.h) and the lifecycle table (engine/operation_state.h) meet here.
//
// Secrets: what a tool reports (the whole report: output, provider ref, code, message, heartbeat
// details; a lookup's and a completion's too; engine/tool_report.h) and what a person writes
// about an operation (a denial's reason, an approval's note, a resolution's reference and note)
// is journaled without the operation's secret fields and values (contract/secret_fields.h), and
// the code sees what is journaled, so replay sees the same.
//
// Errors: kPermissionDenied / kFailedPrecondition / kNotFound for a request that does not fit
// the run's state (checked before anything is emitted, so the batch stays clean);
// kNondeterminism when replayed code no longer matches its history; kInternal for an engine bug
// (the batch must then be discarded). One Decider per batch; not thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/engine/clock.h"
#include "reckon/engine/command.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/contract/secret_fields.h"
#include "reckon/engine/run_state.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/storage/journal.h"

namespace reckon {

// Start attempt `attempt` of an operation (its AttemptStarted is in this batch).
struct StartAttemptAction {
  std::string operation_id;
  std::uint32_t attempt = 0;
  std::int64_t deadline_us = 0;
};
// Stop attempt `attempt`: its hard deadline passed.
struct CancelAttemptAction {
  std::string operation_id;
  std::uint32_t attempt = 0;
};
// Run lookup `round` of an operation whose outcome is unknown.
struct StartReconcileAction {
  std::string operation_id;
  std::uint32_t round = 0;
};
// Wake the operation at `due_at_us` (retry, lookup, attempt deadline, approval deadline).
struct ArmDueAction {
  std::string operation_id;
  std::int64_t due_at_us = 0;
};
struct ArmWorkflowTimerAction {
  std::string timer_id;
  std::int64_t fire_at_us = 0;
};
// After a restart: the parent waits on child `child_workflow_id` (step `step_id`); find out
// whether it ended meanwhile.
struct WatchChildAction {
  std::string step_id;
  std::string child_workflow_id;
};
// The parent run closed and the child's policy is cancel: ask the child to cancel.
struct CancelChildAction {
  std::string child_workflow_id;
  std::string reason;
};
using Action = std::variant<StartAttemptAction, CancelAttemptAction, StartReconcileAction,
                            ArmDueAction, ArmWorkflowTimerAction, WatchChildAction,
                            CancelChildAction>;

struct HumanResolution {
  std::string operation_id;
  bool committed = false;
  std::string provider_ref;  // required when committed
  std::string resolved_by;
  std::string note;
};

// A provider's report of an operation's result, delivered after the attempt answered
// "accepted" (or racing it). `outcome` holds success/output/provider_ref or kind/code/message.
struct Completion {
  // Optional: the operation's run. Given, the engine looks only there (and a cluster routes
  // by it); empty, it finds the run that holds the operation.
  std::string workflow_id;
  std::string operation_id;
  std::string delivery_id;  // the sender's id of this delivery: the same on every redelivery
  AttemptOutcome outcome;
  std::string received_by;  // the principal (server mode)
};

struct ApprovalDecision {
  std::string approval_id;         // or empty, with operation_id set
  std::string operation_id;        // or empty, with approval_id set
  std::string expected_intent_hash;  // the hash the approver saw; empty: do not check
  bool granted = false;
  std::string decided_by;
  std::string reason;  // for a denial
  std::string note;    // the approver's free text for a grant, journaled beside decided_by
};

// Test-only: a deliberate bug that the deterministic simulator (tests/sim/) must catch, to
// show that its invariants bite. kNone everywhere but in those tests; nothing parses it from
// a flag or a file, so a deployment cannot turn one on.
enum class DeciderMutant {
  kNone,
  kReconcileBeforeDeadline,  // look an unknown outcome up before the attempt's hard deadline
  kBlindRetryUnknown,        // retry an unknown outcome instead of reconciling it
  kReuseGrantAcrossIntents,  // accept a grant for another intent than the operation's
};

struct DeciderOptions {
  std::string worker_name = "local";
  // Part of every operation and message id of the runs this decider starts
  // (engine/operation_id.h): set it per journal or per deployment, so that a workflow id
  // reused elsewhere never sends a provider an idempotency key it saw before.
  std::string id_namespace = "default";
  DeciderMutant mutant = DeciderMutant::kNone;  // test-only (above)
};

// The run a ContinueAsNew starts: its first events, appended in the transaction that closes
// the run before it (storage::AppendRequest::chained).
struct NextRun {
  storage::RunRef ref;
  std::string workflow_type;
  std::vector<storage::Event> events;  // WorkflowStarted, then the signals carried over
};

// Reserves the workflow id of a child the batch starts (Decider::SetChildReserver): Ok when
// no workflow of that id exists and none is being started, and from then on none other may be
// started with it; an error (its message says why) refuses the child.
using ChildReserver = std::function<Result<void>(const std::string& child_workflow_id)>;

class Decider {
 public:
  // `now` is the time of every event of the batch and the base of every deadline it sets.
  Decider(RunState& state, const ContractRegistry& contracts, TimePoint now,
          DeciderOptions options = {});

  // --- inputs ---
  // `run_timeout` (0: none): the run's deadline, journaled (engine/run_timeout.h).
  Result<void> Start(const std::string& workflow_type, const boost::json::value& input,
                     const std::string& definition_hash = "", const std::string& started_by = "",
                     std::chrono::milliseconds run_timeout = std::chrono::milliseconds(0));
  Result<void> ApplyCommands(std::vector<Command> commands);
  Result<void> AttemptFinished(const std::string& operation_id, std::uint32_t attempt,
                               const AttemptOutcome& outcome);
  // The operation's due time came (retry, lookup, hard deadline, approval deadline).
  Result<void> Due(const std::string& operation_id);
  Result<void> ReconcileFinished(const std::string& operation_id, std::uint32_t round,
                                 const ReconcileOutcome& outcome);
  Result<void> WorkflowTimerFired(const std::string& timer_id);
  // A signal whose `request_id` (non-empty) the run received already is a repeat: Ok, and
  // nothing is emitted.
  Result<void> Signal(const std::string& name, const std::string& payload_json,
                      const std::string& sent_by = "", const std::string& request_id = "");
  // A completion of operation `completion.operation_id` arrived (asynchronous completion,
  // contract/contract.h). Journals CompletionReceived, then settles the operation from it as
  // the attempt's own reply would: a success commits (source callback), a failure follows the
  // class-by-failure table. While the operation is in flight (the completion raced the
  // attempt's "accepted") it settles it the same way. A repeated delivery id, or news of a
  // settled operation, is Ok and emits nothing; a failure report for an operation whose outcome
  // went unknown emits nothing either (its reconciliation settles it). kNotFound for an
  // operation the run does not have; kInvalidArgument without a delivery id.
  Result<void> CompletionArrived(const Completion& completion);
  // Requests the run's cancellation: journals WorkflowCancelRequested and rejects with
  // workflow_cancelled the operations that have not acted yet (prepared, awaiting approval,
  // retry scheduled). The run stays open: its code is told at its current await
  // (worker/workflow_cancelled.h), may clean up with durable steps of its own, and closes the
  // run (cancelled, unless it chooses to complete or fail). Refused with
  // Errc::kFailedPrecondition while an operation may have acted and its outcome is not known
  // (in flight, unknown, reconciling, needs a person): cancelling must not forget an effect.
  // A request for a run whose cancel was requested already does nothing.
  Result<void> Cancel(const std::string& reason, const std::string& requested_by = "");
  // A person granted or denied the operation's current approval request. Refused with
  // kPermissionDenied when the decision names another request or another intent hash than
  // the operation has now (a grant is bound to both), or when its decider started the run
  // (separation of duties, unless the tool's contract sets approval.allow_self_approval);
  // kFailedPrecondition when the operation does not await approval. Resolve refuses the
  // run's starter the same way.
  Result<void> ApprovalDecided(const ApprovalDecision& decision);
  Result<void> Resolve(const HumanResolution& resolution);
  // After a restart: every operation that was mid-flight follows its contract.
  Result<void> Recover();
  // The child started at a step of this run ended (or `closed.status` says its start was
  // refused): journals ChildWorkflowClosed. Finds the step by the child's workflow id when
  // `closed.step_id` is empty. News of a child the run no longer waits on (it closed, or the
  // news came before) is dropped.
  Result<void> ChildClosed(storage::ChildWorkflowClosed closed);
  // Without a reserver every child start is refused (child_workflows_unavailable).
  void SetChildReserver(ChildReserver reserver) { child_reserver_ = std::move(reserver); }
  // An update passed its validator (engine/decider_updates.cc): journals UpdateAccepted, which
  // the code sees as news and starts the handler on. kFailedPrecondition for a finished run,
  // kAlreadyExists for an update id the run already accepted (nothing emitted).
  Result<void> AcceptUpdate(const std::string& update_id, const std::string& name,
                            const std::string& args_json, const std::string& sent_by);

  // The activation about to be applied ran on `ran.worker` of build `ran.build_id` (server
  // mode; engine/decider_builds.cc): journals it as WorkflowTaskStarted when that build differs
  // from the run's last recorded one (an unversioned worker matches a run with none), so the
  // run's build survives a restart and an activation on the same build adds nothing.
  Result<void> WorkflowTaskRan(storage::WorkflowTaskStarted ran);

  // --- outputs ---
  const std::vector<storage::Event>& events() const { return events_; }
  const std::vector<Action>& actions() const { return actions_; }
  // Events from index `from` on that workflow code must see (results, timers, signals).
  bool HasWorkflowNews(std::size_t from) const;
  // The append that makes this batch durable (events plus the derived rows they cause), with
  // the next run's start chained to it when the run continued as new.
  storage::AppendRequest BuildAppend() const;
  // The run this batch's ContinueAsNew starts, if any.
  const std::optional<NextRun>& next_run() const { return next_run_; }
  // The first runs of the children this batch starts, chained to its append.
  const std::vector<NextRun>& child_starts() const { return child_starts_; }

 private:
  Result<void> Emit(storage::EventBody body);
  Result<void> ScheduleNewCall(ScheduleCall call);
  Result<void> ReplayCall(ScheduleCall call);
  Result<void> Continue(ContinueAsNew command);
  Result<void> StartChildWorkflow(StartChild command);
  // Emits the event that closes the run, after applying the parent-close policy of each child
  // still running (ChildPolicyApplied, CancelChildAction).
  Result<void> EmitClose(storage::EventBody terminal);
  // The code's CompleteUpdate: UpdateCompleted, or kNondeterminism for an update not open.
  Result<void> FinishUpdate(CompleteUpdate command);
  // The run ends (`how`: completed, failed, cancelled, continued as new) with updates whose
  // handlers have not returned: each is completed with error run_finished, so no caller waits
  // for an answer that cannot come.
  Result<void> CloseOpenUpdates(std::string_view how);
  Result<void> StartNextAttempt(OperationRecord& op);
  // The current attempt answered "accepted": wait for its completion (or, without a completion
  // policy in the contract, treat the outcome as unknown).
  Result<void> Accepted(OperationRecord& op, const std::string& provider_ref);
  // `code`, `message`, `details` (the attempt's last heartbeat details) are redacted already
  // (engine/tool_report.h); `not_started`: the dispatcher proved the attempt never reached a
  // worker (AttemptOutcome::not_started).
  Result<void> HandleFailure(OperationRecord& op, FailureKind reported, const std::string& code,
                             const std::string& message, const std::string& details = "",
                             bool not_started = false);
  Result<void> RequestApproval(OperationRecord& op);
  // The run timeout (run_timeout.cc): its deadline passed; what happens then; an operation
  // refused an attempt because of it.
  bool RunDeadlinePassed() const;
  Result<void> RunTimedOut();
  Result<void> RejectForRunTimeout(OperationRecord& op);
  // kPermissionDenied when `by` started the run and the contract does not allow it.
  Result<void> SeparateDuties(const OperationRecord& op, const RegisteredContract* contract,
                              const std::string& by, std::string_view what) const;
  // The contract the operation runs under: its tool's, tightened by the call's overrides.
  const RegisteredContract* ContractOf(const OperationRecord& op) const;
  Result<boost::json::value> InputOf(const OperationRecord& op) const;
  // What keeps the operation's secrets out of what a tool or a person reports about it.
  SecretRedactor RedactorFor(const OperationRecord& op) const;

  RunState& state_;
  const ContractRegistry& contracts_;
  // Contracts tightened by a call's overrides, by operation id (ContractOf).
  mutable std::map<std::string, RegisteredContract> tightened_;
  const TimePoint now_;
  DeciderOptions options_;
  std::vector<storage::Event> events_;
  std::vector<Action> actions_;
  std::set<std::string> touched_operations_;
  std::set<std::string> timers_set_, timers_cleared_;
  storage::RunStatus status_before_;
  std::optional<NextRun> next_run_;
  std::vector<NextRun> child_starts_;
  ChildReserver child_reserver_;
};

}  // namespace reckon
