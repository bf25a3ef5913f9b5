#include "reckon/api/server/http/http_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <cstdio>

#include "reckon/protocol/byte_stream.h"
#include "reckon/protocol/client.h"
#include "reckon/api/server/listen.h"

namespace reckon::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

// What every reply carries: the console renders user data as text, and these keep a page from
// running anything but its own script or being framed.
void SecurityHeaders(http::response<http::string_body>& response) {
  response.set("Content-Security-Policy",
               "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
  response.set("X-Content-Type-Options", "nosniff");
  response.set("Referrer-Policy", "no-referrer");
  response.set("X-Frame-Options", "DENY");
}

http::response<http::string_body> ToResponse(const HttpReply& reply, unsigned version,
                                             bool keep_alive) {
  http::response<http::string_body> response{static_cast<http::status>(reply.status), version};
  response.set(http::field::server, "reckon");
  response.set(http::field::content_type, reply.content_type);
  if (reply.content_type == "application/json") response.set(http::field::cache_control, "no-store");
  for (const auto& [name, value] : reply.headers) response.set(name, value);
  SecurityHeaders(response);
  response.keep_alive(keep_alive);
  response.body() = reply.body;
  response.prepare_payload();
  return response;
}

}  // namespace

HttpServer::HttpServer(asio::any_io_executor executor, HttpApi& api, HttpServerOptions options)
    : executor_(executor), api_(api), options_(std::move(options)), acceptor_(executor) {}

HttpServer::~HttpServer() { Stop(); }

Result<void> HttpServer::Listen(const std::string& address) {
  auto bound = ListenOn(acceptor_, address, "listen for HTTP");
  if (!bound) return bound.error();
  port_ = acceptor_.local_endpoint().port();
  return Ok();
}

asio::awaitable<void> HttpServer::Serve() {
  while (!stopped_) {
    auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
    if (ec) {
      if (stopped_ || ec == asio::error::operation_aborted) break;
      spdlog::warn("http accept failed: {}", ec.message());
      continue;
    }
    asio::co_spawn(executor_, Open(std::move(socket), next_id_++), asio::detached);
  }
}

void HttpServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  auto live = std::move(live_);
  for (auto& [id, close] : live) close();
}

asio::awaitable<void> HttpServer::Open(asio::ip::tcp::socket socket, std::uint64_t id) {
  const std::string peer = PeerOf(socket);
  beast::tcp_stream tcp(std::move(socket));
  if (live_.size() >= options_.max_connections) {
    spdlog::warn("http: refusing {}: {} connections, the maximum", peer, live_.size());
    auto busy = ToResponse(ErrorReply("unavailable", "the console server is at its connection "
                                                     "limit; retry in a moment"),
                           11, false);
    busy.result(http::status::service_unavailable);
    tcp.expires_after(std::chrono::seconds(5));
    (void)co_await http::async_write(tcp, busy, kNoThrow);
    co_return;
  }
  live_[id] = [&tcp] { tcp.socket().close(); };
  // Erased on every way out, so Stop() never reaches a stream that is gone.
  struct Forget {
    std::map<std::uint64_t, std::function<void()>>& live;
    std::uint64_t id;
    ~Forget() { live.erase(id); }
  } forget{live_, id};
  if (!options_.tls) {
    co_await Converse(tcp, peer);
  } else {
    beast::ssl_stream<beast::tcp_stream> tls(std::move(tcp), *options_.tls);
    live_[id] = [&tls] { beast::get_lowest_layer(tls).socket().close(); };
    beast::get_lowest_layer(tls).expires_after(options_.idle_timeout);
    auto [ec] = co_await tls.async_handshake(asio::ssl::stream_base::server, kNoThrow);
    if (ec) {
      spdlog::warn("audit: refused an HTTPS connection from {}: TLS handshake failed: {}", peer,
                   ec.message());
    } else {
      co_await Converse(tls, peer);
    }
    live_[id] = [] {};  // `tls` goes first; the guard then erases the entry
  }
}

template <class Stream>
asio::awaitable<void> HttpServer::Converse(Stream& stream, const std::string& peer) {
  beast::flat_buffer buffer;
  for (;;) {
    HttpRequestParser parser;
    LimitRequestParser(parser, options_.max_header_bytes, options_.max_body_bytes);
    beast::get_lowest_layer(stream).expires_after(options_.idle_timeout);
    auto [ec, read] = co_await http::async_read(stream, buffer, parser, kNoThrow);
    if (ec) {
      std::optional<HttpReply> refusal;
      if (ec == http::error::body_limit) {
        refusal = ErrorReply("payload_too_large",
                             "the request body is over " + std::to_string(options_.max_body_bytes) +
                                 " bytes, the limit");
      } else if (ec == http::error::header_limit) {
        refusal = ErrorReply("invalid_argument", "the request headers are over " +
                                                     std::to_string(options_.max_header_bytes) +
                                                     " bytes, the limit");
        refusal->status = 431;
      } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
                 ec != http::error::end_of_stream && ec != http::error::partial_message) {
        refusal = ErrorReply("invalid_argument", "not an HTTP/1.1 request: " + ec.message());
      }
      if (refusal) {
        auto response = ToResponse(*refusal, 11, false);
        auto& lowest = beast::get_lowest_layer(stream);
        lowest.expires_after(std::chrono::seconds(5));
        (void)co_await http::async_write(stream, response, kNoThrow);
        // The peer may still be sending the body we refused: read and discard it for a moment
        // (at most 4 MiB, 1 s) before closing, or the kernel answers its bytes with a reset that
        // can destroy the refusal before the peer reads it.
        boost::system::error_code ignored;
        lowest.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
        lowest.expires_after(std::chrono::seconds(1));
        std::array<char, 16 * 1024> discard;
        for (std::size_t drained = 0; drained < (4u << 20);) {
          auto [dec, n] = co_await lowest.async_read_some(asio::buffer(discard), kNoThrow);
          if (dec) break;
          drained += n;
        }
      }
      break;
    }
    http::request<http::string_body> request = parser.release();
    HttpRequest call = ToHttpRequest(request, peer);
    // A long poll (watch) may take a minute: no idle deadline while the API works.
    beast::get_lowest_layer(stream).expires_never();
    const auto started = std::chrono::steady_clock::now();
    HttpReply reply;
    try {
      auto handled = api_.Handle(std::move(call));
      reply = co_await std::move(handled);
    } catch (const std::exception& e) {
      // A bug-class failure (no randomness for a session id, say): this request fails alone.
      spdlog::error("http: {} {} from {} failed: {}", std::string(request.method_string()),
                    std::string(request.target()), peer, e.what());
      reply = ErrorReply("internal", "the server failed on this request; its log says why");
    }
    // The server's own time for the request (bench/console_bench.cc reads it).
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - started).count();
    char timing[48];
    std::snprintf(timing, sizeof timing, "app;dur=%.3f", ms);
    reply.headers.emplace_back("Server-Timing", timing);
    const bool keep_alive = request.keep_alive();
    auto response = ToResponse(reply, request.version(), keep_alive);
    if (request.method() == http::verb::head) response.body().clear();
    beast::get_lowest_layer(stream).expires_after(options_.idle_timeout);
    auto [wec, written] = co_await http::async_write(stream, response, kNoThrow);
    if (wec || !keep_alive) break;
  }
  boost::system::error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace reckon::api
