#include "reckon/host/testing/fast_contracts.h"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

namespace reckon::testing {

using namespace std::chrono_literals;

ToolContract FastContract(std::string name, SideEffect side_effect) {
  ToolContract c;
  c.name = std::move(name);
  c.description = "A test tool of class " + std::string(SideEffectName(side_effect)) + ".";
  c.side_effect = side_effect;
  c.attempt_timeout = kAttemptTimeout;
  c.retry = {.max_attempts = 3,
             .backoff = {kRetryBackoff, 2.0, 40ms},
             .retryable_codes = {"rate_limited"},
             .reconcile_on_unknown = side_effect == SideEffect::kNonRepeatableWrite};
  if (side_effect == SideEffect::kDeduplicatedWrite ||
      side_effect == SideEffect::kNonRepeatableWrite) {
    c.reconcile = {.mode = ReconcileMode::kLookup, .max_attempts = 3,
                   .backoff = {10ms, 2.0, 40ms}, .grace = kGrace};
  }
  if (side_effect == SideEffect::kDeduplicatedWrite) c.dedup_window = 3600s;
  c.secret_fields = {"card_token"};
  c.input_schema = boost::json::parse(R"({
      "type": "object",
      "required": ["account", "amount_cents"],
      "properties": {
        "account": {"type": "string", "minLength": 1},
        "amount_cents": {"type": "integer", "minimum": 1},
        "memo": {"type": "string"},
        "card_token": {"type": "string"}
      },
      "additionalProperties": false})");
  c.definitive_codes = {"card_declined"};
  if (IsWrite(side_effect)) c.evidence = "The provider's reference for the effect.";
  return c;
}

boost::json::value FastInput(const std::string& account, std::int64_t amount_cents,
                             const std::string& card_token) {
  boost::json::object input{{"account", account}, {"amount_cents", amount_cents}};
  if (!card_token.empty()) input["card_token"] = card_token;
  return input;
}

}  // namespace reckon::testing
