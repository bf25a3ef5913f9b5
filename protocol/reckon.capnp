# The Reckon wire protocol: every request and reply between `reckon server` and its clients
# (the CLI, workers). docs/PROTOCOL.md describes the transport, the framing, the limits and
# each method's semantics; this file is the authority for the message shapes.
#
# Transport: a TCP stream carrying Cap'n Proto messages in the standard stream framing
# (segment table, then segments). A client sends Request messages; the server answers each
# with one Response carrying the same id, in any order. Many requests may be in flight on one
# connection.
#
# Compatibility rules: ordinals are never reused or renumbered; new fields and new union
# members take the next ordinal. JSON-valued fields hold JSON text. Times are microseconds
# since the Unix epoch (UTC) unless the name says otherwise.
@0xe1b40720373f29fd;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("reckon::api::wire");

struct Request {
  id @0 :UInt64;
  # Chosen by the client, unique among its requests in flight on this connection; echoed in
  # the Response.

  timeoutMs @1 :UInt32;
  # The request's deadline, relative to when the server reads it (no clock agreement needed).
  # 0 means the server's default. A long poll returns `noTask` before it passes; other methods
  # are not cancelled by it: a request that timed out on the client may still take effect.
  # startWorkflow is idempotent on its workflow id; a repeated approval, resolution or cancel
  # is refused with failed_precondition (the first one took effect); a repeated signal is
  # recorded twice (give signals an id in their payload if that matters).

  method :union {
    startWorkflow @2 :StartWorkflow;
    signalWorkflow @3 :SignalWorkflow;
    cancelWorkflow @4 :CancelWorkflow;
    describeWorkflow @5 :WorkflowKey;
    listWorkflows @6 :ListWorkflows;
    getHistory @7 :WorkflowKey;
    decideApproval @8 :DecideApproval;
    resolveOperation @9 :ResolveOperation;
    listContracts @10 :Void;
    getTrace @11 :WorkflowKey;
    registerWorker @12 :RegisterWorker;
    pollWorkflowTask @13 :PollTask;
    completeWorkflowTask @14 :CompleteWorkflowTask;
    pollToolTask @15 :PollTask;
    completeToolTask @16 :CompleteToolTask;
    heartbeat @17 :Heartbeat;
    watchWorkflow @18 :WatchWorkflow;
    createToken @20 :CreateToken;
    listTokens @21 :Void;
    revokeToken @22 :RevokeToken;
    whoAmI @23 :Void;
    listWorkers @24 :Void;
    # Ask a running run's query handler (ctx.OnQuery); nothing is journaled. Reply: queryResult.
    queryWorkflow @25 :QueryWorkflow;
    # Send an update to a running run (ctx.OnUpdate) and wait for its answer. Reply:
    # updateResult; a validator's rejection is an error.
    updateWorkflow @26 :UpdateWorkflow;
    # The next page of a workflow task's events (WorkflowTask.nextPageToken). Reply:
    # workflowTaskPage.
    getWorkflowTaskPage @27 :GetWorkflowTaskPage;
    # A provider's completion of an operation that answered "accepted" (asynchronous
    # completion; docs/TOOLS.md): applied once per delivery id. Reply: ok.
    completeOperation @28 :CompleteOperation;
  }

  credential @19 :Text;
  # The caller's API token (docs/SECURITY.md), on every request: the server maps it to a
  # principal and checks that principal's role for the method. Never logged or journaled.
}

struct Response {
  id @0 :UInt64;
  result :union {
    error @1 :Error;
    ok @2 :Void;
    started @3 :WorkflowRef;
    workflow @4 :WorkflowDetail;
    workflows @5 :List(WorkflowSummary);
    history @6 :List(HistoryEvent);
    contracts @7 :List(ContractInfo);
    trace @8 :List(Text);           # one JSON object per line of the effect trace
    registered @9 :Registered;
    noTask @10 :Void;               # a long poll that found nothing before its deadline
    workflowTask @11 :WorkflowTask;
    toolTask @12 :ToolTask;
    heartbeat @13 :HeartbeatReply;
    createdToken @14 :CreatedToken;
    tokens @15 :List(PrincipalInfo);
    principal @16 :PrincipalInfo;   # revokeToken: the principal as revoked; whoAmI: the caller
    workflowPage @17 :WorkflowPage; # listWorkflows with a limit
    workers @18 :WorkerList;        # listWorkers
    queryResult @19 :Text;          # queryWorkflow: the handler's reply, JSON
    updateResult @20 :UpdateResult; # updateWorkflow
    workflowTaskPage @21 :WorkflowTaskPage; # getWorkflowTaskPage
  }
}

