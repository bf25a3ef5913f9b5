#include "reckon/engine/operation_id.h"

#include "reckon/base/intent_hash.h"

namespace reckon {

namespace {

// Length-prefixed, so ("a", "bc") and ("ab", "c") differ.
void AppendPart(std::string& material, std::string_view part) {
  material += std::to_string(part.size());
  material += ':';
  material += part;
}

}  // namespace

std::string StepDigest(std::string_view domain, const IdScope& scope, std::string_view step_id) {
  std::string material(domain);
  material.reserve(domain.size() + scope.id_namespace.size() + scope.workflow_id.size() +
                   scope.run_id.size() + step_id.size() + 32);
  if (scope.version == kWorkflowScopedIds) {
    AppendPart(material, scope.workflow_id);
  } else {
    // A tag of its own, so no version-2 id can equal a version-0 one.
    material += "v2/";
    AppendPart(material, scope.id_namespace);
    AppendPart(material, scope.workflow_id);
    AppendPart(material, scope.run_id);
  }
  AppendPart(material, step_id);
  return ToHex(Sha256(material)).substr(0, 32);
}

std::string OperationIdFor(const IdScope& scope, std::string_view step_id) {
  return "op_" + StepDigest("", scope, step_id);
}

}  // namespace reckon
