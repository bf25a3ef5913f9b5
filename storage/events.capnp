# Journal event payloads. The format is described in docs/JOURNAL_FORMAT.md.
#
# Compatibility rules (a journal written by an older release must still replay):
#   - field and union ordinals are never reused or renumbered; a retired field stays, commented
#     "retired", and new fields get the next ordinal;
#   - a new event type is a new union member at the next ordinal;
#   - the SQLite `type` column holds the union ordinal + 1, so it is stable too.
# Every time is microseconds since the Unix epoch (UTC). JSON values are canonical JSON text
# (RFC 8785) with the tool contract's secret fields removed. With a payload codec, the payload
# fields of an event are sealed (`sealed`, below).
@0x8ab1e29bc7fdb7e5;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("reckon::storage::wire");

struct EventPayload {
  union {
    workflowStarted @0 :WorkflowStarted;
    workflowCompleted @1 :WorkflowCompleted;
    workflowFailed @2 :WorkflowFailed;
    workflowCancelRequested @3 :WorkflowCancelRequested;
    workflowCancelled @4 :Empty;
    workflowTaskScheduled @5 :Empty;
    workflowTaskStarted @6 :WorkflowTaskStarted;
    workflowTaskCompleted @7 :Empty;
    operationPrepared @8 :OperationPrepared;
    approvalRequested @9 :ApprovalRequested;
    approvalGranted @10 :ApprovalGranted;
    approvalDenied @11 :ApprovalDenied;
    attemptStarted @12 :AttemptStarted;
    operationCommitted @13 :OperationCommitted;
    operationRejected @14 :OperationRejected;
    attemptFailedRetryable @15 :AttemptFailedRetryable;
    outcomeUnknown @16 :OutcomeUnknown;
    reconciliationStarted @17 :ReconciliationStarted;
    reconciliationResult @18 :ReconciliationResult;
    needsHuman @19 :NeedsHuman;
    humanResolved @20 :HumanResolved;
    timerStarted @21 :TimerStarted;
    timerFired @22 :TimerFired;
    signalReceived @23 :SignalReceived;
    markerRecorded @24 :MarkerRecorded;
    retryScheduled @25 :RetryScheduled;
    # An event whose payload fields are encrypted (docs/JOURNAL_FORMAT.md, "Sealed payloads").
    # Never nested; never on the wire, only in the journal.
    sealed @26 :SealedEvent;
    # The run closed and the next run of the same workflow id started, in one transaction.
    workflowContinuedAsNew @27 :WorkflowContinuedAsNew;
    # Child workflows (ctx.StartChild): in the parent's history.
    childWorkflowInitiated @28 :ChildWorkflowInitiated;
    childWorkflowClosed @29 :ChildWorkflowClosed;
    childPolicyApplied @30 :ChildPolicyApplied;
    # An update to the running run passed its validator; its handler starts (ctx.OnUpdate).
    updateAccepted @31 :UpdateAccepted;
    # The handler of an accepted update returned (or the run ended first).
    updateCompleted @32 :UpdateCompleted;
    # The provider accepted an attempt and reports its result later (contract completion).
    attemptAccepted @33 :AttemptAccepted;
    # A completion of an accepted (or in-flight) operation arrived, once per delivery id.
    completionReceived @34 :CompletionReceived;
  }
}

# The event as it would be without sealing, with its payload fields (storage/payload_fields.h)
# left empty, so ids, hashes, states, codes and times read without the key; the fields, packed,
# are in `box`, sealed under the key `keyId`. The SQLite `type` column holds the inner
# event's type. The box is bound to the event's place: workflow id, run id, seq and type
# (the authenticated context, docs/JOURNAL_FORMAT.md).
struct SealedEvent {
  event @0 :EventPayload;
  keyId @1 :Text;
  box @2 :Data;              # AES-256-GCM: 12-byte nonce, ciphertext, 16-byte tag
}

struct Empty {}

