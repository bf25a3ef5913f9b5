// The JSON form of a ToolContract, and the contract hash journaled with every operation.
//
// Format (all fields written; durations as integers in their unit):
//   {"name", "description", "side_effect": "non_repeatable_write", "attempt_timeout_ms",
//    "retry": {"max_attempts", "backoff": {"initial_ms", "multiplier", "max_ms"},
//              "retryable_codes": [...], "reconcile_on_unknown"},
//    "reconcile": {"mode": "lookup", "max_attempts", "backoff": {...}, "grace_ms"},
//    "approval": {"kind": "when", "when": [{"field", "op": ">", "value"}], "grant_ttl_s",
//                 "wait_deadline_s"?},
//    "dedup_window_s"?, "secret_fields": [...], "input_schema": {...},
//    "definitive_codes": [...], "unknown_codes": [...], "evidence"}
// ContractFromJson requires name, side_effect and input_schema; any other absent field takes
// its ToolContract default. Unknown fields are refused, so a misspelt field cannot silently
// fall back to a default. Stateless and thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <string>

#include "reckon/base/error.h"
#include "reckon/contract/contract.h"

namespace reckon {

boost::json::value ContractToJson(const ToolContract& contract);

// Errc::kInvalidArgument naming the field: "contract JSON: retry.backoff.multiplier: must be
// a number". Does not call ValidateContract.
Result<ToolContract> ContractFromJson(const boost::json::value& json);

// IntentHash (base/intent_hash.h) of ContractToJson: 64 lowercase hex characters. Journaled in
// OperationPrepared, so a replay can tell that a tool's contract changed under a run. Fails
// only if the contract holds JSON that cannot be canonicalized (an integer beyond 2^53 in the
// schema, say).
Result<std::string> ContractHash(const ToolContract& contract);

}  // namespace reckon
