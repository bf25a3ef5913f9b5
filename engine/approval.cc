#include "reckon/engine/approval.h"

#include <string>

namespace reckon {

Result<void> CheckGrant(const ApprovalGrant& grant, std::string_view operation_id,
                        std::string_view intent_hash, TimePoint now) {
  if (grant.operation_id != operation_id) {
    return Err(Errc::kPermissionDenied,
               "approval '" + grant.approval_id + "' was granted for operation '" +
                   grant.operation_id + "', not '" + std::string(operation_id) +
                   "'; request an approval for this operation");
  }
  if (grant.intent_hash != intent_hash) {
    return Err(Errc::kPermissionDenied,
               "approval '" + grant.approval_id + "' was granted for intent " +
                   grant.intent_hash.substr(0, 12) + "..., but the attempt's intent is " +
                   std::string(intent_hash.substr(0, 12)) +
                   "...: the input changed, so a new approval is needed");
  }
  if (now >= grant.expires_at) {
    const auto ago = std::chrono::duration_cast<std::chrono::milliseconds>(now - grant.expires_at);
    return Err(Errc::kPermissionDenied, "approval '" + grant.approval_id + "' expired " +
                                            std::to_string(ago.count()) +
                                            " ms ago; a new approval is needed");
  }
  return Ok();
}

std::string ApprovalIdFor(std::string_view operation_id, int request_number) {
  std::string_view suffix = operation_id.substr(operation_id.size() > 12 ? operation_id.size() - 12 : 0);
  return "ap_" + std::string(suffix) + "_" + std::to_string(request_number);
}

}  // namespace reckon
