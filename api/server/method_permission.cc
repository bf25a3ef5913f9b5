#include "reckon/api/server/method_permission.h"

namespace reckon::api {

using Method = wire::Request::Method;
using auth::Permission;

std::optional<Permission> PermissionOf(Method::Which method) {
  switch (method) {
    case Method::START_WORKFLOW: return Permission::kStart;
    case Method::SIGNAL_WORKFLOW:
    case Method::UPDATE_WORKFLOW: return Permission::kSignal;
    case Method::CANCEL_WORKFLOW: return Permission::kCancel;
    case Method::DESCRIBE_WORKFLOW:
    case Method::LIST_WORKFLOWS:
    case Method::GET_HISTORY:
    case Method::LIST_CONTRACTS:
    case Method::GET_TRACE:
    case Method::WATCH_WORKFLOW:
    case Method::QUERY_WORKFLOW:
    case Method::LIST_WORKERS: return Permission::kRead;
    case Method::DECIDE_APPROVAL: return Permission::kApprove;
    case Method::RESOLVE_OPERATION: return Permission::kResolve;
    case Method::REGISTER_WORKER:
    case Method::POLL_WORKFLOW_TASK:
    case Method::GET_WORKFLOW_TASK_PAGE:
    case Method::COMPLETE_WORKFLOW_TASK:
    case Method::POLL_TOOL_TASK:
    case Method::COMPLETE_TOOL_TASK:
    case Method::HEARTBEAT:
    // A completion comes from the tool's side (a webhook relay holds a worker token).
    case Method::COMPLETE_OPERATION: return Permission::kWork;
    case Method::CREATE_TOKEN:
    case Method::LIST_TOKENS:
    case Method::REVOKE_TOKEN: return Permission::kManagePrincipals;
    case Method::WHO_AM_I: return std::nullopt;  // any valid credential (Service handles it)
  }
  return std::nullopt;
}

std::string_view MethodName(Method::Which method) {
  switch (method) {
    case Method::START_WORKFLOW: return "startWorkflow";
    case Method::SIGNAL_WORKFLOW: return "signalWorkflow";
    case Method::CANCEL_WORKFLOW: return "cancelWorkflow";
    case Method::DESCRIBE_WORKFLOW: return "describeWorkflow";
    case Method::LIST_WORKFLOWS: return "listWorkflows";
    case Method::GET_HISTORY: return "getHistory";
    case Method::LIST_CONTRACTS: return "listContracts";
    case Method::GET_TRACE: return "getTrace";
    case Method::WATCH_WORKFLOW: return "watchWorkflow";
    case Method::DECIDE_APPROVAL: return "decideApproval";
    case Method::RESOLVE_OPERATION: return "resolveOperation";
    case Method::REGISTER_WORKER: return "registerWorker";
    case Method::POLL_WORKFLOW_TASK: return "pollWorkflowTask";
    case Method::COMPLETE_WORKFLOW_TASK: return "completeWorkflowTask";
    case Method::POLL_TOOL_TASK: return "pollToolTask";
    case Method::COMPLETE_TOOL_TASK: return "completeToolTask";
    case Method::HEARTBEAT: return "heartbeat";
    case Method::CREATE_TOKEN: return "createToken";
    case Method::LIST_TOKENS: return "listTokens";
    case Method::REVOKE_TOKEN: return "revokeToken";
    case Method::WHO_AM_I: return "whoAmI";
    case Method::LIST_WORKERS: return "listWorkers";
    case Method::QUERY_WORKFLOW: return "queryWorkflow";
    case Method::UPDATE_WORKFLOW: return "updateWorkflow";
    case Method::GET_WORKFLOW_TASK_PAGE: return "getWorkflowTaskPage";
    case Method::COMPLETE_OPERATION: return "completeOperation";
  }
  return "an unknown method";
}

}  // namespace reckon::api
