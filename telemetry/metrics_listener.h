// MetricsListener: a tiny HTTP/1.1 listener that serves one thing, GET /metrics (the
// registry's text), for embedded hosts, which have no HTTP port of their own
// (EmbeddedHostOptions::metrics_listen). The server serves /metrics on its --http port instead
// (api/server/http), behind a token.
//
// It has no authentication: whoever reaches the port reads the metrics (no payloads, but tool
// names, workflow types and counts; docs/SECURITY.md, "Metrics"). Bind it to loopback unless
// the network in front of it decides who may scrape.
//
// One request per connection (the reply closes it), requests over 8 KiB or slower than 10 s
// are dropped, at most 16 connections at once; anything but GET /metrics gets 404. Accepts
// back off while they fail for lack of descriptors (base/accept_loop.h).
//
// Threads: runs on the executor given (the embedded host's io_context, whose thread also runs
// the engine, as the registry's callbacks require). The registry must outlive it. Stop(), or
// destroying it, closes the acceptor and every connection.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "reckon/base/accept_loop.h"
#include "reckon/base/error.h"
#include "reckon/telemetry/metrics.h"

namespace reckon {

class MetricsListener {
 public:
  MetricsListener(boost::asio::any_io_executor executor, const MetricsRegistry& registry);
  ~MetricsListener();
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  // Binds "HOST:PORT" (port 0: any free) and starts accepting on the executor.
  // Errc::kInvalidArgument for a malformed address, Errc::kUnavailable if it cannot bind.
  Result<void> Listen(const std::string& address);
  std::uint16_t port() const { return port_; }
  void Stop();
  // What the accept loop has done so far (thread-safe).
  AcceptCounts accept_counts() const;

 private:
  struct Shared;  // what the accept loop and connections share; outlives them
  static boost::asio::awaitable<void> Accept(std::shared_ptr<Shared> shared);
  static boost::asio::awaitable<void> Serve(std::shared_ptr<Shared> shared,
                                            boost::asio::ip::tcp::socket socket);

  boost::asio::any_io_executor executor_;
  std::shared_ptr<Shared> shared_;
  std::uint16_t port_ = 0;
};

}  // namespace reckon
