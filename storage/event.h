// The journal's events: one C++ struct per event type, gathered in the EventBody variant.
//
// An Event is one entry of a run's append-only history. Its body is encoded with Cap'n Proto
// (storage/events.capnp; format and compatibility rules in docs/JOURNAL_FORMAT.md). The
// variant's alternative index is the union ordinal of events.capnp (but for ordinal 26, the
// sealed wrapper, which is not an event of its own), so the order here never changes: new
// types are appended at the end.
//
// JSON-valued fields hold canonical JSON text with the contract's secret fields removed; times
// are microseconds since the Unix epoch. Fields from a closed vocabulary are enums; the codec
// (storage/event_codec.cc) stores them by name, and refuses a name it does not know as
// corruption. Plain value types; copy freely.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "reckon/base/error.h"
#include "reckon/base/side_effect.h"

namespace reckon::storage {

// How a commit became known (OperationCommitted.source).
enum class CommitSource {
  kAttempt,         // "attempt": the current attempt reported success
  kLateCompletion,  // "late_completion": an attempt already given up on reported success
  kReconciliation,  // "reconciliation": a lookup found the effect
  kHuman,           // "human": a person resolved the operation as committed
  kCallback,        // "callback": the provider's completion said so (CompletionReceived)
};
std::string_view CommitSourceName(CommitSource source);
Result<CommitSource> ParseCommitSource(std::string_view name);

// What a reconciliation lookup answered (ReconciliationResult.result; also what a worker
// reports, engine/tool_dispatcher.h).
enum class ReconcileVerdict {
  kCommitted,     // "committed": the effect exists
  kNotFound,      // "not_found": the provider has no record of it
  kStillUnknown,  // "still_unknown": the lookup could not tell
};
std::string_view ReconcileVerdictName(ReconcileVerdict verdict);
Result<ReconcileVerdict> ParseReconcileVerdict(std::string_view name);

// Why a new attempt was authorized (RetryScheduled.reason).
enum class RetryReason {
  kUnknownOutcome,      // "unknown_outcome": the class may repeat an attempt of unknown outcome
  kReconciledNotFound,  // "reconciled_not_found": a lookup proved the effect absent
  kHumanNotCommitted,   // "human_not_committed": a person said it did not happen
};
std::string_view RetryReasonName(RetryReason reason);
Result<RetryReason> ParseRetryReason(std::string_view name);

struct WorkflowStarted {
  std::string workflow_type;
  std::string input_json;
  std::string definition_hash;
  std::string started_by;  // the principal (server mode); empty when embedded
  // How the run derives operation and message ids (engine/operation_id.h, IdScope): 0 for
  // runs journaled before run-scoped ids (workflow id and step id only), 2 for run-scoped.
  std::uint32_t id_version = 0;
  std::string id_namespace;
  std::string previous_run_id;  // the run this one continues (ctx.ContinueAsNew)
  // A child workflow's parent run and parent-close policy (engine/child_workflow.h); empty
  // for a run that is nobody's child.
  std::string parent_workflow_id;
  std::string parent_run_id;
  std::string parent_close_policy;
  // The run timeout (engine/run_timeout.h): the deadline, and the duration a continued run
  // carries over. 0: none.
  std::int64_t run_deadline_us = 0;
  std::int64_t run_timeout_ms = 0;
};
struct WorkflowCompleted { std::string result_json; };
struct WorkflowFailed { std::string code; std::string message; };
struct WorkflowCancelRequested {
  std::string reason;
  std::string requested_by;  // the principal (server mode)
  // The run's code is told (it sees WorkflowCancelledError at its current await and closes the
  // run itself). False in histories written before cancellation reached the code: the request,
  // its rejections and WorkflowCancelled were one batch the code never saw.
  bool to_code = false;
};
struct WorkflowCancelled {};
struct WorkflowTaskScheduled {};
struct WorkflowTaskStarted {
  std::string worker;
  std::string build_id;  // empty: an unversioned worker (docs/VERSIONING.md)
};
struct WorkflowTaskCompleted {};
struct OperationPrepared {
  std::string step_id;
  std::string operation_id;
  std::string tool;
  std::string contract_hash;
  std::string intent_hash;
  SideEffect side_effect = SideEffect::kNonRepeatableWrite;
  std::string input_json;
  std::uint32_t max_attempts = 0;  // tightening: 0 = the contract's
  bool require_approval = false;   // tightening
};
struct ApprovalRequested {
  std::string operation_id;
  std::string approval_id;
  std::string intent_hash;
  std::int64_t deadline_us = 0;
};
struct ApprovalGranted {
  std::string operation_id;
  std::string approval_id;
  std::string intent_hash;
  std::string approved_by;  // the principal (server mode), or the embedded host's name
  std::int64_t expires_at_us = 0;
  std::string note;  // the approver's free text, beside the principal
};
struct ApprovalDenied {
  std::string operation_id;
  std::string approval_id;
  std::string denied_by;
  std::string reason;
};
struct AttemptStarted {
  std::string operation_id;
  std::uint32_t attempt = 0;
  std::string worker;
  std::int64_t deadline_us = 0;
  std::string approval_id;
};
struct OperationCommitted {
  std::string operation_id;
  std::uint32_t attempt = 0;
  std::string result_json;
  std::string provider_ref;
  CommitSource source = CommitSource::kAttempt;
};
struct OperationRejected {
  std::string operation_id;
  std::uint32_t attempt = 0;
  std::string code;
  std::string message;
};
struct AttemptFailedRetryable {
  std::string operation_id;
  std::uint32_t attempt = 0;
  std::string code;
  std::string message;
  std::int64_t retry_at_us = 0;
  std::string heartbeat_details_json;  // the attempt's last heartbeat details; empty: none
};
struct OutcomeUnknown {
  std::string operation_id;
  std::uint32_t attempt = 0;
  std::string reason;
  std::int64_t reconcile_at_us = 0;
  std::string heartbeat_details_json;  // the attempt's last heartbeat details; empty: none
};
struct ReconciliationStarted {
  std::string operation_id;
  std::uint32_t round = 0;
};
struct ReconciliationResult {
  std::string operation_id;
  std::uint32_t round = 0;
  ReconcileVerdict result = ReconcileVerdict::kStillUnknown;
  std::string provider_ref;
  std::int64_t next_at_us = 0;
};
struct NeedsHuman { std::string operation_id; std::string reason; };
struct HumanResolved {
  std::string operation_id;
  bool committed = false;
  std::string provider_ref;
  std::string resolved_by;
  std::string note;
};
struct TimerStarted { std::string timer_id; std::int64_t fire_at_us = 0; };
struct TimerFired { std::string timer_id; };
struct SignalReceived {
  std::string name;
  std::string payload_json;
  std::string sent_by;  // the principal (server mode)
  // The sender's id of this signal (empty: none given). A signal whose request id the run
  // received already is applied once: the repeat is acknowledged and not journaled.
  std::string request_id;
};
struct MarkerRecorded { std::string step_id; std::string kind; std::string value_json; };
struct RetryScheduled {
  std::string operation_id;
  std::uint32_t next_attempt = 0;
  std::int64_t retry_at_us = 0;
  RetryReason reason = RetryReason::kUnknownOutcome;
};

// The run ended by starting the next run of its workflow id (ctx.ContinueAsNew); that run's
// WorkflowStarted is committed in the same transaction.
struct WorkflowContinuedAsNew {
  std::string next_run_id;
  std::string input_json;
};

// Child workflows (ctx.StartChild; engine/child_workflow.h), in the parent's history. An empty
// child_run_id: no child was started (a ChildWorkflowClosed with status "refused" follows).
struct ChildWorkflowInitiated {
  std::string step_id;
  std::string child_workflow_id;
  std::string child_run_id;
  std::string workflow_type;
  std::string input_json;
  std::string parent_close_policy;  // abandon | cancel | wait
};
struct ChildWorkflowClosed {
  std::string step_id;
  std::string child_workflow_id;
  std::string child_run_id;  // the run that ended the child's chain
  std::string status;        // completed | failed | cancelled | refused
  std::string result_json;
  std::string code;
  std::string message;
};
struct ChildPolicyApplied {
  std::string step_id;
  std::string child_workflow_id;
  std::string policy;  // abandon | cancel
};
// An update (ctx.OnUpdate) passed its validator and its handler starts; journaled before the
// handler runs, so a restart resumes it by replay.
struct UpdateAccepted {
  std::string update_id;
  std::string name;
  std::string args_json;
  std::string sent_by;  // the principal (server mode)
};
// The update's handler returned (error_code empty, result_json its result) or failed; or the
// run ended before it returned (error_code "run_finished"). The caller's answer.
struct UpdateCompleted {
  std::string update_id;
  std::string result_json;
  std::string error_code;
  std::string error_message;
};

// The provider accepted attempt `attempt` and reports its result later (the contract's
// completion policy, contract/contract.h): the operation waits in awaiting_completion until a
// completion arrives or completion_due_us passes (then its outcome is unknown).
struct AttemptAccepted {
  std::string operation_id;
  std::uint32_t attempt = 0;
  std::string provider_ref;
  std::int64_t completion_due_us = 0;
};
// A completion of the operation arrived (Engine::Complete: the server's HTTP endpoint, the
// SDK), journaled once per delivery id, before its consequence (OperationCommitted with source
// callback, or the events of a failure). A completion for a settled operation, or a repeated
// delivery id, is acknowledged and not journaled.
struct CompletionReceived {
  std::string operation_id;
  std::string delivery_id;
  bool succeeded = false;
  std::string code;         // on failure: the provider's code
  std::string received_by;  // the principal (server mode)
};

using EventBody = std::variant<
    WorkflowStarted, WorkflowCompleted, WorkflowFailed, WorkflowCancelRequested,
    WorkflowCancelled, WorkflowTaskScheduled, WorkflowTaskStarted, WorkflowTaskCompleted,
    OperationPrepared, ApprovalRequested, ApprovalGranted, ApprovalDenied, AttemptStarted,
    OperationCommitted, OperationRejected, AttemptFailedRetryable, OutcomeUnknown,
    ReconciliationStarted, ReconciliationResult, NeedsHuman, HumanResolved, TimerStarted,
    TimerFired, SignalReceived, MarkerRecorded, RetryScheduled, WorkflowContinuedAsNew,
    ChildWorkflowInitiated, ChildWorkflowClosed, ChildPolicyApplied, UpdateAccepted,
    UpdateCompleted, AttemptAccepted, CompletionReceived>;

struct Event {
  std::int64_t seq = 0;             // 1-based position in the run's history
  std::int64_t recorded_at_us = 0;  // when the engine appended it
  EventBody body;
};

// The stable type number stored beside each event (union ordinal + 1). Union ordinal 26 is the
// sealed wrapper, which has no alternative here, so later alternatives sit one ordinal up.
inline int EventTypeNumber(const EventBody& body) {
  const int index = static_cast<int>(body.index());
  return index < 26 ? index + 1 : index + 2;
}

// "OperationCommitted": the event type's name as used in history listings and traces.
std::string_view EventTypeName(const EventBody& body);

}  // namespace reckon::storage
