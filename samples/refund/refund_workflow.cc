#include "samples/refund/refund_workflow.h"

#include <boost/json/object.hpp>

namespace reckon::refund {

namespace json = boost::json;

Task<WorkflowOutcome> RefundWorkflow(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  // Arguments are built before the co_await: GCC 12 mishandles some temporaries inside one.
  json::object lookup{{"payment_id", in.at("payment_id")}};
  auto lookup_call = ctx.Call("lookup_payment", std::move(lookup));
  CallResult payment = co_await lookup_call;
  if (!payment) co_return payment.error();
  const json::value amount = payment.value().output.as_object().at("amount_cents");

  json::object refund{{"payment_id", in.at("payment_id")},
                      {"amount_cents", amount},
                      {"reason", in.at("reason")}};
  auto refund_call = ctx.Call("send_refund", std::move(refund));
  CallResult refunded = co_await refund_call;
  if (!refunded) co_return refunded.error();

  co_return json::object{{"refund_id", refunded.value().provider_ref},
                         {"payment_id", in.at("payment_id")},
                         {"amount_cents", amount}};
}

}  // namespace reckon::refund
