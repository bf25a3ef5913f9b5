#include "reckon/api/server/request_fields.h"

#include "reckon/base/identifier.h"

namespace reckon::api {
namespace {

std::string_view View(capnp::Text::Reader text) { return {text.begin(), text.size()}; }

// An identifier that must be valid when given (empty: the handler decides).
Result<void> IdIfGiven(IdKind kind, capnp::Text::Reader text, std::string_view field) {
  if (text.size() == 0) return Ok();
  return ValidateId(kind, View(text), field);
}

// An identifier the method requires: empty is refused too.
Result<void> Id(IdKind kind, capnp::Text::Reader text, std::string_view field) {
  return ValidateId(kind, View(text), field);
}

Result<void> TextField(TextKind kind, capnp::Text::Reader text, std::string_view field) {
  return ValidateText(kind, View(text), field);
}

Result<void> CheckClientMethod(wire::Request::Method::Reader m) {
  using M = wire::Request::Method;
  switch (m.which()) {
    case M::START_WORKFLOW: {
      auto in = m.getStartWorkflow();
      RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      RECKON_TRY(Id(IdKind::kWorkflowType, in.getWorkflowType(), "workflowType"));
      return IdIfGiven(IdKind::kIntentHash, in.getDefinitionHash(), "definitionHash");
    }
    case M::SIGNAL_WORKFLOW: {
      auto in = m.getSignalWorkflow();
      RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      RECKON_TRY(IdIfGiven(IdKind::kUpdateId, in.getRequestId(), "requestId"));
      return Id(IdKind::kSignalName, in.getName(), "name");
    }
    case M::COMPLETE_OPERATION: {
      auto in = m.getCompleteOperation();
      RECKON_TRY(IdIfGiven(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      RECKON_TRY(Id(IdKind::kOperationId, in.getOperationId(), "operationId"));
      return Id(IdKind::kUpdateId, in.getDeliveryId(), "deliveryId");
    }
    case M::QUERY_WORKFLOW: {
      auto in = m.getQueryWorkflow();
      RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      return Id(IdKind::kHandlerName, in.getName(), "name");
    }
    case M::UPDATE_WORKFLOW: {
      auto in = m.getUpdateWorkflow();
      RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      RECKON_TRY(Id(IdKind::kHandlerName, in.getName(), "name"));
      return IdIfGiven(IdKind::kUpdateId, in.getUpdateId(), "updateId");
    }
    case M::CANCEL_WORKFLOW: {
      auto in = m.getCancelWorkflow();
      RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      return TextField(TextKind::kText, in.getReason(), "reason");
    }
    // A run id follows the rules of a workflow id (the engine makes them so).
    case M::DESCRIBE_WORKFLOW: {
      RECKON_TRY(Id(IdKind::kWorkflowId, m.getDescribeWorkflow().getWorkflowId(), "workflowId"));
      return IdIfGiven(IdKind::kWorkflowId, m.getDescribeWorkflow().getRunId(), "runId");
    }
    case M::GET_HISTORY: {
      RECKON_TRY(Id(IdKind::kWorkflowId, m.getGetHistory().getWorkflowId(), "workflowId"));
      return IdIfGiven(IdKind::kWorkflowId, m.getGetHistory().getRunId(), "runId");
    }
    case M::GET_TRACE: {
      RECKON_TRY(Id(IdKind::kWorkflowId, m.getGetTrace().getWorkflowId(), "workflowId"));
      return IdIfGiven(IdKind::kWorkflowId, m.getGetTrace().getRunId(), "runId");
    }
    case M::WATCH_WORKFLOW:
      return Id(IdKind::kWorkflowId, m.getWatchWorkflow().getWorkflowId(), "workflowId");
    case M::LIST_WORKFLOWS: {
      auto in = m.getListWorkflows();
      RECKON_TRY(IdIfGiven(IdKind::kToolName, in.getTool(), "tool"));
      RECKON_TRY(IdIfGiven(IdKind::kWorkflowType, in.getWorkflowType(), "workflowType"));
      // A prefix of a workflow id is a text; what it matches is compared byte for byte.
      return TextField(TextKind::kText, in.getIdPrefix(), "idPrefix");
    }
    case M::DECIDE_APPROVAL: {
      auto in = m.getDecideApproval();
      RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      RECKON_TRY(IdIfGiven(IdKind::kOperationId, in.getOperationId(), "operationId"));
      RECKON_TRY(IdIfGiven(IdKind::kApprovalId, in.getApprovalId(), "approvalId"));
      RECKON_TRY(IdIfGiven(IdKind::kIntentHash, in.getExpectedIntentHash(), "expectedIntentHash"));
      // decidedBy is a free-text note beside the principal (docs/SECURITY.md).
      RECKON_TRY(TextField(TextKind::kText, in.getDecidedBy(), "decidedBy"));
      return TextField(TextKind::kText, in.getReason(), "reason");
    }
    case M::RESOLVE_OPERATION: {
      auto in = m.getResolveOperation();
      RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      RECKON_TRY(Id(IdKind::kOperationId, in.getOperationId(), "operationId"));
      RECKON_TRY(TextField(TextKind::kProviderRef, in.getProviderRef(), "providerRef"));
      RECKON_TRY(TextField(TextKind::kText, in.getResolvedBy(), "resolvedBy"));
      return TextField(TextKind::kText, in.getNote(), "note");
    }
    default:
      return Ok();
  }
}

Result<void> CheckWorkerMethod(wire::Request::Method::Reader m) {
  using M = wire::Request::Method;
  switch (m.which()) {
    case M::REGISTER_WORKER: {
      auto in = m.getRegisterWorker();
      RECKON_TRY(Id(IdKind::kWorkerId, in.getWorkerId(), "workerId"));
      auto types = in.getWorkflowTypes();
      for (unsigned i = 0; i < types.size(); ++i) {
        RECKON_TRY(Id(IdKind::kWorkflowType, types[i], "workflowTypes[" + std::to_string(i) + "]"));
      }
      auto tools = in.getTools();
      for (unsigned i = 0; i < tools.size(); ++i) {
        RECKON_TRY(
            Id(IdKind::kToolName, tools[i].getName(), "tools[" + std::to_string(i) + "].name"));
      }
      return Ok();
    }
    case M::COMPLETE_TOOL_TASK: {
      auto in = m.getCompleteToolTask();
      RECKON_TRY(Id(IdKind::kWorkflowId, in.getWorkflowId(), "workflowId"));
      return Id(IdKind::kOperationId, in.getOperationId(), "operationId");
    }
    default:
      return Ok();
  }
}

}  // namespace

Result<void> ValidateRequestFields(wire::Request::Method::Reader method) {
  RECKON_TRY(CheckClientMethod(method));
  return CheckWorkerMethod(method);
}

}  // namespace reckon::api