struct Error {
  code @0 :Text;     # invalid_argument, not_found, already_exists, failed_precondition, ...
  action @1 :Text;   # retry | do_not_retry | fix_state_first | bug: what the caller does next
  message @2 :Text;  # for people; names what is wrong and what to do
  redirect @3 :Text; # not_owner (cluster mode): HOST:PORT of the server that owns the workflow;
                     # send the same request there
}

# --- workflows (clients) -------------------------------------------------------------------

struct QueryWorkflow {
  workflowId @0 :Text;
  name @1 :Text;
  argsJson @2 :Text;     # empty: null
}

struct UpdateWorkflow {
  workflowId @0 :Text;
  name @1 :Text;
  argsJson @2 :Text;     # empty: null
  updateId @3 :Text;     # idempotency key; empty: the server chooses one
}

struct UpdateResult {
  updateId @0 :Text;
  resultJson @1 :Text;   # the handler's result when errorCode is empty
  errorCode @2 :Text;    # the handler's failure (or run_finished); empty on success
  errorMessage @3 :Text;
}

struct WorkflowKey {
  workflowId @0 :Text;
  # One run of the id (an earlier run of a chain that continued as new, `reckon show` lists
  # them); empty: the newest. Read by describeWorkflow, getHistory and getTrace.
  runId @1 :Text;
}

struct WorkflowRef {
  workflowId @0 :Text;
  runId @1 :Text;
}

struct StartWorkflow {
  workflowId @0 :Text;    # the idempotency key of the start
  workflowType @1 :Text;
  inputJson @2 :Text;
  definitionHash @3 :Text;  # what defines the run besides its type (a plan's hash); journaled
  runTimeoutMs @4 :Int64;   # 0: none; else the run fails with run_timeout once it passes
}

struct SignalWorkflow {
  workflowId @0 :Text;
  name @1 :Text;
  payloadJson @2 :Text;
  requestId @3 :Text;   # the sender's id of this signal; a repeat is applied once. Empty: none
}

struct CompleteOperation {
  workflowId @0 :Text;   # optional: the operation's run (a cluster routes by it)
  operationId @1 :Text;
  deliveryId @2 :Text;   # the sender's id of this delivery, the same on every redelivery
  succeeded @3 :Bool;
  outputJson @4 :Text;   # succeeded: the result; empty: null
  providerRef @5 :Text;
  kind @6 :FailureKind;  # failed: definitive, retryable or unknown
  code @7 :Text;
  message @8 :Text;
}

struct CancelWorkflow {
  workflowId @0 :Text;
  reason @1 :Text;
}

struct ListWorkflows {
  status @0 :Text;       # running | completed | failed | cancelled; empty: any
  tool @1 :Text;         # only runs with an operation of this tool; empty: any
  needsHuman @2 :Bool;   # only runs with an operation waiting for a person
  workflowType @3 :Text; # only runs of this type; empty: any
  idPrefix @4 :Text;     # only workflow ids that start with it; empty: any
  limit @5 :UInt32;
  # 0: every matching run, oldest first, in `workflows` (as before paging existed). 1..500:
  # one page, newest first, in `workflowPage`; more than 500 is invalid_argument.
  cursor @6 :Text;       # the previous page's nextCursor; empty: the first page
}

struct WorkflowPage {
  workflows @0 :List(WorkflowSummary);
  nextCursor @1 :Text;   # empty: this was the last page
}

struct WorkflowSummary {
  workflowId @0 :Text;
  runId @1 :Text;
  workflowType @2 :Text;
  status @3 :Text;
  stuckReason @4 :Text;         # non-empty when the engine stopped driving the run
  createdAtUs @5 :Int64;
  updatedAtUs @6 :Int64;
  operations @7 :UInt32;
  committedOperations @8 :UInt32;
  waitingForPerson @9 :UInt32;  # operations awaiting approval or needing a person
  waitsOn @10 :Text;            # nothing | working | timer | signal | approval | person | stopped
                                # | child (waits only on child workflows; detail: their ids)
                                # | worker (describeWorkflow: no connected worker may take its
                                # workflow task; detail: the build it needs)
  waitDetail @11 :Text;         # signal name(s), operation id, fire time (UTC), stop reason, build
  waitUntilUs @12 :Int64;       # waitsOn = timer: the earliest fire time; else 0
}

