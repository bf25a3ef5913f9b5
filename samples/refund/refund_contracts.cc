#include "samples/refund/refund_contracts.h"

#include <boost/json/serialize.hpp>

#include "reckon/contract/contract_json.h"

#include <boost/json/parse.hpp>

namespace reckon::refund {

using namespace std::chrono_literals;

ToolContract SendRefundContract() {
  ToolContract c;
  c.name = "send_refund";
  c.description = "Refund part or all of a captured payment to the customer's card, once.";
  c.side_effect = SideEffect::kNonRepeatableWrite;
  c.attempt_timeout = 2s;
  c.retry = {.max_attempts = 3,
             .backoff = {.initial = 250ms, .multiplier = 2.0, .max = 5s},
             .retryable_codes = {"rate_limited", "provider_unavailable_before_commit"},
             .reconcile_on_unknown = true};
  c.reconcile = {.mode = ReconcileMode::kLookup,
                 .max_attempts = 5,
                 .backoff = {.initial = 1s, .multiplier = 2.0, .max = 1min},
                 .grace = 500ms};
  c.approval = {.kind = ApprovalKind::kWhen,
                .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                .grant_ttl = 1h,
                .wait_deadline = 24h};
  c.secret_fields = {"card_token"};
  c.input_schema = boost::json::parse(R"({
    "type": "object",
    "required": ["payment_id", "amount_cents", "reason"],
    "properties": {
      "payment_id": {"type": "string", "minLength": 1},
      "amount_cents": {"type": "integer", "minimum": 1},
      "reason": {"type": "string", "minLength": 1, "maxLength": 500},
      "card_token": {"type": "string", "description": "secret: never hashed, journaled or traced"}
    },
    "additionalProperties": false
  })");
  c.output_schema = boost::json::parse(R"({
    "type": "object",
    "required": ["refund_id", "payment_id", "amount_cents"],
    "properties": {
      "refund_id": {"type": "string"},
      "payment_id": {"type": "string"},
      "amount_cents": {"type": "integer"},
      "currency": {"type": "string"},
      "reason": {"type": "string"},
      "status": {"type": "string"},
      "created_at": {"type": "string"},
      "idempotency_key": {"type": "string"}
    }
  })");
  c.definitive_codes = {"payment_not_found", "amount_exceeds_captured", "refund_not_allowed"};
  c.unknown_codes = {"internal_error"};
  c.evidence = "The provider's refund id (re_...), returned by POST /refunds or found by "
               "GET /refunds?idempotency_key=<operation id>.";
  return c;
}

ToolContract LookupPaymentContract() {
  ToolContract c;
  c.name = "lookup_payment";
  c.description = "Read a payment: its amount, currency, status and what was already refunded.";
  c.side_effect = SideEffect::kReadOnly;
  c.attempt_timeout = 1s;
  c.retry = {.max_attempts = 4, .backoff = {.initial = 200ms, .multiplier = 2.0, .max = 2s}};
  c.input_schema = boost::json::parse(R"({
    "type": "object",
    "required": ["payment_id"],
    "properties": {"payment_id": {"type": "string", "minLength": 1}},
    "additionalProperties": false
  })");
  c.output_schema = boost::json::parse(R"({
    "type": "object",
    "required": ["payment_id", "amount_cents", "currency", "status"],
    "properties": {
      "payment_id": {"type": "string"},
      "amount_cents": {"type": "integer"},
      "currency": {"type": "string"},
      "status": {"type": "string"}
    }
  })");
  c.definitive_codes = {"payment_not_found"};
  c.evidence = "The payment record returned by GET /payments/<payment_id>.";
  return c;
}

Result<void> RegisterRefundContracts(ContractRegistry& registry) {
  RECKON_TRY(registry.Register(SendRefundContract()));
  RECKON_TRY(registry.Register(LookupPaymentContract()));
  return Ok();
}

std::string RefundContractsJson() {
  std::string out = "[\n";
  for (const ToolContract& contract : {LookupPaymentContract(), SendRefundContract()}) {
    if (out.size() > 2) out += ",\n";
    out += "  " + boost::json::serialize(ContractToJson(contract));
  }
  return out + "\n]\n";
}

}  // namespace reckon::refund
