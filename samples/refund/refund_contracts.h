// The refund sample's tool contracts: `send_refund` moves money back to a customer and must
// never happen twice; `lookup_payment` only reads. Both talk to a payments provider with a
// Stripe-like API (POST /refunds with an Idempotency-Key; GET /refunds?idempotency_key=...).
#pragma once

#include <string>

#include "reckon/base/error.h"
#include "reckon/contract/contract.h"
#include "reckon/contract/contract_registry.h"

namespace reckon::refund {

// non_repeatable_write. Input {payment_id, amount_cents >= 1, reason, card_token? (secret)}.
// Retries only rate_limited (HTTP 429) and provider_unavailable_before_commit (503); any other
// lost or failed attempt is reconciled by looking the refund up by its idempotency key.
// Refunds above 100.00 (10000 cents) need a person's approval.
ToolContract SendRefundContract();

// read_only. Input {payment_id}.
ToolContract LookupPaymentContract();

// Registers both contracts.
Result<void> RegisterRefundContracts(ContractRegistry& registry);

// The contracts as published for tools that check plans without the sample's code
// (`reckon plan validate --contracts samples/refund/refund_contracts.json`): a JSON array in
// name order, one contract per line. `refund-contract-demo --json` prints it; a test keeps the
// checked-in file equal to it.
std::string RefundContractsJson();

}  // namespace reckon::refund
