// What tests of server mode send when they are not a worker: the product's CallOnce
// (protocol/call_once.h), and the same with the token read from a file.
#pragma once

#include <capnp/message.h>

#include <memory>
#include <string>

#include "reckon/protocol/call_once.h"

namespace reckon::testing {

using api::CallOnce;
using api::ClientOptions;
using api::Reply;

// CallOnce with the token read from `token_file` (protocol/credentials.h).
Result<Reply> CallOnceWithTokenFile(const std::string& address, const std::string& token_file,
                                    std::unique_ptr<capnp::MallocMessageBuilder> request);

}  // namespace reckon::testing