struct OperationInfo {
  operationId @0 :Text;
  stepId @1 :Text;
  tool @2 :Text;
  sideEffect @3 :Text;
  state @4 :Text;
  attempt @5 :UInt32;
  intentHash @6 :Text;    # the intent hash an approver must see
  contractHash @7 :Text;
  providerRef @8 :Text;
  approvalId @9 :Text;     # the pending approval, if any
  failureCode @10 :Text;
  failureMessage @11 :Text;
  redactedInputJson @12 :Text;  # the input with the contract's secret fields removed
  approvalDeadlineUs @13 :Int64;  # awaiting_approval: when the request lapses; else 0
}

struct WorkflowDetail {
  summary @0 :WorkflowSummary;
  inputJson @1 :Text;      # the workflow's input as journaled
  resultJson @2 :Text;
  operations @3 :List(OperationInfo);
  startedBy @4 :Text;      # the principal that started the run (empty before 0.2)
  # The runs of the workflow id, oldest first, the described (newest) one last: more than one
  # when runs continued as new (ctx.ContinueAsNew). At most the newest 50; `earlierRuns` counts
  # those left out.
  runs @5 :List(RunLink);
  earlierRuns @6 :UInt32;
  # Child workflows (ctx.StartChild): the run that started this one (empty ids for a run that
  # is nobody's child) and what happens to this one if that run closes first; and the children
  # this run started, in step order.
  parent @7 :WorkflowRef;
  parentClosePolicy @8 :Text;
  children @9 :List(ChildLink);
  # A cancel was requested and the run is still open: its code is cleaning up (the reason as
  # the canceller gave it).
  cancelRequested @10 :Bool;
  cancelReason @11 :Text;
}

struct ChildLink {
  stepId @0 :Text;
  workflowId @1 :Text;
  workflowType @2 :Text;
  policy @3 :Text;         # abandon | cancel | wait
  status @4 :Text;         # running | completed | failed | cancelled | refused
}

struct RunLink {
  runId @0 :Text;
  status @1 :Text;
  createdAtUs @2 :Int64;
  updatedAtUs @3 :Int64;
}

struct HistoryEvent {
  seq @0 :Int64;
  recordedAtUs @1 :Int64;
  type @2 :Text;     # "OperationCommitted"
  payload @3 :Data;  # one EventPayload message of storage/events.capnp, flat-array encoded
}

struct WatchWorkflow {
  # A long poll on a run's history: the reply (`history`) holds the durable events after
  # `afterSeq`, as soon as there is at least one, or none when `waitMs` passes first. A client
  # follows a run by repeating it with the last seq it saw; the run is over once an event
  # WorkflowCompleted, WorkflowFailed or WorkflowCancelled arrives.
  workflowId @0 :Text;
  afterSeq @1 :Int64;
  waitMs @2 :UInt32;
}

struct DecideApproval {
  workflowId @0 :Text;
  operationId @1 :Text;           # or approvalId
  approvalId @2 :Text;
  expectedIntentHash @3 :Text;    # the intent hash the approver saw; empty: not checked
  granted @4 :Bool;
  decidedBy @5 :Text;
  reason @6 :Text;
}

struct ResolveOperation {
  workflowId @0 :Text;
  operationId @1 :Text;
  committed @2 :Bool;     # the person found the effect happened (providerRef required)
  providerRef @3 :Text;
  resolvedBy @4 :Text;
  note @5 :Text;
}

struct ContractInfo {
  name @0 :Text;
  hash @1 :Text;
  sideEffect @2 :Text;
  contractJson @3 :Text;
  card @4 :Text;          # the contract card for people
}

# --- workers -------------------------------------------------------------------------------

struct ToolDeclaration {
  name @0 :Text;
  contractJson @1 :Text;  # contract/contract_json.h; the server journals its hash
}

struct RegisterWorker {
  workerId @0 :Text;                  # unique per worker process; names it in logs and leases
  workflowTypes @1 :List(Text);       # the workflow task queues it polls
  tools @2 :List(ToolDeclaration);    # the tool task queues it polls, with their contracts
  buildId @3 :Text;
  # The build of the worker's code (docs/VERSIONING.md, "Worker build ids"); empty:
  # unversioned. A run's workflow tasks go only to workers of the build that started it, or
  # that list that build in compatibleBuilds.
  compatibleBuilds @4 :List(Text);    # other builds whose runs this worker can replay
}

