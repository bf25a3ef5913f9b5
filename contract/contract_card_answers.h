// Internal to the contract card (contract/contract_card.h): the eight answers, derived from a
// contract's fields. Stateless and thread-safe.
#pragma once

#include <boost/json/array.hpp>

#include <chrono>
#include <string>

#include "reckon/contract/contract.h"

namespace reckon {

// The card's "questions" array: eight objects {"number", "key", "question", "answer",
// "facts"?}, in the order of the design brief.
boost::json::array CardQuestions(const ToolContract& contract);

// "2 s", "500 ms", "1.5 s", "24 h", "10 min".
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace reckon
