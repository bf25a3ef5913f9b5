#include "samples/refund/refund_tools.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "reckon/tools/http/http_client.h"
#include "samples/refund/refund_contracts.h"

namespace reckon::refund {

namespace asio = boost::asio;
namespace json = boost::json;
using tools::HttpCall;
using samples::HttpEndpoint;
using tools::HttpFailure;
using tools::HttpRequest;
using tools::HttpResponse;

namespace {

// What a transport failure lets the tool conclude.
AttemptOutcome TransportFailure(const Error& error) {
  auto kind = tools::HttpFailureOf(error);
  if (kind == HttpFailure::kNotSent) {
    return ToolFailed(FailureKind::kRetryable, "not_sent", error.message());
  }
  if (kind == HttpFailure::kInvalidCall) {
    return ToolFailed(FailureKind::kDefinitive, "invalid_call", error.message());
  }
  const bool deadline = error.message().find("deadline") != std::string::npos;
  return ToolFailed(FailureKind::kUnknown, deadline ? "deadline_exceeded" : "reply_lost",
                    error.message());
}

std::string ErrorCodeOf(const HttpResponse& response) {
  auto body = tools::ParseJsonBody(response);
  if (body && body.value().is_object()) {
    if (auto* code = body.value().as_object().if_contains("error"); code && code->is_string()) {
      return std::string(code->as_string());
    }
  }
  return "http_" + std::to_string(response.status);
}

AttemptOutcome FromRefundResponse(const HttpResponse& response) {
  if (response.status == 200 || response.status == 201) {
    auto body = tools::ParseJsonBody(response);
    if (!body || !body.value().is_object() || !body.value().as_object().contains("refund_id")) {
      // The provider acted (2xx) but the reply is unreadable: the outcome is known to exist,
      // its details are not; reconciliation will read them back.
      return ToolFailed(FailureKind::kUnknown, "unreadable_reply", "2xx without a refund id");
    }
    std::string refund_id(body.value().as_object().at("refund_id").as_string());
    return ToolSucceeded(std::move(body).value(), refund_id);
  }
  const std::string code = ErrorCodeOf(response);
  switch (response.status) {
    case 409: return ToolFailed(FailureKind::kUnknown, "in_progress", code);
    case 429: return ToolFailed(FailureKind::kRetryable, "rate_limited", code);
    case 503: return ToolFailed(FailureKind::kRetryable, "provider_unavailable_before_commit", code);
    case 400:
    case 404:
    case 422: return ToolFailed(FailureKind::kDefinitive, code, "provider refused the refund");
    default: return ToolFailed(FailureKind::kUnknown, code, "provider error");
  }
}

asio::awaitable<AttemptOutcome> SendRefund(HttpEndpoint provider, const CardVault* vault,
                                           json::value input, ToolCallContext context) {
  const json::object& in = input.as_object();
  json::object body{{"payment_id", in.at("payment_id")},
                    {"amount_cents", in.at("amount_cents")},
                    {"reason", in.at("reason")}};
  if (const json::value* token = in.if_contains("card_token")) {
    body["card_token"] = *token;
  } else {
    // Fetched here, so the worker cannot know it unless told: a provider that echoes the
    // token (in its refund id) would otherwise get it journaled.
    std::string fetched = vault->TokenFor(in.at("payment_id").as_string());
    context.KeepSecret(fetched);
    body["card_token"] = std::move(fetched);
  }
  HttpCall call;
  call.method = "POST";
  call.port = provider.port;
  call.target = "/refunds";
  call.headers = {{"Idempotency-Key", context.operation_id},
                  {"Content-Type", "application/json"}};
  call.body = json::serialize(body);
  call.deadline = context.deadline;
  auto response = co_await HttpRequest(std::move(call));
  if (!response) co_return TransportFailure(response.error());
  co_return FromRefundResponse(response.value());
}

asio::awaitable<ReconcileOutcome> FindRefund(HttpEndpoint provider, const CardVault* vault,
                                             json::value input, ToolCallContext context) {
  // The refund found may echo the card token the attempt sent: name it to the worker.
  if (const json::object* in = input.if_object()) {
    const json::value* payment = in->if_contains("payment_id");
    if (payment != nullptr && payment->is_string() && !in->contains("card_token")) {
      context.KeepSecret(vault->TokenFor(payment->as_string()));
    }
  }
  HttpCall call;
  call.port = provider.port;
  call.target = "/refunds?idempotency_key=" + context.operation_id;
  call.deadline = context.deadline;
  auto response = co_await HttpRequest(std::move(call));
  ReconcileOutcome outcome;
  if (!response) {
    outcome.message = response.error().message();
    co_return outcome;  // still_unknown: the lookup itself failed
  }
  if (response.value().status == 404) {
    outcome.verdict = ReconcileVerdict::kNotFound;
    co_return outcome;
  }
  auto body = tools::ParseJsonBody(response.value());
  if (response.value().status == 200 && body && body.value().is_object() &&
      body.value().as_object().contains("refund_id")) {
    outcome.verdict = ReconcileVerdict::kCommitted;
    outcome.provider_ref = std::string(body.value().as_object().at("refund_id").as_string());
    outcome.output = std::move(body).value();
    co_return outcome;
  }
  outcome.message = "lookup answered HTTP " + std::to_string(response.value().status);
  co_return outcome;
}

asio::awaitable<AttemptOutcome> LookupPayment(HttpEndpoint provider, json::value input,
                                              ToolCallContext context) {
  HttpCall call;
  call.port = provider.port;
  call.target = "/payments/" + std::string(input.as_object().at("payment_id").as_string());
  call.deadline = context.deadline;
  auto response = co_await HttpRequest(std::move(call));
  if (!response) co_return TransportFailure(response.error());
  if (response.value().status == 200) {
    auto body = tools::ParseJsonBody(response.value());
    if (body) co_return ToolSucceeded(std::move(body).value());
    co_return ToolFailed(FailureKind::kRetryable, "unreadable_reply", body.error().message());
  }
  if (response.value().status == 404) {
    co_return ToolFailed(FailureKind::kDefinitive, "payment_not_found",
                         "the provider has no such payment");
  }
  co_return ToolFailed(FailureKind::kRetryable, ErrorCodeOf(response.value()), "provider error");
}

}  // namespace

Result<void> RegisterRefundTools(ToolRegistry& tools, HttpEndpoint provider,
                                 const CardVault& vault) {
  // The coroutines take everything they need as parameters; the lambdas only forward.
  const CardVault* vault_ptr = &vault;
  Tool send{SendRefundContract(),
            [provider, vault_ptr](json::value input, ToolCallContext context) {
              return SendRefund(provider, vault_ptr, std::move(input), std::move(context));
            },
            [provider, vault_ptr](json::value input, ToolCallContext context) {
              return FindRefund(provider, vault_ptr, std::move(input), std::move(context));
            }};
  RECKON_TRY(tools.Register(std::move(send)));
  Tool lookup{LookupPaymentContract(),
              [provider](json::value input, ToolCallContext context) {
                return LookupPayment(provider, std::move(input), std::move(context));
              },
              {}};
  return tools.Register(std::move(lookup));
}

}  // namespace reckon::refund
