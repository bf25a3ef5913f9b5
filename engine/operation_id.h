// Operation ids: derived, never drawn. The same (workflow id, step id) always gives the same id,
// so a replay after a crash finds the operation it already journaled, and every attempt of it
// carries the same idempotency key to the provider.
#pragma once

#include <string>
#include <string_view>

namespace reckon {

// "op_" followed by 32 hex characters of SHA-256(workflow_id, step_id).
// 32 hex digits of SHA-256 over `domain` and the length-prefixed workflow and step ids: the
// digest behind every id derived from a step (operations: empty domain; outbox messages).
std::string StepDigest(std::string_view domain, std::string_view workflow_id,
                       std::string_view step_id);

std::string OperationIdFor(std::string_view workflow_id, std::string_view step_id);

}  // namespace reckon