struct WorkflowStarted {
  workflowType @0 :Text;
  inputJson @1 :Text;
  # Hash of what defines the run besides the input (e.g. a compiled plan); empty if none.
  definitionHash @2 :Text;
  startedBy @3 :Text;        # the principal that started it (server mode); empty embedded
  # How the run's operation and message ids are derived (engine/operation_id.h): 0 (runs
  # started before version 2 existed) from the workflow id and step id alone; 2 from the
  # namespace, workflow id, run id and step id.
  idVersion @4 :UInt32;
  idNamespace @5 :Text;
  # The run this one continues (ctx.ContinueAsNew); empty for a first run.
  previousRunId @6 :Text;
  # A child workflow (ctx.StartChild): the run that started it, and what happens to it when
  # that run closes first (abandon | cancel | wait). Empty for a run nobody's child.
  parentWorkflowId @7 :Text;
  parentRunId @8 :Text;
  parentClosePolicy @9 :Text;
  # The run's timeout (docs/ARCHITECTURE.md, decision 46): when it passes, operations that
  # have not acted are rejected and the run fails with code run_timeout. 0: none. The timeout
  # is carried to the next run of a ctx.ContinueAsNew, which gets a deadline of its own.
  runDeadlineUs @10 :Int64;
  runTimeoutMs @11 :Int64;
}

# The parent started a child workflow at `stepId`. The child's first run (`childRunId`, whose
# WorkflowStarted names this run as its parent) is committed in the same transaction; an empty
# `childRunId` means none was started, and a ChildWorkflowClosed with status `refused` follows.
struct ChildWorkflowInitiated {
  stepId @0 :Text;
  childWorkflowId @1 :Text;
  childRunId @2 :Text;
  workflowType @3 :Text;
  inputJson @4 :Text;
  parentClosePolicy @5 :Text;  # abandon | cancel | wait
}

# The child's workflow id ended: the last run of its chain completed, failed or was cancelled,
# or the start was refused.
struct ChildWorkflowClosed {
  stepId @0 :Text;
  childWorkflowId @1 :Text;
  childRunId @2 :Text;        # the run that ended the chain
  status @3 :Text;            # completed | failed | cancelled | refused
  resultJson @4 :Text;        # completed
  code @5 :Text;              # failed, cancelled, refused
  message @6 :Text;
}

# The parent run closed while the child at `stepId` was still running, and its parent-close
# policy was applied: `abandon` (nothing) or `cancel` (the child was asked to cancel).
struct ChildPolicyApplied {
  stepId @0 :Text;
  childWorkflowId @1 :Text;
  policy @2 :Text;
}

struct WorkflowContinuedAsNew {
  nextRunId @0 :Text;
  inputJson @1 :Text;        # the next run's input
}

struct UpdateAccepted {
  updateId @0 :Text;         # the caller's id, or one the engine chose; unique in the run
  name @1 :Text;
  argsJson @2 :Text;
  sentBy @3 :Text;           # the principal (server mode); empty embedded
}

struct AttemptAccepted {
  operationId @0 :Text;
  attempt @1 :UInt32;
  providerRef @2 :Text;      # the provider's name for the accepted request
  completionDueUs @3 :Int64; # past it without a completion, the outcome is unknown
}

struct CompletionReceived {
  operationId @0 :Text;
  deliveryId @1 :Text;       # the sender's id of this delivery; a repeat is applied once
  succeeded @2 :Bool;
  code @3 :Text;             # on failure: the provider's code
  receivedBy @4 :Text;       # the principal that delivered it (server mode)
}

struct UpdateCompleted {
  updateId @0 :Text;
  resultJson @1 :Text;       # the handler's result; empty when it failed
  errorCode @2 :Text;        # empty on success; run_finished when the run ended first
  errorMessage @3 :Text;
}

struct WorkflowCompleted {
  resultJson @0 :Text;
}

struct WorkflowFailed {
  code @0 :Text;
  message @1 :Text;
}

struct WorkflowCancelRequested {
  reason @0 :Text;
  requestedBy @1 :Text;      # the principal (server mode)
  toCode @2 :Bool;           # the code is told (WorkflowCancelledError); false: an older cancel
                             # that closed the run in the same batch, unseen by the code
}

struct WorkflowTaskStarted {
  worker @0 :Text;
  buildId @1 :Text;  # the worker's build id (docs/VERSIONING.md); empty: unversioned
}

