// The refund workflow: look the payment up, then refund it in full.
//
//   input  {"payment_id": "pay-7", "reason": "..."}  (no secrets: the journal records inputs;
//          send_refund takes the card token from the worker's vault, card_vault.h)
//   output {"refund_id", "payment_id", "amount_cents"}
//
// Two steps, lookup_payment#1 then send_refund#2; send_refund's operation id is derived from
// (workflow id, "send_refund#2") and is the Idempotency-Key of every attempt.
#pragma once

#include <boost/json/value.hpp>

#include "reckon/worker/task.h"
#include "reckon/worker/workflow_context.h"

namespace reckon::refund {

inline constexpr const char* kRefundWorkflow = "refund";

Task<WorkflowOutcome> RefundWorkflow(WorkflowContext& ctx, boost::json::value input);

}  // namespace reckon::refund