struct Registered {
  heartbeatIntervalMs @0 :UInt32;  # send a Heartbeat at least this often while holding tasks
  leaseTimeoutMs @1 :UInt32;       # a tool task not heartbeaten for this long is lost
}

struct PollTask {
  waitMs @0 :UInt32;   # how long to wait for a task; the server caps it
}

struct WorkflowTask {
  taskToken @0 :UInt64;
  workflowId @1 :Text;
  runId @2 :Text;
  workflowType @3 :Text;
  fullHistory @4 :Bool;        # rebuild the workflow and replay `events` from the start
  nowUs @5 :Int64;             # what the code's now() returns when it is not replaying
  events @6 :List(HistoryEvent);
  # Set: not an activation but a question (a query, or an update to validate) about the run
  # whose full history is `events`. Answer with CompleteWorkflowTask.queryResult (or failure);
  # nothing the replay issues is kept.
  query @7 :QueryTask;
  # Non-empty: `events` is only the first page of the task's events (docs/PROTOCOL.md,
  # "History pages"). Fetch the rest with getWorkflowTaskPage, in order, before running the
  # code; the task's events are the pages' events concatenated. Empty: `events` is all of them.
  nextPageToken @8 :Data;
}

struct GetWorkflowTaskPage {
  taskToken @0 :UInt64;   # the task the page belongs to, still held by this connection
  pageToken @1 :Data;     # the task's nextPageToken, or the last page's, as received
}

struct WorkflowTaskPage {
  events @0 :List(HistoryEvent);
  nextPageToken @1 :Data; # empty: this was the last page
}

struct QueryTask {
  name @0 :Text;
  argsJson @1 :Text;
  validateUpdate @2 :Bool;     # run update `name`'s validator instead of a query handler
}

struct ScheduleCall {
  stepId @0 :Text;
  tool @1 :Text;
  inputJson @2 :Text;     # the full input, secret fields included; never journaled
  replayed @3 :Bool;
  maxAttempts @4 :UInt32;   # tightening for this call: 0 = the contract's
  requireApproval @5 :Bool; # tightening: approval whatever the contract's rule
}

struct StartTimer {
  timerId @0 :Text;
  fireAtUs @1 :Int64;
}

struct RecordMarker {
  stepId @0 :Text;
  kind @1 :Text;
  valueJson @2 :Text;
}

struct Command {
  union {
    scheduleCall @0 :ScheduleCall;
    startTimer @1 :StartTimer;
    recordMarker @2 :RecordMarker;
    completeWorkflow @3 :Text;       # result JSON
    failWorkflow @4 :Error;
    continueAsNew @5 :ContinueAsNew;
    startChild @6 :StartChild;
    completeUpdate @7 :CompleteUpdate;
  }
}

# ctx.StartChild: start a child workflow at a step, its first run committed with this batch.
struct StartChild {
  stepId @0 :Text;
  workflowId @1 :Text;         # empty: derived from the parent run and the step
  workflowType @2 :Text;
  inputJson @3 :Text;          # canonical JSON
  parentClosePolicy @4 :Text;  # abandon | cancel | wait
}

# An update's handler returned (ctx.OnUpdate).
struct CompleteUpdate {
  updateId @0 :Text;
  resultJson @1 :Text;
  errorCode @2 :Text;
  errorMessage @3 :Text;
}

# ctx.ContinueAsNew: end the run and start the next one with this input, carrying the signals
# the code had not consumed.
struct ContinueAsNew {
  inputJson @0 :Text;
  signals @1 :List(CarriedSignal);
}

struct CarriedSignal {
  name @0 :Text;
  payloadJson @1 :Text;
  sentBy @2 :Text;
}

struct CompleteWorkflowTask {
  taskToken @0 :UInt64;
  union {
    commands @1 :List(Command);
    failure @2 :Error;   # failed_precondition "not cached": the server resends the full history
    queryResult @3 :Text;  # a query task's reply (JSON); a validation's: "null"
  }
}

enum ToolTaskKind {
  attempt @0;
  reconcile @1;
}

struct ToolTask {
  taskToken @0 :UInt64;
  kind @1 :ToolTaskKind;
  workflowId @2 :Text;
  runId @3 :Text;
  stepId @4 :Text;
  operationId @5 :Text;    # the idempotency key to send to the provider, on every attempt
  tool @6 :Text;
  inputJson @7 :Text;      # full input; may be "null" for a reconcile task after a restart
  attempt @8 :UInt32;      # the fencing token (attempt number, or reconcile round)
  deadlineUs @9 :Int64;    # hard deadline: stop the call by then
  # The progress details an earlier attempt of the operation heartbeated last (JSON, secret
  # fields removed; empty: none): where a resumed tool starts from.
  lastHeartbeatDetailsJson @10 :Text;
}

