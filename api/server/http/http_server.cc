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

#include <openssl/ssl.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "reckon/protocol/byte_stream.h"
#include "reckon/protocol/client.h"
#include "reckon/protocol/tls.h"
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

// After a failed read: a request the server refuses (too large, not HTTP/1.1) gets its reply,
// and what the peer still sends is read and dropped for a moment before the connection closes.
// Anything else (the peer left, a deadline, a close) ends the connection without a reply.
template <class Stream>
asio::awaitable<void> RefuseMalformed(Stream& stream, const beast::error_code& ec,
                                      const HttpServerOptions& options) {
  std::optional<HttpReply> refusal;
  if (ec == http::error::body_limit) {
    refusal = ErrorReply("payload_too_large", "the request body is over " +
                                                  std::to_string(options.max_body_bytes) +
                                                  " bytes, the limit");
  } else if (ec == http::error::header_limit) {
    refusal = ErrorReply("invalid_argument", "the request headers are over " +
                                                 std::to_string(options.max_header_bytes) +
                                                 " bytes, the limit");
    refusal->status = 431;
  } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
             ec != http::error::end_of_stream && ec != http::error::partial_message) {
    refusal = ErrorReply("invalid_argument", "not an HTTP/1.1 request: " + ec.message());
  }
  if (!refusal) co_return;
  auto response = ToResponse(*refusal, 11, false);
  auto& lowest = beast::get_lowest_layer(stream);
  lowest.expires_after(std::chrono::seconds(5));
  (void)co_await http::async_write(stream, response, kNoThrow);
  // The peer may still be sending the body we refused: read and discard it for a moment (at
  // most 4 MiB, 1 s) before closing, or the kernel answers its bytes with a reset that can
  // destroy the refusal before the peer reads it.
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

}  // namespace

struct HttpServer::Shared {
  explicit Shared(const HttpServerOptions& options)
      : slots({options.max_connections, options.max_connections_per_peer}) {}
  struct Live {
    std::string peer;
    std::function<void()> close;  // closes the connection's socket
  };
  ConnectionSlots slots;
  std::map<std::uint64_t, Live> live;  // by connection id
};

HttpServer::HttpServer(asio::any_io_executor executor, HttpApi& api, HttpServerOptions options)
    : executor_(executor),
      api_(api),
      options_(std::move(options)),
      accept_(std::make_shared<AcceptLoop>(executor, "http")),
      shared_(std::make_shared<Shared>(options_)) {}

HttpServer::~HttpServer() { Stop(); }

Result<void> HttpServer::Listen(const std::string& address) {
  const ListenerSecurity security{options_.tls != nullptr, options_.insecure_dev};
  RECKON_TRY(ListenerPermit permit,
             ListenOn(accept_->acceptor(), address, Listener::kHttp, security));
  (void)permit;
  port_ = accept_->acceptor().local_endpoint().port();
  return Ok();
}

asio::awaitable<void> HttpServer::Serve() {
  auto open = [this](asio::ip::tcp::socket socket) {
    asio::co_spawn(executor_, Open(std::move(socket), next_id_++), asio::detached);
  };
  co_await AcceptLoop::Run(accept_, std::move(open));
}

void HttpServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  accept_->Stop();
  auto live = std::move(shared_->live);
  for (auto& [id, connection] : live) connection.close();
}

asio::awaitable<void> HttpServer::Refuse(asio::ip::tcp::socket socket, const std::string& peer,
                                         ConnectionSlots::Limit limit) {
  const bool per_peer = limit == ConnectionSlots::Limit::kPerPeer;
  const std::string message =
      per_peer ? "this address already has " + std::to_string(options_.max_connections_per_peer) +
                     " connections with requests in progress, the most one address may hold "
                     "(--http-max-connections-per-peer); retry when one has finished"
               : "the console server has " + std::to_string(options_.max_connections) +
                     " connections with requests in progress, its maximum "
                     "(--http-max-connections); retry in a moment";
  spdlog::warn("http: refusing a connection from {} ({}): {}", peer,
               per_peer ? "http-max-connections-per-peer" : "http-max-connections", message);
  if (options_.tls) co_return;  // it could not read a plaintext reply: closed
  beast::tcp_stream tcp(std::move(socket));
  auto busy = ToResponse(ErrorReply("unavailable", message), 11, false);
  busy.result(http::status::service_unavailable);
  busy.set(http::field::retry_after, "1");
  tcp.expires_after(std::chrono::seconds(5));
  (void)co_await http::async_write(tcp, busy, kNoThrow);
}

