// The provider's HTTP/1.1 server: an accept loop and one coroutine per connection (Beast,
// Asio C++20 coroutines), all on one io_context thread.
//
// Per connection: requests are read one at a time (keep-alive honoured; idle connections
// close after 30 s). Bodies over kMaxBodyBytes get 413 and the connection is closed after the
// rest of the upload is drained (so the client reads the 413 instead of a reset); malformed
// HTTP gets 400 and a close. A reply the router marked drop_connection is not sent: the
// connection is closed, exactly as if the network had lost the reply.
//
// One log line per request on `log`: method, target, status (or "dropped"), Idempotency-Key.
// Bodies are never logged (they may carry card_token).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <spdlog/logger.h>

#include "samples/payments_provider/router.h"

namespace reckon::samples::provider {

// Accepts on `acceptor` until it is closed, spawning a connection coroutine for each socket
// on the acceptor's executor. `router` and `log` must outlive every connection, that is,
// the io_context (connections still open at shutdown are destroyed with it).
boost::asio::awaitable<void> Serve(boost::asio::ip::tcp::acceptor& acceptor, Router& router,
                                   spdlog::logger& log);

// Spawns Serve on `io` (the acceptor's context). Should it fail with an exception (a bug), the
// error is logged and `io` is stopped.
void StartServing(boost::asio::io_context& io, boost::asio::ip::tcp::acceptor& acceptor,
                  Router& router, spdlog::logger& log);

}  // namespace reckon::samples::provider
