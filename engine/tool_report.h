// What a tool reports, made safe to send, log and journal: the one place a report is redacted
// (contract/secret_fields.h says what is removed). A report is everything a tool or its
// provider fills in: an attempt's output, provider reference, error code and message and
// heartbeat details (also when it comes back later as an asynchronous completion), and a
// lookup's output, reference and message. RedactReport redacts each of them, so a field added
// to a report is redacted by adding it here.
//
// Who applies it: the worker that ran the call, before the report leaves it or is logged, with
// every secret value of the call (worker/call_secrets.h); then the decider, before anything is
// journaled, with what the engine knows (the contract's secret paths, and the input's values
// while the input is in memory). The journal, the trace, the logs and every reader of them
// (show, history, the HTTP API, the console, a plan's result) only ever see the redacted report.
//
// Heartbeat details: the progress a tool reports while it works (ToolCallContext::Heartbeat),
// kept by the dispatcher for the attempt in flight, journaled with the event that ends a
// failed attempt (AttemptFailedRetryable, OutcomeUnknown) and handed to the next attempt of the
// same operation (AttemptRequest::last_heartbeat_details_json), also after a restart, since the
// run's fold keeps the latest journaled details (OperationRecord). They are redacted like the
// rest, as canonical JSON of at most kMaxHeartbeatDetailsBytes.
//
// Pure functions; thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "reckon/contract/contract.h"
#include "reckon/contract/secret_fields.h"
#include "reckon/engine/tool_dispatcher.h"

namespace reckon {

// The redactor of one call of the tool with `contract` (which must outlive it): its secret
// fields, the secret values of the call's full `input` (null: not in memory) and `fetched`,
// the values the tool fetched itself (ToolCallContext::KeepSecret).
SecretRedactor CallRedactor(const ToolContract& contract, const boost::json::value* input,
                            std::vector<std::string> fetched = {});

// `report` with every field redacted.
AttemptOutcome RedactReport(const SecretRedactor& redact, AttemptOutcome report);
ReconcileOutcome RedactReport(const SecretRedactor& redact, ReconcileOutcome report);

// The details as they may be journaled: canonical JSON with secrets removed. Empty when `raw`
// is empty, not JSON, or larger than kMaxHeartbeatDetailsBytes (details are progress, not
// evidence: dropping bad ones is safe, and the tool's next beat replaces them).
std::string RedactedHeartbeatDetails(const SecretRedactor& redact, std::string_view raw);

}  // namespace reckon
