#include "reckon/tools/http/http_client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <cctype>

namespace reckon::tools {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::string_view kInvalidCallTag = "http_invalid_call";
constexpr std::string_view kNotSentTag = "http_not_sent";
constexpr std::string_view kOutcomeUnknownTag = "http_outcome_unknown";
constexpr std::size_t kMaxResponseBody = 16 * 1024 * 1024;

// "host:port", with an IPv6 address in brackets (as in a URL and the Host header).
std::string Authority(const HttpCall& call) {
  const bool v6 = call.host.find(':') != std::string::npos;
  return (v6 ? "[" + call.host + "]" : call.host) + ":" + std::to_string(call.port);
}

std::string Describe(const HttpCall& call) {
  return call.method + " http://" + Authority(call) + call.target;
}

Error Failure(Errc code, std::string_view tag, std::string_view reason, const HttpCall& call,
              std::string_view detail) {
  std::string message(tag);
  message += ' ';
  message += reason;
  message += ": ";
  message += Describe(call);
  message += ": ";
  message += detail;
  return Err(code, std::move(message));
}

Error InvalidCall(const HttpCall& call, std::string_view detail) {
  return Failure(Errc::kInvalidArgument, kInvalidCallTag, "invalid_call", call, detail);
}

// A failure before the last byte of the request was written.
Error NotSent(const HttpCall& call, bool sending, const beast::error_code& ec) {
  std::string detail = std::string(sending ? "sending the request" : "connecting") + ": " +
                       ec.message();
  if (ec == beast::error::timeout) {
    return Failure(Errc::kDeadlineExceeded, kNotSentTag, "deadline", call, detail);
  }
  if (ec == asio::error::operation_aborted) {
    return Failure(Errc::kUnavailable, kNotSentTag, "cancelled", call, detail);
  }
  if (ec == asio::error::connection_refused) {
    return Failure(Errc::kUnavailable, kNotSentTag, "connection_refused", call, detail);
  }
  return Failure(Errc::kUnavailable, kNotSentTag, sending ? "send_failed" : "connect_failed",
                 call, detail);
}

// A failure after the whole request was written.
Error OutcomeUnknown(const HttpCall& call, const beast::error_code& ec) {
  std::string detail = "reading the response: " + ec.message();
  std::string_view reason = "bad_response";
  if (ec == beast::error::timeout) {
    reason = "deadline";
  } else if (ec == asio::error::operation_aborted) {
    reason = "cancelled";
  } else if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
             ec == asio::error::eof || ec == asio::error::connection_reset ||
             ec == asio::error::connection_aborted || ec == asio::error::broken_pipe) {
    reason = "connection_lost";
  }
  return Failure(Errc::kFailedPrecondition, kOutcomeUnknownTag, reason, call, detail);
}

Result<http::request<http::string_body>> BuildRequest(const HttpCall& call) {
  http::verb verb = http::string_to_verb(call.method);
  if (verb == http::verb::unknown) {
    return InvalidCall(call, "unknown HTTP method '" + call.method + "'");
  }
  if (call.target.empty() || call.target.front() != '/') {
    return InvalidCall(call, "the target must start with '/'");
  }
  http::request<http::string_body> request(verb, call.target, 11);
  request.set(http::field::host, Authority(call));
  for (const HttpHeader& header : call.headers) {
    if (beast::iequals(header.name, "content-length") ||
        beast::iequals(header.name, "transfer-encoding")) {
      return InvalidCall(call, "header '" + header.name + "' is set by the client");
    }
    request.insert(header.name, header.value);
  }
  request.keep_alive(false);
  request.body() = call.body;
  request.prepare_payload();
  return request;
}

}  // namespace

std::string_view HttpFailureName(HttpFailure failure) {
  switch (failure) {
    case HttpFailure::kInvalidCall: return "invalid_call";
    case HttpFailure::kNotSent: return "not_sent";
    case HttpFailure::kOutcomeUnknown: return "outcome_unknown";
  }
  return "unknown_http_failure";
}

