// Server: the network face of `reckon server`. It accepts TCP connections (TLS when
// ServerOptions::tls is set: api/protocol/tls.h; a peer that speaks the other is told so and
// closed, see docs/PROTOCOL.md), reads framed
// Requests (api/protocol/frame_stream.h), hands each to the Service in its own coroutine (many
// in flight per connection) and sends each Response when it is ready.
//
// Limits and failures: a frame that breaks the limits or does not parse closes that connection
// with a logged reason; nothing else is affected. Backpressure: a connection stops being read
// while it has max_in_flight requests unanswered or more than max_queued_reply_bytes of replies
// its peer has not drained.
//
// Threads: runs on the engine's single-threaded executor.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "reckon/api/protocol/frame_stream.h"
#include "reckon/api/server/service.h"

namespace reckon::api {

struct ServerOptions {
  FrameLimits limits;
  std::size_t max_in_flight = 256;                  // per connection
  std::size_t max_queued_reply_bytes = 32u << 20;  // per connection
  std::chrono::milliseconds default_timeout{30000};
  std::chrono::milliseconds max_timeout{120000};
  // TLS: nullptr serves plaintext. With a context that verifies peers (--client-ca), every
  // client must present a certificate it trusts.
  std::shared_ptr<boost::asio::ssl::context> tls;
  // From accept until the peer's first byte and, with TLS, the end of the handshake: a peer
  // that is slower is closed (it holds a socket and, with TLS, handshake state).
  std::chrono::milliseconds handshake_timeout{10000};
};

class Server {
 public:
  Server(boost::asio::any_io_executor executor, Service& service, ServerOptions options);
  ~Server();

  // Binds and listens on "HOST:PORT" (port 0 picks a free one). Errc::kUnavailable naming the
  // address if it cannot bind.
  Result<void> Listen(const std::string& address);
  std::uint16_t port() const { return port_; }

  // Accepts until Stop(). Spawn it on the executor.
  boost::asio::awaitable<void> Serve();
  // Stops accepting and closes every connection.
  void Stop();

 private:
  struct Connection;
  // From an accepted socket to a Connection: the first byte, the TLS handshake, then ReadLoop.
  boost::asio::awaitable<void> Open(boost::asio::ip::tcp::socket socket);
  boost::asio::awaitable<void> ReadLoop(std::shared_ptr<Connection> connection);
  boost::asio::awaitable<void> Answer(std::shared_ptr<Connection> connection, Frame frame);

  boost::asio::any_io_executor executor_;
  Service& service_;
  ServerOptions options_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  SessionId next_session_ = 1;
  std::map<SessionId, std::weak_ptr<Connection>> connections_;
  bool stopped_ = false;
};

}  // namespace reckon::api
