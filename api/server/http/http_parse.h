// Reading what an HTTP request carries, before any handler runs: the request as the server
// hands it to HttpApi (HttpRequest, cut from Beast's parsed message by ToHttpRequest, with the
// limits of LimitRequestParser), and the pieces HttpApi takes apart (path segments, query
// parameters, the session cookie, a JSON body). HttpServer (http_server.h) and HttpApi
// (http_api.h) use these; tests/fuzz/fuzz_http_request.cc feeds them arbitrary bytes.
//
// Pure functions over their arguments; thread-safe. None throws on any input: malformed
// escapes are kept as they are, and a body that is not a JSON object is an
// Errc::kInvalidArgument that says so.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/api/server/http/http_server_options.h"  // kDefaultMaxHeaderBytes, ...
#include "reckon/base/error.h"

namespace reckon::api {

// One request as HttpApi sees it.
struct HttpRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string target;         // path and query, as sent
  std::string authorization;  // the Authorization header
  std::string cookie;         // the Cookie header
  std::string csrf;           // the X-CSRF-Token header
  std::string content_type;   // the Content-Type header
  std::string body;
  std::string peer;           // "IP:PORT", for audit lines
  // The subject of the client certificate the peer presented and the server verified (HTTPS
  // with --client-ca); "" when none.
  std::string client_certificate;
};

using HttpRequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// The server's limits on one request, applied before the body is read: headers over
// `max_header_bytes` fail the parse with http::error::header_limit (431), a body over
// `max_body_bytes` with http::error::body_limit (413).
void LimitRequestParser(HttpRequestParser& parser, std::size_t max_header_bytes,
                        std::size_t max_body_bytes);

// The fields HttpApi reads, from a parsed message. The body is moved out of `message`; its head
// stays (for the server's log line and reply).
HttpRequest ToHttpRequest(boost::beast::http::request<boost::beast::http::string_body>& message,
                          std::string peer);

// "path?query" cut at the first '?' (no '?': the query is empty).
struct HttpTarget {
  std::string path;
  std::string query;
};
HttpTarget SplitTarget(std::string_view target);

// Percent-decoding; with `query`, '+' is a space. A malformed escape is kept as it is.
std::string PercentDecode(std::string_view text, bool query);

// "a=1&b=x%20y&c" -> {a: "1", b: "x y", c: ""}; a repeated name keeps its last value.
std::map<std::string, std::string> ParseQuery(std::string_view query);

// "/api//v1/runs%2Fx" -> {"api", "v1", "runs/x"}: empty segments dropped, each decoded.
std::vector<std::string> PathSegments(std::string_view path);

// The value of cookie `name` in a Cookie header; "" when absent.
std::string CookieValue(std::string_view header, std::string_view name);

// The request body as a JSON object; an empty body is an empty object.
Result<boost::json::object> BodyObject(const std::string& body);

// Query parameter `name` as a number in [0, max]; `fallback` when absent or empty. Otherwise
// `status` becomes an Errc::kInvalidArgument naming the parameter (and the parsed prefix is
// returned, to be ignored).
std::uint32_t NumberParam(const std::map<std::string, std::string>& query, const std::string& name,
                          std::uint32_t fallback, std::uint32_t max, Result<void>& status);

}  // namespace reckon::api