std::optional<HttpFailure> HttpFailureOf(const Error& error) {
  const std::string& message = error.message();
  if (message.find(kOutcomeUnknownTag) != std::string::npos) return HttpFailure::kOutcomeUnknown;
  if (message.find(kNotSentTag) != std::string::npos) return HttpFailure::kNotSent;
  if (message.find(kInvalidCallTag) != std::string::npos) return HttpFailure::kInvalidCall;
  return std::nullopt;
}

std::optional<std::string_view> HttpResponse::Header(std::string_view name) const {
  for (const HttpHeader& header : headers) {
    if (beast::iequals(header.name, name)) return std::string_view(header.value);
  }
  return std::nullopt;
}

asio::awaitable<Result<HttpResponse>> HttpRequest(HttpCall call) {
  if (call.host.empty()) co_return InvalidCall(call, "the host is empty");
  if (call.port == 0) co_return InvalidCall(call, "the port must be 1..65535");
  Result<http::request<http::string_body>> built = BuildRequest(call);
  if (!built) co_return built.error();
  http::request<http::string_body>& request = built.value();

  beast::tcp_stream stream(co_await asio::this_coro::executor);
  if (call.deadline == std::chrono::steady_clock::time_point::max()) {
    stream.expires_never();
  } else {
    stream.expires_at(call.deadline);
  }

  // The stream's timer fires asynchronously, so a fast loopback exchange could finish after
  // the deadline; check it explicitly before each step that could still be skipped.
  auto past_deadline = [&call] { return std::chrono::steady_clock::now() >= call.deadline; };
  if (past_deadline()) {
    co_return Failure(Errc::kDeadlineExceeded, kNotSentTag, "deadline", call,
                      "the deadline had passed before connecting");
  }
  // An address needs no lookup; a name is resolved now (numeric_service: the port is a number).
  tcp::resolver resolver(co_await asio::this_coro::executor);
  auto [resolve_ec, endpoints] = co_await resolver.async_resolve(
      call.host, std::to_string(call.port), tcp::resolver::numeric_service,
      asio::as_tuple(asio::use_awaitable));
  if (resolve_ec) {
    co_return Failure(Errc::kUnavailable, kNotSentTag,
                      resolve_ec == asio::error::operation_aborted ? "cancelled" : "resolve_failed",
                      call, "resolving the host: " + resolve_ec.message());
  }
  if (past_deadline()) {
    co_return Failure(Errc::kDeadlineExceeded, kNotSentTag, "deadline", call,
                      "the deadline had passed before connecting");
  }
  auto [connect_ec, connected] =
      co_await stream.async_connect(endpoints, asio::as_tuple(asio::use_awaitable));
  (void)connected;
  if (connect_ec) co_return NotSent(call, /*sending=*/false, connect_ec);
  if (past_deadline()) {
    co_return Failure(Errc::kDeadlineExceeded, kNotSentTag, "deadline", call,
                      "the deadline had passed before sending");
  }

  auto [write_ec, written] =
      co_await http::async_write(stream, request, asio::as_tuple(asio::use_awaitable));
  if (write_ec) co_return NotSent(call, /*sending=*/true, write_ec);
  (void)written;

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBody);
  if (request.method() == http::verb::head) parser.skip(true);
  auto [read_ec, read] =
      co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
  (void)read;
  if (read_ec) co_return OutcomeUnknown(call, read_ec);

  http::response<http::string_body> message = parser.release();
  HttpResponse response;
  response.status = static_cast<int>(message.result_int());
  for (const auto& field : message.base()) {
    response.headers.push_back(
        HttpHeader{std::string(field.name_string()), std::string(field.value())});
  }
  response.body = std::move(message.body());

  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  co_return response;
}

Result<boost::json::value> ParseJsonBody(const HttpResponse& response) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(response.body, ec);
  if (ec) {
    return Err(Errc::kInvalidArgument, "response body (status " +
                                           std::to_string(response.status) +
                                           ") is not JSON: " + ec.message());
  }
  return value;
}

}  // namespace reckon::tools
