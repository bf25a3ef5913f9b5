#include "reckon/engine/input_checks.h"

#include <string>

#include "reckon/base/identifier.h"
#include "reckon/base/jcs.h"
#include "reckon/contract/secret_fields.h"

namespace reckon {

Result<void> CheckStart(std::string_view workflow_id, std::string_view workflow_type,
                        const boost::json::value& input, std::string_view definition_hash,
                        const ContractRegistry& contracts) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, workflow_id));
  RECKON_TRY(ValidateId(IdKind::kWorkflowType, workflow_type));
  if (!definition_hash.empty()) {
    RECKON_TRY(ValidateId(IdKind::kIntentHash, definition_hash, "definition hash"));
  }
  return RefuseSecretValues(input, contracts,
                            "the input of workflow '" + std::string(workflow_id) + "'");
}

Result<void> CheckSignal(std::string_view workflow_id, std::string_view name,
                         std::string_view payload_json, const ContractRegistry& contracts) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, workflow_id));
  RECKON_TRY(ValidateId(IdKind::kSignalName, name));
  auto payload = ParseStrictJson(payload_json);
  if (!payload)
    return payload.error().WithContext("the payload of signal '" + std::string(name) + "'");
  return RefuseSecretValues(payload.value(), contracts,
                            "the payload of signal '" + std::string(name) + "'");
}

Result<void> CheckRequestId(std::string_view request_id, std::string_view what) {
  if (request_id.empty()) return Ok();
  if (auto valid = ValidateId(IdKind::kUpdateId, request_id); !valid) {
    return valid.error().WithContext(what);
  }
  return Ok();
}

Result<void> CheckCompletion(const Completion& completion) {
  if (!completion.workflow_id.empty()) {
    RECKON_TRY(ValidateId(IdKind::kWorkflowId, completion.workflow_id));
  }
  RECKON_TRY(ValidateId(IdKind::kOperationId, completion.operation_id));
  if (completion.delivery_id.empty()) {
    return Err(Errc::kInvalidArgument,
               "a completion needs a delivery id: the sender's id of this delivery, the same on "
               "every redelivery (e.g. the webhook's event id)");
  }
  RECKON_TRY(CheckRequestId(completion.delivery_id, "delivery id"));
  RECKON_TRY(ValidateText(TextKind::kProviderRef, completion.outcome.provider_ref, "provider ref"));
  RECKON_TRY(ValidateText(TextKind::kText, completion.outcome.code, "code"));
  return ValidateText(TextKind::kText, completion.outcome.message, "message");
}

Result<void> CheckCancel(std::string_view workflow_id, std::string_view reason) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, workflow_id));
  return ValidateText(TextKind::kText, reason, "reason");
}

Result<void> CheckDecision(std::string_view workflow_id, const ApprovalDecision& decision) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, workflow_id));
  if (!decision.operation_id.empty()) {
    RECKON_TRY(ValidateId(IdKind::kOperationId, decision.operation_id));
  }
  if (!decision.approval_id.empty()) {
    RECKON_TRY(ValidateId(IdKind::kApprovalId, decision.approval_id));
  }
  if (!decision.expected_intent_hash.empty()) {
    RECKON_TRY(
        ValidateId(IdKind::kIntentHash, decision.expected_intent_hash, "expected intent hash"));
  }
  RECKON_TRY(ValidatePrincipalName(decision.decided_by, "decided by"));
  RECKON_TRY(ValidateText(TextKind::kText, decision.note, "note"));
  return ValidateText(TextKind::kText, decision.reason, "reason");
}

Result<void> CheckResolution(std::string_view workflow_id, const HumanResolution& resolution) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, workflow_id));
  RECKON_TRY(ValidateId(IdKind::kOperationId, resolution.operation_id));
  RECKON_TRY(ValidateText(TextKind::kProviderRef, resolution.provider_ref, "provider ref"));
  RECKON_TRY(ValidatePrincipalName(resolution.resolved_by, "resolved by"));
  return ValidateText(TextKind::kText, resolution.note, "note");
}

}  // namespace reckon
