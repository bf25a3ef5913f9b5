// Fuzz target: an HTTP request to `reckon server --http` (api/server/http/http_parse.h). The
// bytes go through Beast's request parser with the server's default header and body limits,
// as HttpServer reads a connection; a parsed request becomes the HttpRequest HttpApi gets and is
// taken apart as HttpApi does: target split, path segments, query parameters (the paging
// numbers), the session cookie and the JSON body. Nothing may crash or throw.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include <cstddef>
#include <cstdint>

#include "reckon/api/server/http/http_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace reckon::api;
  HttpRequestParser parser;
  LimitRequestParser(parser, kDefaultMaxHeaderBytes, kDefaultMaxBodyBytes);
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t used = 0;
  while (!parser.is_done() && used < size) {
    const std::size_t n = parser.put(boost::asio::buffer(data + used, size - used), ec);
    used += n;
    if (ec == boost::beast::http::error::need_more) {
      ec = {};
      if (n == 0) break;
      continue;
    }
    if (ec) return 0;
  }
  if (!parser.is_done()) {
    parser.put_eof(ec);
    if (ec || !parser.is_done()) return 0;
  }
  auto message = parser.release();
  const HttpRequest request = ToHttpRequest(message, "127.0.0.1:1");
  const HttpTarget target = SplitTarget(request.target);
  (void)PathSegments(target.path);
  const auto query = ParseQuery(target.query);
  reckon::Result<void> status = reckon::Ok();
  (void)NumberParam(query, "limit", 50, 1000, status);
  (void)CookieValue(request.cookie, "reckon_session");
  (void)BodyObject(request.body);
  return 0;
}
