#include "reckon/api/server/methods.h"

#include "reckon/base/identifier.h"

namespace reckon::api {
namespace {

using M = wire::Request::Method;
using auth::Permission;

std::string_view View(capnp::Text::Reader text) { return {text.begin(), text.size()}; }
std::string Str(capnp::Text::Reader text) { return std::string(View(text)); }

// An identifier the method requires: empty is refused too.
Result<void> Id(IdKind kind, capnp::Text::Reader text, std::string_view field) {
  return ValidateId(kind, View(text), field);
}

// An identifier that must be valid when given (empty: the handler decides).
Result<void> IdIfGiven(IdKind kind, capnp::Text::Reader text, std::string_view field) {
  if (text.size() == 0) return Ok();
  return ValidateId(kind, View(text), field);
}

Result<void> TextField(TextKind kind, capnp::Text::Reader text, std::string_view field) {
  return ValidateText(kind, View(text), field);
}

// The fields of each method (a run id follows the rules of a workflow id: the engine makes
// them so).

Result<void> NoFields(M::Reader) { return Ok(); }

Result<void> StartFields(M::Reader m) {
  auto in = m.getStartWorkflow();
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  RECKON_TRY(Id(IdKind::kWorkflowType, in.getWorkflowType(), "workflowType"));
  return IdIfGiven(IdKind::kIntentHash, in.getDefinitionHash(), "definitionHash");
}

Result<void> SignalFields(M::Reader m) {
  auto in = m.getSignalWorkflow();
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  RECKON_TRY(IdIfGiven(IdKind::kUpdateId, in.getRequestId(), "requestId"));
  return Id(IdKind::kSignalName, in.getName(), "name");
}

Result<void> CancelFields(M::Reader m) {
  auto in = m.getCancelWorkflow();
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  return TextField(TextKind::kText, in.getReason(), "reason");
}

Result<void> KeyFields(wire::WorkflowKey::Reader in) {
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  return IdIfGiven(IdKind::kWorkflowId, in.getRunId(), "runId");
}
Result<void> DescribeFields(M::Reader m) { return KeyFields(m.getDescribeWorkflow()); }
Result<void> HistoryFields(M::Reader m) { return KeyFields(m.getGetHistory()); }
Result<void> TraceFields(M::Reader m) { return KeyFields(m.getGetTrace()); }

Result<void> WatchFields(M::Reader m) {
  return Id(IdKind::kWorkflowId, m.getWatchWorkflow().getWorkflowId(), "workflowId");
}

Result<void> ListFields(M::Reader m) {
  auto in = m.getListWorkflows();
  RECKON_TRY(IdIfGiven(IdKind::kToolName, in.getTool(), "tool"));
  RECKON_TRY(IdIfGiven(IdKind::kWorkflowType, in.getWorkflowType(), "workflowType"));
  // A prefix of a workflow id is a text; what it matches is compared byte for byte.
  return TextField(TextKind::kText, in.getIdPrefix(), "idPrefix");
}

Result<void> DecideFields(M::Reader m) {
  auto in = m.getDecideApproval();
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  RECKON_TRY(IdIfGiven(IdKind::kOperationId, in.getOperationId(), "operationId"));
  RECKON_TRY(IdIfGiven(IdKind::kApprovalId, in.getApprovalId(), "approvalId"));
  RECKON_TRY(IdIfGiven(IdKind::kIntentHash, in.getExpectedIntentHash(), "expectedIntentHash"));
  // decidedBy is a free-text note beside the principal (docs/SECURITY.md).
  RECKON_TRY(TextField(TextKind::kText, in.getDecidedBy(), "decidedBy"));
  return TextField(TextKind::kText, in.getReason(), "reason");
}

Result<void> ResolveFields(M::Reader m) {
  auto in = m.getResolveOperation();
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  RECKON_TRY(Id(IdKind::kOperationId, in.getOperationId(), "operationId"));
  RECKON_TRY(TextField(TextKind::kProviderRef, in.getProviderRef(), "providerRef"));
  RECKON_TRY(TextField(TextKind::kText, in.getResolvedBy(), "resolvedBy"));
  return TextField(TextKind::kText, in.getNote(), "note");
}

Result<void> QueryFields(M::Reader m) {
  auto in = m.getQueryWorkflow();
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  return Id(IdKind::kHandlerName, in.getName(), "name");
}

Result<void> UpdateFields(M::Reader m) {
  auto in = m.getUpdateWorkflow();
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  RECKON_TRY(Id(IdKind::kHandlerName, in.getName(), "name"));
  return IdIfGiven(IdKind::kUpdateId, in.getUpdateId(), "updateId");
}

Result<void> CompleteOperationFields(M::Reader m) {
  auto in = m.getCompleteOperation();
  RECKON_TRY(IdIfGiven(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  RECKON_TRY(Id(IdKind::kOperationId, in.getOperationId(), "operationId"));
  return Id(IdKind::kUpdateId, in.getDeliveryId(), "deliveryId");
}

Result<void> RegisterFields(M::Reader m) {
  auto in = m.getRegisterWorker();
  RECKON_TRY(Id(IdKind::kWorkerId, in.getWorkerId(), "workerId"));
  auto types = in.getWorkflowTypes();
  for (unsigned i = 0; i < types.size(); ++i) {
    RECKON_TRY(Id(IdKind::kWorkflowType, types[i], "workflowTypes[" + std::to_string(i) + "]"));
  }
  auto tools = in.getTools();
  for (unsigned i = 0; i < tools.size(); ++i) {
    RECKON_TRY(Id(IdKind::kToolName, tools[i].getName(), "tools[" + std::to_string(i) + "].name"));
  }
  return Ok();
}

Result<void> CompleteToolFields(M::Reader m) {
  auto in = m.getCompleteToolTask();
  RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
  return Id(IdKind::kOperationId, in.getOperationId(), "operationId");
}

// The workflow each client method is about.
std::string StartWorkflowId(M::Reader m) { return Str(m.getStartWorkflow().getWorkflowId()); }
std::string SignalWorkflowId(M::Reader m) { return Str(m.getSignalWorkflow().getWorkflowId()); }
std::string CancelWorkflowId(M::Reader m) { return Str(m.getCancelWorkflow().getWorkflowId()); }
std::string DescribeWorkflowId(M::Reader m) {
  return Str(m.getDescribeWorkflow().getWorkflowId());
}
std::string HistoryWorkflowId(M::Reader m) { return Str(m.getGetHistory().getWorkflowId()); }
std::string TraceWorkflowId(M::Reader m) { return Str(m.getGetTrace().getWorkflowId()); }
std::string WatchWorkflowId(M::Reader m) { return Str(m.getWatchWorkflow().getWorkflowId()); }
std::string DecideWorkflowId(M::Reader m) { return Str(m.getDecideApproval().getWorkflowId()); }
std::string ResolveWorkflowId(M::Reader m) {
  return Str(m.getResolveOperation().getWorkflowId());
}
std::string QueryWorkflowId(M::Reader m) { return Str(m.getQueryWorkflow().getWorkflowId()); }
std::string UpdateWorkflowId(M::Reader m) { return Str(m.getUpdateWorkflow().getWorkflowId()); }
// Optional on the wire: without it the request is served where it lands.
std::string CompletionWorkflowId(M::Reader m) {
  return Str(m.getCompleteOperation().getWorkflowId());
}

constexpr std::string_view kWorkerOnly =
    "a worker's: one connection that registers, then long-polls and reports on it (worker/)";
constexpr std::string_view kTokensOnly =
    "an admin's, with `reckon auth` on the protocol port; the console has no token management";

constexpr MethodApi kClient = MethodApi::kClient;
constexpr MethodApi kWorker = MethodApi::kWorker;
constexpr MethodApi kPrincipal = MethodApi::kPrincipal;

// name, permission, api, fields, workflow, cli, wire-only reason
const MethodRow kMethods[] = {
    {M::START_WORKFLOW, "startWorkflow", Permission::kStart, kClient, StartFields,
     StartWorkflowId, "start", ""},
    {M::SIGNAL_WORKFLOW, "signalWorkflow", Permission::kSignal, kClient, SignalFields,
     SignalWorkflowId, "signal", ""},
    {M::CANCEL_WORKFLOW, "cancelWorkflow", Permission::kCancel, kClient, CancelFields,
     CancelWorkflowId, "cancel", ""},
    {M::DESCRIBE_WORKFLOW, "describeWorkflow", Permission::kRead, kClient, DescribeFields,
     DescribeWorkflowId, "show", ""},
    {M::LIST_WORKFLOWS, "listWorkflows", Permission::kRead, kClient, ListFields, nullptr, "list",
     ""},
    {M::GET_HISTORY, "getHistory", Permission::kRead, kClient, HistoryFields, HistoryWorkflowId,
     "history", ""},
    {M::DECIDE_APPROVAL, "decideApproval", Permission::kApprove, kClient, DecideFields,
     DecideWorkflowId, "approve", ""},
    {M::RESOLVE_OPERATION, "resolveOperation", Permission::kResolve, kClient, ResolveFields,
     ResolveWorkflowId, "resolve", ""},
    {M::LIST_CONTRACTS, "listContracts", Permission::kRead, kClient, NoFields, nullptr,
     "contracts", ""},
    {M::GET_TRACE, "getTrace", Permission::kRead, kClient, TraceFields, TraceWorkflowId, "trace",
     ""},
    {M::REGISTER_WORKER, "registerWorker", Permission::kWork, kWorker, RegisterFields, nullptr,
     "worker", kWorkerOnly},
    {M::POLL_WORKFLOW_TASK, "pollWorkflowTask", Permission::kWork, kWorker, NoFields, nullptr,
     "worker", kWorkerOnly},
    {M::COMPLETE_WORKFLOW_TASK, "completeWorkflowTask", Permission::kWork, kWorker, NoFields,
     nullptr, "worker", kWorkerOnly},
    {M::POLL_TOOL_TASK, "pollToolTask", Permission::kWork, kWorker, NoFields, nullptr, "worker",
     kWorkerOnly},
    {M::COMPLETE_TOOL_TASK, "completeToolTask", Permission::kWork, kWorker, CompleteToolFields,
     nullptr, "worker", kWorkerOnly},
    {M::HEARTBEAT, "heartbeat", Permission::kWork, kWorker, NoFields, nullptr, "worker",
     kWorkerOnly},
    {M::WATCH_WORKFLOW, "watchWorkflow", Permission::kRead, kClient, WatchFields,
     WatchWorkflowId, "plan run", ""},
    {M::CREATE_TOKEN, "createToken", Permission::kManagePrincipals, kPrincipal, NoFields,
     nullptr, "auth token create", kTokensOnly},
    {M::LIST_TOKENS, "listTokens", Permission::kManagePrincipals, kPrincipal, NoFields, nullptr,
     "auth token list", kTokensOnly},
    {M::REVOKE_TOKEN, "revokeToken", Permission::kManagePrincipals, kPrincipal, NoFields,
     nullptr, "auth token revoke", kTokensOnly},
    // Any valid credential: it answers who the credential is.
    {M::WHO_AM_I, "whoAmI", std::nullopt, kPrincipal, NoFields, nullptr, "auth whoami", ""},
    {M::LIST_WORKERS, "listWorkers", Permission::kRead, kClient, NoFields, nullptr, "workers",
     "not yet in docs/HTTP_API.md: the console does not show workers (`reckon workers` does)"},
    {M::QUERY_WORKFLOW, "queryWorkflow", Permission::kRead, kClient, QueryFields,
     QueryWorkflowId, "query", ""},
    {M::UPDATE_WORKFLOW, "updateWorkflow", Permission::kSignal, kClient, UpdateFields,
     UpdateWorkflowId, "update", ""},
    {M::GET_WORKFLOW_TASK_PAGE, "getWorkflowTaskPage", Permission::kWork, kWorker, NoFields,
     nullptr, "worker", kWorkerOnly},
    // A completion comes from the tool's side (a webhook relay holds a worker token).
    {M::COMPLETE_OPERATION, "completeOperation", Permission::kWork, kClient,
     CompleteOperationFields, CompletionWorkflowId, "complete", ""},
};

}  // namespace

std::span<const MethodRow> MethodTable() { return kMethods; }

const MethodRow* FindMethod(wire::Request::Method::Which method) {
  for (const MethodRow& row : kMethods) {
    if (row.which == method) return &row;
  }
  return nullptr;
}

}  // namespace reckon::api
