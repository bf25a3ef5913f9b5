// HttpServer: the HTTP listener of `reckon server --http` (docs/HTTP_API.md). Accepts
// connections (HTTPS with the server's TLS context when it has one), reads HTTP/1.1 requests
// one at a time per connection (keep-alive), hands each to HttpApi and writes its reply with
// the console's security headers.
//
// Limits (HttpServerOptions, http_server_options.h): request headers over max_header_bytes get
// 431 and bodies over max_body_bytes 413, before the body is read. The first whole request must
// arrive within handshake_timeout of the accept (the TLS handshake included); later ones, and
// each reply's writing, within idle_timeout. The connection slots are shared by
// ConnectionSlots (api/server/connection_slots.h): a newcomer over max_connections or
// max_connections_per_peer takes the slot of a connection still opening, else of an idle one,
// and is refused (503, or closed on HTTPS) only when every slot in its scope is busy.
//
// Client certificates: with a TLS context that verifies peers (--client-ca), the subject of a
// certificate the client presented and the context verified goes with each of its requests
// (HttpRequest::client_certificate) to the Service, which requires one of a worker principal.
//
// Threads: runs on the server's event loop (single-threaded executor). Connections still being
// unwound when the server is destroyed (at shutdown) touch only state they share with it.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "reckon/base/accept_loop.h"
#include "reckon/api/server/connection_slots.h"
#include "reckon/api/server/http/http_api.h"
#include "reckon/api/server/http/http_server_options.h"
#include "reckon/base/error.h"

namespace reckon::api {

class HttpServer {
 public:
  HttpServer(boost::asio::any_io_executor executor, HttpApi& api, HttpServerOptions options);
  ~HttpServer();

  // Binds "HOST:PORT" (port 0: any free) if the listener rule allows it (api/server/listen.h):
  // Errc::kInvalidArgument for an address it refuses or a HOST that is not an IP address;
  // Errc::kUnavailable naming the address if it cannot bind.
  Result<void> Listen(const std::string& address);
  std::uint16_t port() const { return port_; }

  // Accepts until Stop(), backing off while accepts fail for lack of descriptors
  // (base/accept_loop.h). Spawn it on the executor.
  boost::asio::awaitable<void> Serve();
  void Stop();

 private:
  struct Shared;  // the slots and live connections; shared with the connections' coroutines
  using Clock = ConnectionSlots::Clock;

  boost::asio::awaitable<void> Open(boost::asio::ip::tcp::socket socket, std::uint64_t id);
  // A newcomer refused because every slot in its scope is busy: 503 over plain HTTP, closed
  // over HTTPS; logged.
  boost::asio::awaitable<void> Refuse(boost::asio::ip::tcp::socket socket,
                                      const std::string& peer, ConnectionSlots::Limit limit);
  template <class Stream>
  boost::asio::awaitable<void> Converse(Stream& stream, const std::string& peer, std::uint64_t id,
                                        Clock::time_point accepted,
                                        const std::string& client_certificate);

  boost::asio::any_io_executor executor_;
  HttpApi& api_;
  HttpServerOptions options_;
  std::shared_ptr<AcceptLoop> accept_;  // owns the acceptor; shared with Serve's coroutine
  std::uint16_t port_ = 0;
  std::uint64_t next_id_ = 1;
  std::shared_ptr<Shared> shared_;
  bool stopped_ = false;
};

}  // namespace reckon::api
