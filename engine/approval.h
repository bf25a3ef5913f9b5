// Approval grants and what they authorize. A grant is bound to one operation id and one intent
// hash and lives until its expiry: an attempt may consume it only if all three still hold.
// A retry of the same operation with unchanged intent reuses the grant; a changed intent,
// another operation, or an expired grant needs a new approval. Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/engine/clock.h"

namespace reckon {

struct ApprovalGrant {
  std::string approval_id;
  std::string operation_id;
  std::string intent_hash;
  std::string approved_by;
  TimePoint expires_at;
};

// Success if `grant` authorizes an attempt of `operation_id` with intent `intent_hash` at
// `now`; otherwise Errc::kPermissionDenied saying which binding failed and what to do.
Result<void> CheckGrant(const ApprovalGrant& grant, std::string_view operation_id,
                        std::string_view intent_hash, TimePoint now);

// A fresh approval id for an operation's n-th approval request: "ap_<operation suffix>_<n>".
std::string ApprovalIdFor(std::string_view operation_id, int request_number);

}  // namespace reckon
