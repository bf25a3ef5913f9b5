// HttpRequest: one HTTP/1.1 request over a fresh TCP connection, as an Asio C++20 coroutine,
// for tools declared in a tools file (tools/http/http_tool.h), the samples' tool
// implementations and tests. The host is an IP address or a name, resolved on every call
// (a resolver failure is "not sent": nothing reached any server). Plain HTTP only: https is
// refused as an invalid call by the URL parser (tools/http/http_url.h).
//
// The point of this client is its failure classification. A tool that gets no response must
// know what it may conclude, so every failure belongs to exactly one HttpFailure kind. The
// Error message is machine-readable at its start,
//     "<tag> <reason>: <METHOD> http://<host>:<port><target>: <detail>"
// with tag http_invalid_call, http_not_sent or http_outcome_unknown, e.g.
//     "http_not_sent connection_refused: POST http://127.0.0.1:8080/refunds: Connection refused"
// HttpFailureOf() reads the kind back (it still finds the tag after Error::WithContext):
//
//   kind               reason token         Errc                 what the tool may conclude
//   kInvalidCall       invalid_call         kInvalidArgument     the call itself is wrong
//                                                                (method, host, port); nothing
//                                                                was attempted
//   kNotSent           resolve_failed       kUnavailable         the complete request never
//                      connection_refused   kUnavailable
//                      connect_failed       kUnavailable         reached the server, so it
//                      send_failed          kUnavailable         cannot have had an effect:
//                      cancelled            kUnavailable         safe to retry
//                      deadline             kDeadlineExceeded
//   kOutcomeUnknown    connection_lost      kFailedPrecondition  the whole request was handed
//                      deadline             kFailedPrecondition  to the network and no complete
//                      cancelled            kFailedPrecondition  response came back: the server
//                      bad_response         kFailedPrecondition  may or may not have acted.
//                                                                Never retry blindly; reconcile
//
// "Sent" means the last byte of the request was written to the socket. A write that fails
// part-way is kNotSent: HTTP framing (Content-Length) means the server never saw a complete
// request. Outcome-unknown failures use Errc::kFailedPrecondition because its action,
// kFixStateFirst, is the right one ("find out what happened, then decide"); kUnavailable and
// kDeadlineExceeded would wrongly promise that nothing changed.
//
// A response with any status (4xx and 5xx included) is a success of HttpRequest: the server
// answered, and what the status means is the tool's business.
//
// Deadline and cancellation: the whole exchange (connect, write, read) must finish by
// HttpCall::deadline (beast::tcp_stream::expires_at); time_point::max() means no deadline.
// Terminal cancellation of the awaiting coroutine (e.g. a cancellation slot bound through
// co_spawn, or an awaitable_operators race) aborts the current step and reports "cancelled"
// with the kind that matches how far the request had got.
//
// Thread-safety: each call owns its connection; concurrent calls are independent. The
// coroutine takes its HttpCall by value, so nothing the caller owns must outlive the call.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::tools {

struct HttpHeader {
  std::string name;
  std::string value;

  friend bool operator==(const HttpHeader&, const HttpHeader&) = default;
};

struct HttpCall {
  std::string method = "GET";  // any standard HTTP method name, upper case
  // An IPv4 or IPv6 address (without brackets) or a host name, resolved on every call.
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;          // 1..65535
  std::string target = "/";        // origin-form: path and query, starting with '/'
  // Sent as given, after Host and before Content-Length (which the client sets from `body`,
  // so do not add one). "Connection: close" is always sent.
  std::vector<HttpHeader> headers;
  std::string body;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct HttpResponse {
  int status = 0;
  std::vector<HttpHeader> headers;  // in arrival order, names as the server spelled them
  std::string body;

  // The first header with this name (compared case-insensitively), or nullopt. The view
  // points into `headers` and is valid while this response is alive and unmodified.
  std::optional<std::string_view> Header(std::string_view name) const;
};

enum class HttpFailure { kInvalidCall, kNotSent, kOutcomeUnknown };

// "invalid_call", "not_sent", "outcome_unknown".
std::string_view HttpFailureName(HttpFailure failure);

// The kind of a failure returned by HttpRequest, or nullopt for an Error that did not come
// from it.
std::optional<HttpFailure> HttpFailureOf(const Error& error);

// Sends `call` and reads the whole response (bodies up to 16 MiB). Errors: see above.
boost::asio::awaitable<Result<HttpResponse>> HttpRequest(HttpCall call);

// Parses a response body as JSON; Errc::kInvalidArgument with the parser's message if it is
// not JSON. (The status still tells what the server did; only the body is unreadable.)
Result<boost::json::value> ParseJsonBody(const HttpResponse& response);

}  // namespace reckon::tools
