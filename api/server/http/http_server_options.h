// HttpServerOptions: the limits of the console's port (`reckon server --http`; http_server.h)
// and how it serves. Each limit that has a flag names it; ValidateHttpServerOptions
// (api/server/server_limits.h) gives the ranges.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstddef>
#include <memory>

namespace reckon::api {

// The request limits HttpServerOptions starts with.
inline constexpr std::size_t kDefaultMaxHeaderBytes = 16 * 1024;
inline constexpr std::size_t kDefaultMaxBodyBytes = 1024 * 1024;

struct HttpServerOptions {
  // Per request: headers over this get 431, bodies over the other 413, before the body is read.
  std::size_t max_header_bytes = kDefaultMaxHeaderBytes;
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  // Connections open at once (--http-max-connections), and of them at most
  // max_connections_per_peer from one IP address (--http-max-connections-per-peer). A newcomer
  // over either takes the slot of a connection that has not sent a whole request yet, else of
  // an idle one (api/server/connection_slots.h); only when all are busy does it get 503 (on an
  // HTTPS port it is closed: it could not read a plaintext 503). A browser opens about six
  // connections per page; an office behind one NAT shares one address.
  std::size_t max_connections = 256;
  std::size_t max_connections_per_peer = 64;
  // From the accept to the first whole request, the TLS handshake included
  // (--http-handshake-timeout-ms): a peer that connects and sends nothing, or sends its request
  // a byte at a time, is closed after this.
  std::chrono::milliseconds handshake_timeout{10000};
  // After a reply, how long a keep-alive connection may wait for, and take to send, its next
  // request; also how long writing one reply may take.
  std::chrono::milliseconds idle_timeout{60000};
  // nullptr: plain HTTP. A context that verifies peers (--client-ca) asks each client for a
  // certificate without requiring one; a verified one reaches the Service as the request's
  // client certificate (what a completion by a worker principal needs; docs/SECURITY.md).
  std::shared_ptr<boost::asio::ssl::context> tls;
  // --insecure-dev: requests without a token are served, so Listen() refuses any address but
  // loopback (api/server/listen.h).
  bool insecure_dev = false;
};

}  // namespace reckon::api
