// CallOnce: one request to a `reckon server` on a fresh connection, synchronously: what tests of
// server mode send when they are not a worker. Connects with `options` (the token of the role
// the request needs), sends `request`, waits up to `timeout` for its reply, closes.
//
// Runs its own io_context on the calling thread; not for use inside another event loop.
#pragma once

#include <capnp/message.h>

#include <chrono>
#include <memory>
#include <string>

#include "reckon/api/protocol/client.h"

namespace reckon::testing {

using api::ClientOptions;
using api::Reply;

Result<Reply> CallOnce(const std::string& address, ClientOptions options,
                       std::unique_ptr<capnp::MallocMessageBuilder> request,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));

// CallOnce with the token read from `token_file` (api/protocol/credentials.h).
Result<Reply> CallOnceWithTokenFile(const std::string& address, const std::string& token_file,
                                    std::unique_ptr<capnp::MallocMessageBuilder> request);

}  // namespace reckon::testing