# The zero value of each enum is the safe one: a report that leaves it unset claims nothing.
enum FailureKind {
  unknown @0;
  retryable @1;
  definitive @2;
}

enum ReconcileVerdict {
  stillUnknown @0;
  committed @1;
  notFound @2;
}

struct CompleteToolTask {
  taskToken @0 :UInt64;
  workflowId @1 :Text;     # with operationId and attempt: lets a stale completion still be
  operationId @2 :Text;    # taken as evidence after the server has moved on or restarted
  attempt @3 :UInt32;
  outcome :union {
    attempt :group {
      success @4 :Bool;
      outputJson @5 :Text;
      providerRef @6 :Text;
      kind @7 :FailureKind;
      code @8 :Text;
      message @9 :Text;
      # The provider accepted the request and reports later (contract completion);
      # providerRef names it. Not a success.
      accepted @15 :Bool;
    }
    reconcile :group {
      verdict @10 :ReconcileVerdict;
      reconcileOutputJson @11 :Text;
      reconcileProviderRef @12 :Text;
      reconcileMessage @13 :Text;
    }
  }
  heartbeatDetailsJson @14 :Text;  # the attempt's last heartbeat details; empty: none
}

struct Heartbeat {
  taskTokens @0 :List(UInt64);   # the tool tasks this worker still holds
  # Tasks whose tool heartbeated itself since the last beat, with its latest details. Only
  # these count against a contract's heartbeat_timeout; taskTokens only keep the lease.
  progress @1 :List(ToolProgress);
}

struct ToolProgress {
  taskToken @0 :UInt64;
  detailsJson @1 :Text;  # empty: a beat without details
}

struct HeartbeatReply {
  cancel @0 :List(UInt64);  # tasks the server no longer holds for this worker: stop them
}

# --- principals (admin; docs/SECURITY.md) ---------------------------------------------------

struct CreateToken {
  name @0 :Text;                  # the principal's name (base/identifier.h rules)
  role @1 :Text;                  # admin | operator | approver | reader | worker; several:
                                  # "operator,approver"
  tools @2 :List(Text);           # approver, worker: the tools it is limited to; empty: any
  workflowTypes @3 :List(Text);   # worker: the workflow types it may host; empty: any
  expiresInS @4 :UInt64;          # 0: never expires
}

struct CreatedToken {
  principal @0 :PrincipalInfo;
  token @1 :Text;   # shown this once; the server keeps only its SHA-256
}

struct RevokeToken {
  name @0 :Text;
}

struct PrincipalInfo {
  name @0 :Text;
  role @1 :Text;
  tools @2 :List(Text);
  workflowTypes @3 :List(Text);
  createdAtUs @4 :Int64;
  createdBy @5 :Text;
  expiresAtUs @6 :Int64;   # 0: never
  revokedAtUs @7 :Int64;   # 0: not revoked
  revokedBy @8 :Text;
}

# --- workers (read; docs/VERSIONING.md) ------------------------------------------------------

struct WorkerList {
  workers @0 :List(WorkerInfo);   # the worker connections now registered, by worker id
  waiting @1 :List(WaitingRun);   # runs whose workflow task no connected worker may take
}

struct WorkerInfo {
  workerId @0 :Text;
  principal @1 :Text;
  buildId @2 :Text;                 # empty: unversioned
  compatibleBuilds @3 :List(Text);
  workflowTypes @4 :List(Text);     # the workflow task queues it polls
  tools @5 :List(Text);             # the tool task queues it polls
  connectedSinceUs @6 :Int64;       # when this connection registered
  workflowTasks @7 :List(Text);     # workflow ids whose workflow task it holds now
  toolTasks @8 :List(HeldToolTask); # tool task leases it holds now
}

struct HeldToolTask {
  workflowId @0 :Text;
  operationId @1 :Text;
  tool @2 :Text;
  attempt @3 :UInt32;
}

struct WaitingRun {
  workflowId @0 :Text;
  runId @1 :Text;
  workflowType @2 :Text;
  buildId @3 :Text;   # the build that started the run: a worker of it, or compatible, takes it
}