struct OperationPrepared {
  stepId @0 :Text;
  operationId @1 :Text;
  tool @2 :Text;
  contractHash @3 :Text;
  intentHash @4 :Text;      # intent hash of the input, secret fields removed
  sideEffect @5 :Text;       # read_only | idempotent_write | deduplicated_write | non_repeatable_write
  inputJson @6 :Text;        # the input with secret fields removed
  # Tightenings of the contract for this one call (an agent plan's per-step overrides); they
  # can only make the contract stricter.
  maxAttempts @7 :UInt32;    # 0: the contract's; else at most this many attempts
  requireApproval @8 :Bool;  # approval required whatever the contract's rule says
}

struct ApprovalRequested {
  operationId @0 :Text;
  approvalId @1 :Text;
  intentHash @2 :Text;
  deadlineUs @3 :Int64;      # 0: waits forever
}

struct ApprovalGranted {
  operationId @0 :Text;
  approvalId @1 :Text;
  intentHash @2 :Text;
  approvedBy @3 :Text;       # the principal (server mode)
  expiresAtUs @4 :Int64;
  note @5 :Text;             # the approver's free text, beside the principal
}

struct ApprovalDenied {
  operationId @0 :Text;
  approvalId @1 :Text;
  deniedBy @2 :Text;
  reason @3 :Text;
}

struct AttemptStarted {
  operationId @0 :Text;
  attempt @1 :UInt32;
  worker @2 :Text;
  deadlineUs @3 :Int64;      # the attempt's hard deadline
  approvalId @4 :Text;       # the grant this attempt consumed, if any
}

struct OperationCommitted {
  operationId @0 :Text;
  attempt @1 :UInt32;
  resultJson @2 :Text;
  providerRef @3 :Text;
  source @4 :Text;           # attempt | late_completion | reconciliation | human | callback
}

struct OperationRejected {
  operationId @0 :Text;
  attempt @1 :UInt32;
  code @2 :Text;
  message @3 :Text;
}

struct AttemptFailedRetryable {
  operationId @0 :Text;
  attempt @1 :UInt32;
  code @2 :Text;
  message @3 :Text;
  retryAtUs @4 :Int64;
  # The last progress details the tool heartbeated during this attempt (JSON, secret fields
  # removed; empty: none). The next attempt of the operation receives them. A payload field.
  heartbeatDetailsJson @5 :Text;
}

struct OutcomeUnknown {
  operationId @0 :Text;
  attempt @1 :UInt32;
  reason @2 :Text;           # deadline_exceeded | heartbeat_timeout | lease_lost | engine_restart | ...
  reconcileAtUs @3 :Int64;   # earliest reconciliation: hard deadline + grace
  heartbeatDetailsJson @4 :Text;  # as in AttemptFailedRetryable; a payload field
}

struct ReconciliationStarted {
  operationId @0 :Text;
  round @1 :UInt32;
}

struct ReconciliationResult {
  operationId @0 :Text;
  round @1 :UInt32;
  result @2 :Text;           # committed | not_found | still_unknown
  providerRef @3 :Text;
  nextAtUs @4 :Int64;        # still_unknown: when to ask again
}

struct NeedsHuman {
  operationId @0 :Text;
  reason @1 :Text;
}

struct HumanResolved {
  operationId @0 :Text;
  committed @1 :Bool;
  providerRef @2 :Text;
  resolvedBy @3 :Text;
  note @4 :Text;
}

struct TimerStarted {
  timerId @0 :Text;
  fireAtUs @1 :Int64;
}

struct TimerFired {
  timerId @0 :Text;
}

struct SignalReceived {
  name @0 :Text;
  payloadJson @1 :Text;
  sentBy @2 :Text;           # the principal (server mode)
  requestId @3 :Text;        # the sender's id of this signal; a repeat is applied once
}

struct MarkerRecorded {
  stepId @0 :Text;
  kind @1 :Text;             # now | random | model_reply | ...
  valueJson @2 :Text;
}

struct RetryScheduled {
  operationId @0 :Text;
  nextAttempt @1 :UInt32;    # the attempt number the retry will carry
  retryAtUs @2 :Int64;
  reason @3 :Text;           # retryable_failure | unknown_outcome | reconciled_not_found | human_not_committed
}
