// Router: the provider's HTTP API on top of RefundService. Routes, methods, headers and
// query strings are checked here; what a request means is the service's business.
//
//   GET  /payments/{payment_id}          200 payment | 404 payment_not_found
//   POST /refunds                        see RefundService::CreateRefund
//   GET  /refunds?idempotency_key=K      200 refund | 404 not_found
//   GET  /refunds                        200 [refund, ...]
//   anything else                        404 not_found; a known path with another method:
//                                        405 method_not_allowed (with an Allow header)
//
// Every body, errors included, is JSON: {"error": code, "message": ..., "field"?: ...}.
// The Idempotency-Key header, when present, must be 1..255 characters (else 400). Bodies over
// kMaxBodyBytes are refused with 413 by the server before they reach the router.
//
// Not thread-safe: runs on the provider's one io_context thread, like the service.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <optional>
#include <string>

#include "samples/payments_provider/refund_service.h"

namespace reckon::samples::provider {

inline constexpr std::size_t kMaxBodyBytes = 64 * 1024;

using HttpRequestMessage = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponseMessage = boost::beast::http::response<boost::beast::http::string_body>;

struct RoutedReply {
  HttpResponseMessage response;
  bool drop_connection = false;  // close the connection without sending `response`
};

// A JSON response with this status and body (Content-Type and Content-Length set).
HttpResponseMessage JsonResponse(int status, const boost::json::value& body, unsigned version);

class Router {
 public:
  explicit Router(RefundService& service) : service_(service) {}  // service outlives router

  boost::asio::awaitable<RoutedReply> Handle(HttpRequestMessage request);

 private:
  RefundService& service_;
};

}  // namespace reckon::samples::provider
