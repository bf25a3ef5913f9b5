#include "samples/payments_provider/refund_request.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace reckon::samples::provider {
namespace {

FieldError Missing(std::string_view field) {
  return FieldError{std::string(field), "missing required field '" + std::string(field) + "'"};
}

FieldError WrongType(std::string_view field, std::string_view expected) {
  return FieldError{std::string(field),
                    "field '" + std::string(field) + "' must be " + std::string(expected)};
}

}  // namespace

ParsedRefund ParseRefundRequest(std::string_view body) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(body, ec);
  if (ec) return FieldError{"body", "malformed JSON: " + ec.message()};
  if (!value.is_object()) return FieldError{"body", "the body must be a JSON object"};
  const boost::json::object& object = value.get_object();

  RefundRequest request;
  const boost::json::value* payment_id = object.if_contains("payment_id");
  if (payment_id == nullptr) return Missing("payment_id");
  if (!payment_id->is_string()) return WrongType("payment_id", "a string");
  request.payment_id = std::string(payment_id->get_string());

  const boost::json::value* amount = object.if_contains("amount_cents");
  if (amount == nullptr) return Missing("amount_cents");
  if (amount->is_int64()) {
    request.amount_cents = amount->get_int64();
  } else if (amount->is_uint64()) {
    return FieldError{"amount_cents", "field 'amount_cents' is too large"};
  } else {
    return WrongType("amount_cents", "an integer number of cents");
  }

  const boost::json::value* reason = object.if_contains("reason");
  if (reason == nullptr) return Missing("reason");
  if (!reason->is_string()) return WrongType("reason", "a string");
  request.reason = std::string(reason->get_string());
  return request;
}

std::string CardTokenIn(std::string_view body) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(body, ec);
  const boost::json::object* object = ec ? nullptr : value.if_object();
  const boost::json::value* token = object ? object->if_contains("card_token") : nullptr;
  return token != nullptr && token->is_string() ? std::string(token->get_string()) : "";
}

}  // namespace reckon::samples::provider
