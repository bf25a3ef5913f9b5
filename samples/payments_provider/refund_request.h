// ParseRefundRequest: the body of POST /refunds, checked for shape only (business rules such
// as "no more than the payment's amount" belong to RefundService).
//
//   {"payment_id": string, "amount_cents": integer, "reason": string, "card_token": any}
//
// card_token (the secret a real client would send) and any other extra field are accepted and
// dropped here, so they never reach a log and play no part in deciding whether two requests
// with the same Idempotency-Key are the same (CardTokenIn reads the token, for a provider that
// echoes it in its refund ids). Pure functions; thread-safe.
#pragma once

#include <boost/outcome/basic_result.hpp>  // not result.hpp (decision 55)
#include <boost/outcome/policy/terminate.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace reckon::samples::provider {

struct RefundRequest {
  std::string payment_id;
  std::int64_t amount_cents = 0;
  std::string reason;

  // Two requests with the same key are "the same request" when these fields are equal.
  friend bool operator==(const RefundRequest&, const RefundRequest&) = default;
};

// What is wrong with a body: the HTTP layer turns it into
// 400 {"error":"invalid_request","field":field,"message":message}.
struct FieldError {
  std::string field;  // "payment_id", ...; "body" when the body is not a JSON object at all
  std::string message;
};

using ParsedRefund = boost::outcome_v2::basic_result<RefundRequest, FieldError,
                                                    boost::outcome_v2::policy::terminate>;

ParsedRefund ParseRefundRequest(std::string_view body);

// The body's card_token when it is a string; else empty.
std::string CardTokenIn(std::string_view body);

}  // namespace reckon::samples::provider
