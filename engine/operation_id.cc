#include "reckon/engine/operation_id.h"

#include "reckon/base/intent_hash.h"
#include "reckon/contract/operation_id_facts.h"

namespace reckon {

namespace {

// Length-prefixed, so ("a", "bc") and ("ab", "c") differ.
void AppendPart(std::string& material, std::string_view part) {
  material += std::to_string(part.size());
  material += ':';
  material += part;
}

std::string_view PartOf(OperationIdInput input, const IdScope& scope, std::string_view step_id) {
  switch (input) {
    case OperationIdInput::kNamespace: return scope.id_namespace;
    case OperationIdInput::kWorkflowId: return scope.workflow_id;
    case OperationIdInput::kRunId: return scope.run_id;
    case OperationIdInput::kStepId: return step_id;
  }
  return {};
}

}  // namespace

std::string StepDigest(std::string_view domain, const IdScope& scope, std::string_view step_id) {
  const bool run_scoped = scope.version != kWorkflowScopedIds;
  std::string material(domain);
  material.reserve(domain.size() + scope.id_namespace.size() + scope.workflow_id.size() +
                   scope.run_id.size() + step_id.size() + 32);
  // A tag of its own, so no version-2 id can equal a version-0 one.
  if (run_scoped) material += "v2/";
  // The inputs the contract card names (contract/operation_id_facts.h), in its order.
  for (OperationIdInput input : OperationIdInputs(run_scoped)) {
    AppendPart(material, PartOf(input, scope, step_id));
  }
  return ToHex(Sha256(material)).substr(0, 32);
}

std::string OperationIdFor(const IdScope& scope, std::string_view step_id) {
  return std::string(kOperationIdPrefix) + StepDigest("", scope, step_id);
}

}  // namespace reckon
