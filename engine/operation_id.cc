#include "reckon/engine/operation_id.h"

#include "reckon/base/intent_hash.h"

namespace reckon {

std::string OperationIdFor(std::string_view workflow_id, std::string_view step_id) {
  std::string material;
  material.reserve(workflow_id.size() + step_id.size() + 16);
  // Length-prefixed, so ("a", "bc") and ("ab", "c") differ.
  material += std::to_string(workflow_id.size());
  material += ':';
  material += workflow_id;
  material += std::to_string(step_id.size());
  material += ':';
  material += step_id;
  return "op_" + ToHex(Sha256(material)).substr(0, 32);
}

}  // namespace reckon
