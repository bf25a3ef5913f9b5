// Operation ids: derived, never drawn. The same (workflow id, step id) always gives the same id,
// so a replay after a crash finds the operation it already journaled, and every attempt of it
// carries the same idempotency key to the provider.
#pragma once

#include <string>
#include <string_view>

namespace reckon {

// "op_" followed by 32 hex characters of SHA-256(workflow_id, step_id).
std::string OperationIdFor(std::string_view workflow_id, std::string_view step_id);

}  // namespace reckon
