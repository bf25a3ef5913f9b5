// Heartbeat details: the progress a tool reports while it works (ToolCallContext::Heartbeat),
// kept by the dispatcher for the attempt in flight, journaled with the event that ends a
// failed attempt (AttemptFailedRetryable, OutcomeUnknown) and handed to the next attempt of the
// same operation (AttemptRequest::last_heartbeat_details_json), also after a restart, since the
// run's fold keeps the latest journaled details (OperationRecord).
//
// What reaches the journal is what a tool's other reports get: the contract's secret fields and
// the call's secret values removed (contract/secret_fields.h), as canonical JSON, at most
// kMaxHeartbeatDetailsBytes. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "reckon/contract/secret_fields.h"

namespace reckon {

// The details as they may be journaled: canonical JSON with secrets removed. Empty when `raw`
// is empty, not JSON, or larger than kMaxHeartbeatDetailsBytes (details are progress, not
// evidence: dropping bad ones is safe, and the tool's next beat replaces them).
std::string RedactedHeartbeatDetails(const SecretRedactor& redact, std::string_view raw);

}  // namespace reckon
