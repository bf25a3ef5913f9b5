#include "reckon/contract/operation_id_facts.h"

namespace reckon {

std::string_view OperationIdInputName(OperationIdInput input) {
  switch (input) {
    case OperationIdInput::kNamespace: return "namespace";
    case OperationIdInput::kWorkflowId: return "workflow_id";
    case OperationIdInput::kRunId: return "run_id";
    case OperationIdInput::kStepId: return "step_id";
  }
  return "invalid";
}

}  // namespace reckon
