// CallOnce: one request to a `reckon server` on a fresh connection, synchronously. What the
// `reckon` CLI sends for each command (api/cli/remote.h adds redirects and failover retries on
// top), and what tests of server mode send when they are not a worker.
//
// Connects with `options` (the token of the role the request needs; TLS if options.tls is on),
// sends `request`, waits up to `timeout` for its reply, closes. The reply's error says whether
// the server was reached: a connection refused or a TLS failure is kUnavailable or
// kUnauthenticated with the address in the message.
//
// Runs its own io_context on the calling thread, so it must not be called from inside another
// event loop (it would block that loop for the whole call).
#pragma once

#include <capnp/message.h>

#include <chrono>
#include <memory>
#include <string>

#include "reckon/protocol/client.h"

namespace reckon::api {

Result<Reply> CallOnce(const std::string& address, ClientOptions options,
                       std::unique_ptr<capnp::MallocMessageBuilder> request,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace reckon::api
