// Contracts of each side-effect class with millisecond timings, so that engine tests that go
// through deadlines, backoffs and reconciliation graces stay fast. Tests change one field at a
// time. Plain values.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <string>

#include "reckon/contract/contract.h"

namespace reckon::testing {

inline constexpr std::chrono::milliseconds kAttemptTimeout{100};
inline constexpr std::chrono::milliseconds kRetryBackoff{5};
inline constexpr std::chrono::milliseconds kGrace{30};

// A contract named `name` of class `side_effect`: attempt_timeout kAttemptTimeout; 3 attempts
// with kRetryBackoff; "rate_limited" retryable and "card_declined" definitive; deduplicated
// and non-repeatable writes reconcile by lookup (3 lookups, grace kGrace), a deduplicated
// write inside a one-hour window; no approval. Input: {"account": string, "amount_cents":
// integer >= 1, "memo"?: string, "card_token"?: string}, card_token being a secret field.
ToolContract FastContract(std::string name, SideEffect side_effect);

// An input for FastContract tools.
boost::json::value FastInput(const std::string& account, std::int64_t amount_cents,
                             const std::string& card_token = "");

}  // namespace reckon::testing
