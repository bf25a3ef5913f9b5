// The refund sample's tools as a worker hosts them: the contracts of refund_contracts.h plus
// the code that talks HTTP to the payments provider (samples/payments_provider).
//
//   send_refund     POST /refunds with the operation id as Idempotency-Key; reconciled by
//                   GET /refunds?idempotency_key=<operation id>
//   lookup_payment  GET /payments/<payment_id>
//
// How HTTP outcomes map to failure kinds (what the engine may conclude):
//   2xx -> success; provider_ref = refund_id
//   request never fully sent (refused, reset before the last byte) -> retryable "not_sent"
//   sent, no complete reply (lost, deadline) -> unknown "reply_lost" / "deadline_exceeded"
//   409 same key in progress -> unknown "in_progress"; 429 -> retryable "rate_limited";
//   503 -> retryable "provider_unavailable_before_commit"; other 5xx -> unknown;
//   400/404/422 -> definitive
#pragma once

#include "reckon/base/error.h"
#include "samples/common/http_url.h"
#include "samples/refund/card_vault.h"
#include "reckon/worker/tool.h"

namespace reckon::refund {

// Registers send_refund and lookup_payment, talking to the provider at `provider`. send_refund
// takes the card token from `vault` unless its input carries one, and names it to the worker
// (ToolCallContext::KeepSecret; its lookup too), so a provider that echoes it in a refund id
// does not get it journaled; `vault` must outlive `tools`.
Result<void> RegisterRefundTools(ToolRegistry& tools, samples::HttpEndpoint provider,
                                 const CardVault& vault);

}  // namespace reckon::refund
