#include "reckon/api/server/server_limits.h"

#include <string>

#include "reckon/api/server/http/http_server_options.h"
#include "reckon/api/server/server.h"

namespace reckon::api {
namespace {

constexpr std::size_t kMiB = 1u << 20;
constexpr std::size_t kKiB = 1u << 10;
constexpr std::chrono::milliseconds kShortestTimeout{10};
constexpr std::chrono::milliseconds kLongestTimeout{86'400'000};  // a day

std::string Ms(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

Result<void> CheckTimeout(std::chrono::milliseconds value, const char* flag, const char* why) {
  if (value >= kShortestTimeout && value <= kLongestTimeout) return Ok();
  return Err(Errc::kInvalidArgument, std::string(flag) + " must be from " +
                                         std::to_string(kShortestTimeout.count()) + " to " +
                                         std::to_string(kLongestTimeout.count()) + " (" + why +
                                         ")");
}

}  // namespace

Result<void> ValidateServerOptions(const ServerOptions& o) {
  if (o.max_connections < 1 || o.max_connections > 1'000'000) {
    return Err(Errc::kInvalidArgument,
               "--max-connections must be from 1 to 1000000 (each connection holds a file "
               "descriptor: keep it below the process's limit, `ulimit -n`)");
  }
  if (o.max_connections_per_peer < 1 || o.max_connections_per_peer > 1'000'000) {
    return Err(Errc::kInvalidArgument,
               "--max-connections-per-peer must be from 1 to 1000000 (the connections one IP "
               "address may hold at once; over --max-connections it is --max-connections)");
  }
  const std::size_t frame_mib = (o.limits.max_message_bytes + kMiB - 1) / kMiB;
  if (o.max_buffered_bytes < o.limits.max_message_bytes || o.max_buffered_bytes > kMiB * kMiB) {
    return Err(Errc::kInvalidArgument,
               "--max-buffered-mib must be from " + std::to_string(frame_mib) +
                   " to 1048576 (1 TiB): a budget smaller than the largest frame (" +
                   std::to_string(o.limits.max_message_bytes) +
                   " bytes) could never receive one");
  }
  if (o.max_in_flight < 1 || o.max_in_flight > 65'536) {
    return Err(Errc::kInvalidArgument,
               "--max-in-flight must be from 1 to 65536 (requests read and not yet answered, "
               "per connection; a worker's long polls count)");
  }
  if (o.max_unread_reply_bytes < kKiB || o.max_unread_reply_bytes > o.max_buffered_bytes) {
    return Err(Errc::kInvalidArgument,
               "--max-unread-reply-kib must be from 1 to " +
                   std::to_string(o.max_buffered_bytes / kKiB) +
                   " (the whole budget, --max-buffered-mib)");
  }
  RECKON_TRY(CheckTimeout(o.idle_timeout, "--idle-timeout-ms",
                          "how long a connection with no request may stay open"));
  RECKON_TRY(CheckTimeout(o.handshake_timeout, "--handshake-timeout-ms",
                          "how long after connecting a peer may take to send its first request"));
  RECKON_TRY(CheckTimeout(o.unread_reply_timeout, "--unread-reply-timeout-ms",
                          "how long replies may wait for a peer that does not read them"));
  return Ok();
}

Result<void> ValidateHttpServerOptions(const HttpServerOptions& o) {
  if (o.max_connections < 1 || o.max_connections > 1'000'000) {
    return Err(Errc::kInvalidArgument,
               "--http-max-connections must be from 1 to 1000000 (each connection holds a file "
               "descriptor: keep it below the process's limit, `ulimit -n`)");
  }
  if (o.max_connections_per_peer < 1 || o.max_connections_per_peer > 1'000'000) {
    return Err(Errc::kInvalidArgument,
               "--http-max-connections-per-peer must be from 1 to 1000000 (the console "
               "connections one IP address may hold at once; over --http-max-connections it is "
               "--http-max-connections)");
  }
  RECKON_TRY(CheckTimeout(o.handshake_timeout, "--http-handshake-timeout-ms",
                          "how long after connecting a peer may take to send its first whole "
                          "request, the TLS handshake included"));
  RECKON_TRY(CheckTimeout(o.idle_timeout, "HTTP idle timeout",
                          "how long a keep-alive connection may wait for its next request"));
  return Ok();
}

Error TooManyConnections(const ServerOptions& o) {
  return Err(Errc::kResourceExhausted,
             "the server has " + std::to_string(o.max_connections) +
                 " connections, its maximum (--max-connections), each with requests in flight; "
                 "retry later");
}

Error TooManyConnectionsFromPeer(const ServerOptions& o) {
  return Err(Errc::kResourceExhausted,
             "this address already has " + std::to_string(o.max_connections_per_peer) +
                 " connections with requests in flight, the most one address may hold "
                 "(--max-connections-per-peer); retry when one has finished, or share "
                 "connections between callers");
}

Error ConnectionEvicted(const ServerOptions& o, ConnectionSlots::Phase phase,
                        ConnectionSlots::Limit limit) {
  const std::string full =
      limit == ConnectionSlots::Limit::kPerPeer
          ? "this address had " + std::to_string(o.max_connections_per_peer) +
                " connections, the most one address may hold (--max-connections-per-peer)"
          : "the server had " + std::to_string(o.max_connections) +
                " connections, its maximum (--max-connections)";
  const std::string state = phase == ConnectionSlots::Phase::kOpening
                                ? "had not sent a whole request yet"
                                : "had no request in flight";
  return Err(Errc::kResourceExhausted,
             full + ", and this connection " + state +
                 ", so a new connection took its slot; connect again to send requests");
}

Error BuffersFull(const ServerOptions& o, const Error& detail) {
  return Err(Errc::kResourceExhausted,
             "the server's buffers for all connections are full (" +
                 std::to_string(o.max_buffered_bytes / kMiB) +
                 " MiB, --max-buffered-mib), so this connection's request could not be received "
                 "(" + detail.message() + "); retry later");
}

Error UnacceptableFrame(const Error& detail) {
  return Err(Errc::kInvalidArgument,
             "the connection sent a frame the server cannot accept: " + detail.message() +
                 "; fix the client (docs/PROTOCOL.md, \"Framing\" and \"Limits\")");
}

Error HandshakeTimedOut(const ServerOptions& o) {
  return Err(Errc::kDeadlineExceeded,
             "no whole request within " + Ms(o.handshake_timeout) +
                 " of connecting (--handshake-timeout-ms); send the first request as soon as "
                 "the connection is open");
}

Error IdleTimedOut(const ServerOptions& o) {
  return Err(Errc::kDeadlineExceeded,
             "the connection was idle for " + Ms(o.idle_timeout) +
                 ", with no request in flight (--idle-timeout-ms); connect again to send "
                 "more requests");
}

Error RepliesUnread(const ServerOptions& o, std::size_t queued) {
  return Err(Errc::kResourceExhausted,
             std::to_string(queued) + " bytes of replies were not read for " +
                 Ms(o.unread_reply_timeout) + ", over this connection's maximum of " +
                 std::to_string(o.max_unread_reply_bytes / kKiB) +
                 " KiB (--max-unread-reply-kib, --unread-reply-timeout-ms); read replies as "
                 "they arrive");
}

}  // namespace reckon::api