asio::awaitable<void> HttpServer::Open(asio::ip::tcp::socket socket, std::uint64_t id) {
  const Clock::time_point accepted = Clock::now();
  const std::string peer = PeerOf(socket);
  boost::system::error_code gone;
  const asio::ip::tcp::endpoint from = socket.remote_endpoint(gone);
  if (gone) co_return;  // it left before it was served
  const std::shared_ptr<Shared> shared = shared_;
  ConnectionSlots::Admission admission = shared->slots.Admit(id, from.address(), accepted);
  for (const ConnectionSlots::Evicted& evicted : admission.evicted) {
    auto it = shared->live.find(evicted.id);
    if (it == shared->live.end()) continue;
    const bool per_peer = evicted.limit == ConnectionSlots::Limit::kPerPeer;
    const bool opening = evicted.phase == ConnectionSlots::Phase::kOpening;
    spdlog::warn("http: closing connection {} from {} ({}) for a newcomer from {}: it {}",
                 evicted.id, it->second.peer,
                 per_peer ? "http-max-connections-per-peer" : "http-max-connections", peer,
                 opening ? "had not sent a whole request yet" : "was idle between requests");
    auto close = std::move(it->second.close);
    shared->live.erase(it);
    close();
  }
  if (!admission.admitted) {
    co_await Refuse(std::move(socket), peer, *admission.refused_by);
    co_return;
  }
  // Erased on every way out, so Stop() never reaches a stream that is gone; holds only what it
  // shares with the server, which may be destroyed first at shutdown.
  struct Forget {
    std::shared_ptr<Shared> shared;
    std::uint64_t id;
    ~Forget() {
      shared->live.erase(id);
      shared->slots.Release(id);
    }
  } forget{shared, id};
  beast::tcp_stream tcp(std::move(socket));
  shared->live[id] = {peer, [&tcp] { tcp.socket().close(); }};
  if (!options_.tls) {
    co_await Converse(tcp, peer, id, accepted, "");
    co_return;
  }
  beast::ssl_stream<beast::tcp_stream> tls(std::move(tcp), *options_.tls);
  shared->live[id].close = [&tls] { beast::get_lowest_layer(tls).socket().close(); };
  beast::get_lowest_layer(tls).expires_at(accepted + options_.handshake_timeout);
  auto [ec] = co_await tls.async_handshake(asio::ssl::stream_base::server, kNoThrow);
  if (!ec) {
    const std::string certificate = VerifiedPeerCertificate(tls.native_handle());
    co_await Converse(tls, peer, id, accepted, certificate);
  } else if (ec == beast::error::timeout) {
    spdlog::warn("http: closing connection {} from {} (http-handshake-timeout-ms): TLS handshake "
                 "not done in {} ms", id, peer, options_.handshake_timeout.count());
  } else if (shared->slots.holds(id)) {  // not closed for a newcomer, nor by Stop()
    spdlog::warn("audit: refused an HTTPS connection from {}: TLS handshake failed: {}", peer,
                 DescribeTlsError(ec, SSL_get_verify_result(tls.native_handle())));
  }
  if (auto it = shared->live.find(id); it != shared->live.end()) {
    it->second.close = [] {};  // `tls` goes first; the guard then erases the entry
  }
}

template <class Stream>
asio::awaitable<void> HttpServer::Converse(Stream& stream, const std::string& peer,
                                           std::uint64_t id, Clock::time_point accepted,
                                           const std::string& client_certificate) {
  beast::flat_buffer buffer;
  auto& lowest = beast::get_lowest_layer(stream);
  for (bool first = true;; first = false) {
    HttpRequestParser parser;
    LimitRequestParser(parser, options_.max_header_bytes, options_.max_body_bytes);
    // The first request within the handshake timeout of the accept; the next within the idle
    // timeout of the last reply. Until a request is whole the connection is not busy, and a
    // newcomer may take its slot.
    if (first) {
      lowest.expires_at(accepted + options_.handshake_timeout);
    } else {
      lowest.expires_after(options_.idle_timeout);
    }
    auto [ec, read] = co_await http::async_read(stream, buffer, parser, kNoThrow);
    if (ec) {
      if (first && ec == beast::error::timeout) {
        spdlog::warn("http: closing connection {} from {} (http-handshake-timeout-ms): no whole "
                     "request within {} ms of connecting", id, peer,
                     options_.handshake_timeout.count());
      }
      co_await RefuseMalformed(stream, ec, options_);
      break;
    }
    shared_->slots.Enter(id, ConnectionSlots::Phase::kBusy, Clock::now());
    http::request<http::string_body> request = parser.release();
    HttpRequest call = ToHttpRequest(request, peer);
    call.client_certificate = client_certificate;
    // A long poll (watch) may take a minute: no deadline while the API works.
    lowest.expires_never();
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
    lowest.expires_after(options_.idle_timeout);
    auto [wec, written] = co_await http::async_write(stream, response, kNoThrow);
    if (wec || !keep_alive) break;
    shared_->slots.Enter(id, ConnectionSlots::Phase::kIdle, Clock::now());
  }
  boost::system::error_code ignored;
  lowest.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace reckon::api
