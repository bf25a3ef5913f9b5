// The close reason: the last frame a server sends on a connection it closes for a limit (too
// many connections, the memory budget, a timeout, a frame or request it cannot accept). It is a
// Response whose id is kCloseReasonId (0, which no request may use) and whose result is an
// error naming the limit and what to do, e.g. resource_exhausted "the server has 1024
// connections, its maximum (--max-connections); retry later". docs/PROTOCOL.md, "Closing".
//
// Best effort: the server sends it only if the connection can take it at once, so a peer may
// also see the connection end without one. A client that reads it fails every call in flight,
// and every later call on that connection, with its error as the cause of a lost connection.
#pragma once

#include <cstdint>

#include "reckon/protocol/frame.h"
#include "reckon/base/error.h"

namespace reckon::api {

inline constexpr std::uint64_t kCloseReasonId = 0;

// The close-reason frame carrying `reason`.
Frame EncodeCloseReason(const Error& reason);

}  // namespace reckon::api
