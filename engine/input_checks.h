// What the engine checks of a request from outside before it queues it: the identifiers and
// texts of base/identifier.h, and no value for a secret field in what is journaled whole
// (contract/secret_fields.h). Engine::Start, Signal, Cancel, DecideApproval and Resolve call
// these first, so a refused request is answered at once and nothing is journaled; the server
// checks the same fields on the wire before (api/server/request_fields.h), so both modes keep
// the same rules (docs/SECURITY.md, "Identifiers and secrets").
//
// Errors: Errc::kInvalidArgument naming the field, what is wrong and the rule. Pure functions;
// thread-safe as long as `contracts` is not being registered into.
#pragma once

#include <boost/json/value.hpp>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/engine/decider.h"

namespace reckon {

// A start: its workflow id and type, a definition hash if any (64 lowercase hex), and an input
// that carries no value at the path of a secret field of a contract in `contracts`.
Result<void> CheckStart(std::string_view workflow_id, std::string_view workflow_type,
                        const boost::json::value& input, std::string_view definition_hash,
                        const ContractRegistry& contracts);

// A signal: the run's id, the signal's name, and a payload that is JSON without secret fields.
Result<void> CheckSignal(std::string_view workflow_id, std::string_view name,
                         std::string_view payload_json, const ContractRegistry& contracts);

// A sender's request id (a signal's): empty (none given), or an id by the rules of an update
// id; `what` names it in the message.
Result<void> CheckRequestId(std::string_view request_id, std::string_view what);

// A completion (Engine::Complete): its operation id, a delivery id by the rules of an update
// id, a provider ref and a code and message that are one-line texts.
Result<void> CheckCompletion(const Completion& completion);

// A cancel: the run's id and a one-line reason.
Result<void> CheckCancel(std::string_view workflow_id, std::string_view reason);

// An approval decision: the run's id, the operation or approval id given, the intent hash when
// given, who decided (a principal name) and a one-line reason.
Result<void> CheckDecision(std::string_view workflow_id, const ApprovalDecision& decision);

// A person's resolution: the run's id, the operation id, the provider ref, who resolved (a
// principal name) and a one-line note.
Result<void> CheckResolution(std::string_view workflow_id, const HumanResolution& resolution);

}  // namespace reckon
