// Limits against abuse (docs/SECURITY.md, "Limits against abuse"): the check of the limits in
// ServerOptions (api/server/server.h), and the reasons the server gives, in its close-reason
// frame (protocol/close_reason.h) and its log, when it closes a connection for one. Every
// reason names the limit's flag and says what to do.
#pragma once

#include <cstddef>

#include "reckon/api/server/connection_slots.h"
#include "reckon/base/error.h"

namespace reckon::api {

struct ServerOptions;
struct HttpServerOptions;

// Errc::kInvalidArgument naming the first limit out of its range, with the range and why.
Result<void> ValidateServerOptions(const ServerOptions& options);
// The same for the console's port (`--http-...` flags).
Result<void> ValidateHttpServerOptions(const HttpServerOptions& options);

// resource_exhausted: the server already has max_connections connections, all busy.
Error TooManyConnections(const ServerOptions& options);
// resource_exhausted: the peer's address already holds max_connections_per_peer connections,
// all busy.
Error TooManyConnectionsFromPeer(const ServerOptions& options);
// resource_exhausted: this connection, in `phase` (opening or idle), was closed so that a
// newcomer over `limit` could have its slot (connection_slots.h).
Error ConnectionEvicted(const ServerOptions& options, ConnectionSlots::Phase phase,
                        ConnectionSlots::Limit limit);
// resource_exhausted: a read buffer could not grow within max_buffered_bytes; `detail` is the
// stream's error (the sizes).
Error BuffersFull(const ServerOptions& options, const Error& detail);
// invalid_argument: a frame or request the server cannot accept (`detail` names the defect).
Error UnacceptableFrame(const Error& detail);
// deadline_exceeded: no whole frame within handshake_timeout of the accept.
Error HandshakeTimedOut(const ServerOptions& options);
// deadline_exceeded: no request in flight and no frame received for idle_timeout.
Error IdleTimedOut(const ServerOptions& options);
// resource_exhausted: `queued` bytes of replies over max_unread_reply_bytes, not read for
// unread_reply_timeout.
Error RepliesUnread(const ServerOptions& options, std::size_t queued);

}  // namespace reckon::api
