// The contract card: a tool's contract explained for a person, answering the eight questions
// of the design brief ("Side-effect contracts"):
//   1 intended_effect   what one call does
//   2 side_effect       idempotent, deduplicated or non-repeatable, and what that means for
//                       retries
//   3 operation_id      where the operation id is made and stored
//   4 errors            which errors are definitive, retryable, unknown
//   5 reconciliation    how an unknown outcome is resolved
//   6 approval          what invalidates an approval
//   7 duplicates        how duplicate messages and callbacks are handled
//   8 evidence          what proves the final state
// Every answer is derived from the contract's fields (codes, durations, modes, schema), so a
// changed contract prints a changed card. What an answer states about the behaviour (how the
// operation id is derived and delivered, how each code is classified, which fields the intent
// hash covers) is read from the code that does it (contract_card_facts.h), and
// tests/card checks it against real runs. A contract that ValidateContract refuses still gets
// a card, headed by its problems. Stateless and thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <string>

#include "reckon/contract/contract.h"

namespace reckon {

// {"tool", "side_effect", "contract_hash"?, "problems"?, "questions": [{"number", "key",
//  "question", "answer": [sentences...], "facts"?: {...}}]}. "facts" carries the structured
// values an answer is built from (codes, intent fields, durations in ms).
boost::json::value ContractCardJson(const ToolContract& contract);

// The same card as text, wrapped at 100 columns, ending with a newline.
std::string RenderContractCard(const ToolContract& contract);

}  // namespace reckon
