// Internal to the contract card (contract/contract_card.h): the facts its answers state that the
// behaviour decides, taken from the code that decides them rather than restated in prose, so
// that an answer cannot drift from what the engine and the tools do:
//   question 3: what the operation id is made of and how each tool kind receives it, from the
//               table the derivation and the tool adapters use (operation_id_facts.h);
//   question 4: the class of each code the contract lists, from ClassifyFailure
//               (failure_policy.h), which the engine acts on;
//   question 6: the intent fields, from RemoveSecretFields (base/intent_hash.h), the selection
//               the intent hash makes.
// tests/contract_card_behaviour_test.cc runs the behaviour and checks it against these facts.
// Stateless and thread-safe.
#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <vector>

#include "reckon/contract/contract.h"

namespace reckon {

// {"derived_from": [...], "derived_from_before_0_3": [...], "prefix", "journaled_in",
//  "cpp_tool_reads", "http_header_named_by", "http_template", "mcp_meta_key",
//  "mcp_argument_named_by"}.
boost::json::object OperationIdFacts();

// The codes a contract lists (definitive, retryable, unknown), each in the class that
// ClassifyFailure gives a failure reported with it as definitive or retryable. (A failure
// reported as unknown stays unknown whatever its code.) In the contract's order, each once.
struct CodeClasses {
  std::vector<std::string> definitive;
  std::vector<std::string> retryable;
  std::vector<std::string> unknown;
};
CodeClasses ClassifyListedCodes(const ToolContract& contract);

// The declared input fields (DeclaredFieldPaths) that the intent hash covers: those left by
// RemoveSecretFields on an input that has every declared field.
std::vector<std::string> IntentFields(const ToolContract& contract);

}  // namespace reckon
