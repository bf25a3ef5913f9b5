// Test-only: small valid contracts that tests modify one field at a time.
#pragma once

#include <boost/json/parse.hpp>

#include "reckon/contract/contract.h"

namespace reckon::testing_contracts {

using namespace std::chrono_literals;

// A refund-like non_repeatable_write with a lookup, approval over 10000 and a secret field.
inline ToolContract Payout() {
  ToolContract c;
  c.name = "send_payout";
  c.description = "Pay an amount to a payee.";
  c.side_effect = SideEffect::kNonRepeatableWrite;
  c.attempt_timeout = 2s;
  c.retry = {.max_attempts = 3,
             .backoff = {200ms, 2.0, 5s},
             .retryable_codes = {"rate_limited"},
             .reconcile_on_unknown = true};
  c.reconcile = {.mode = ReconcileMode::kLookup, .max_attempts = 4, .backoff = {1s, 2.0, 30s},
                 .grace = 500ms};
  c.approval = {.kind = ApprovalKind::kWhen,
                .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                .grant_ttl = 3600s};
  c.secret_fields = {"card_token"};
  c.input_schema = boost::json::parse(R"({
      "type": "object",
      "required": ["payee", "amount_cents"],
      "properties": {
        "payee": {"type": "string", "minLength": 1},
        "amount_cents": {"type": "integer", "minimum": 1},
        "memo": {"type": "string"},
        "card_token": {"type": "string"}
      },
      "additionalProperties": false})");
  c.definitive_codes = {"insufficient_funds"};
  c.unknown_codes = {"internal_error"};
  c.evidence = "The provider's payout id.";
  return c;
}

// A read_only lookup with no approval.
inline ToolContract Lookup() {
  ToolContract c;
  c.name = "get_payee";
  c.description = "Read a payee's record.";
  c.side_effect = SideEffect::kReadOnly;
  c.attempt_timeout = 1s;
  c.retry.max_attempts = 4;
  c.input_schema = boost::json::parse(
      R"({"type":"object","required":["payee"],"properties":{"payee":{"type":"string"}}})");
  return c;
}

}  // namespace reckon::testing_contracts
