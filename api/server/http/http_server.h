// HttpServer: the HTTP listener of `reckon server --http` (docs/HTTP_API.md). Accepts
// connections (HTTPS with the server's TLS context when it has one), reads HTTP/1.1 requests
// one at a time per connection (keep-alive), hands each to HttpApi and writes its reply with
// the console's security headers.
//
// Limits: request headers over max_header_bytes get 431 and bodies over max_body_bytes 413,
// before the body is read; a connection idle for idle_timeout between requests, or slower than
// it to send one, is closed; over max_connections a new connection gets 503 and is closed.
//
// Threads: runs on the server's event loop (single-threaded executor).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "reckon/api/server/http/http_api.h"
#include "reckon/api/server/http/http_parse.h"
#include "reckon/base/error.h"

namespace reckon::api {

struct HttpServerOptions {
  std::size_t max_header_bytes = kDefaultMaxHeaderBytes;
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  std::chrono::milliseconds idle_timeout{60000};
  std::size_t max_connections = 256;
  std::shared_ptr<boost::asio::ssl::context> tls;  // nullptr: plain HTTP
};

class HttpServer {
 public:
  HttpServer(boost::asio::any_io_executor executor, HttpApi& api, HttpServerOptions options);
  ~HttpServer();

  // Binds "HOST:PORT" (port 0: any free). Errc::kUnavailable naming the address if it cannot;
  // Errc::kInvalidArgument for a HOST that is not an IP address.
  Result<void> Listen(const std::string& address);
  std::uint16_t port() const { return port_; }

  // Accepts until Stop(). Spawn it on the executor.
  boost::asio::awaitable<void> Serve();
  void Stop();

 private:
  boost::asio::awaitable<void> Open(boost::asio::ip::tcp::socket socket, std::uint64_t id);
  template <class Stream>
  boost::asio::awaitable<void> Converse(Stream& stream, const std::string& peer);

  boost::asio::any_io_executor executor_;
  HttpApi& api_;
  HttpServerOptions options_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::uint64_t next_id_ = 1;
  // Closes each live connection's socket (for Stop), by connection id.
  std::map<std::uint64_t, std::function<void()>> live_;
  bool stopped_ = false;
};

}  // namespace reckon::api
