#include "reckon/engine/operation_id.h"

#include "reckon/base/intent_hash.h"

namespace reckon {

std::string StepDigest(std::string_view domain, std::string_view workflow_id,
                       std::string_view step_id) {
  std::string material(domain);
  material.reserve(domain.size() + workflow_id.size() + step_id.size() + 16);
  // Length-prefixed, so ("a", "bc") and ("ab", "c") differ.
  material += std::to_string(workflow_id.size());
  material += ':';
  material += workflow_id;
  material += std::to_string(step_id.size());
  material += ':';
  material += step_id;
  return ToHex(Sha256(material)).substr(0, 32);
}

std::string OperationIdFor(std::string_view workflow_id, std::string_view step_id) {
  return "op_" + StepDigest("", workflow_id, step_id);
}

}  // namespace reckon
