// Server: the network face of `reckon server`. It accepts TCP connections (TLS when
// ServerOptions::tls is set: protocol/tls.h; a peer that speaks the other is told so and
// closed, see docs/PROTOCOL.md), reads framed
// Requests (protocol/frame_stream.h), hands each to the Service in its own coroutine (many
// in flight per connection) and sends each Response when it is ready.
//
// Limits against abuse (docs/SECURITY.md, "Limits against abuse"; every one a field of
// ServerOptions below): at most max_connections connections, at most max_connections_per_peer
// of them from one IP address, shared by the rule of ConnectionSlots (connection_slots.h: a
// newcomer over either takes the slot of a connection still opening, else of an idle one, and
// is refused only when every slot in its scope is busy); at most max_buffered_bytes held for
// all of them together (read buffers, requests being handled, replies not yet written; the
// MemoryBudget); per connection at most max_in_flight requests and max_unread_reply_bytes of
// replies before it stops being read (backpressure), and deadlines for the first request, for
// idleness and for replies left unread. A connection that breaks a limit, or sends a frame that
// breaks the frame limits or does not parse, is closed with a reason: a Response with id 0
// (protocol/close_reason.h) and one warning in the log naming the peer and the limit.
// Nothing else is affected. Audit lines of refused connections (plaintext on a TLS port, a
// failed TLS handshake) are rate-limited per peer (audit_limiter.h).
//
// Threads: runs on the engine's single-threaded executor.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reckon/base/accept_loop.h"
#include "reckon/protocol/frame_stream.h"
#include "reckon/protocol/memory_budget.h"
#include "reckon/api/server/connection_slots.h"
#include "reckon/api/server/audit_limiter.h"
#include "reckon/api/server/service.h"

namespace reckon::api {

// Each limit's flag is that of `reckon server`; ValidateServerOptions (server_limits.h) gives
// the ranges.
struct ServerOptions {
  FrameLimits limits;
  // Connections open at once (--max-connections). Each costs a file descriptor and a few KiB
  // (its read buffer, up to 64 KiB while its frames are small); keep it below `ulimit -n` (a
  // connection closed for a newcomer keeps its descriptor up to a second longer, while its
  // close reason goes out). Over it, a newcomer takes the slot of a connection that has sent
  // no whole frame yet (the oldest), else of one with nothing in flight (the longest idle),
  // which gets the close reason; only when every connection has requests in flight is the
  // newcomer given the close reason instead.
  std::size_t max_connections = 1024;
  // Of those, at most this many from one IP address (--max-connections-per-peer), by the same
  // rule within the peer's own connections: so one address with requests in flight (long polls
  // count) can hold at most this share of the slots. Workers behind one NAT share it.
  std::size_t max_connections_per_peer = 256;
  // Bytes held for all connections together: read buffers, requests being handled, replies not
  // yet written (--max-buffered-mib): about what the server's memory can grow to because of its
  // peers (replies already being prepared may take it a little over). A read buffer that cannot
  // grow within it closes its connection; over it, connections with requests or replies of
  // their own are not read until it drains.
  std::size_t max_buffered_bytes = 256u << 20;
  // Requests read and not yet answered, per connection (--max-in-flight); long polls count. At
  // it, the connection is not read until one is answered. Costs up to this many requests'
  // memory per connection (within max_buffered_bytes).
  std::size_t max_in_flight = 256;
  // Replies queued and not yet written, per connection (--max-unread-reply-kib). Over it, the
  // connection is not read; if its peer then reads less than a quarter of this (at least
  // 64 KiB) in unread_reply_timeout (--unread-reply-timeout-ms), the connection is closed.
  // Replies of requests already read still join the queue: a handler that does not wait
  // answers before the next request is read, so it adds one reply over this; handlers that
  // wait (long polls, journal reads) can add up to max_in_flight replies.
  std::size_t max_unread_reply_bytes = 4u << 20;
  std::chrono::milliseconds unread_reply_timeout{30000};
  // No request in flight and no frame received for this long closes a connection
  // (--idle-timeout-ms). Workers poll all the time, so only forgotten connections meet it.
  std::chrono::milliseconds idle_timeout{300000};
  // From the accept to the first whole frame (--handshake-timeout-ms), the TLS handshake
  // included. A separate limit from idle_timeout.
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds default_timeout{30000};
  std::chrono::milliseconds max_timeout{120000};
  // TLS: nullptr serves plaintext. With a context that verifies peers (--client-ca), every
  // client must present a certificate it trusts.
  std::shared_ptr<boost::asio::ssl::context> tls;
  // --insecure-dev: requests without a token are served, so Listen() refuses any address but
  // loopback (api/server/listen.h).
  bool insecure_dev = false;
};

class Server {
 public:
  // `buffers` (max_buffered_bytes) is owned by the composition root and outlives the executor's
  // handlers: streams and requests still queued on the executor release their charges when it
  // is destroyed, after the Server. `options` must satisfy ValidateServerOptions.
  Server(boost::asio::any_io_executor executor, Service& service, MemoryBudget& buffers,
         ServerOptions options);
  ~Server();

  // Binds and listens on "HOST:PORT" (port 0 picks a free one) if the listener rule allows it
  // (api/server/listen.h; Errc::kInvalidArgument if not). Errc::kUnavailable naming the
  // address if it cannot bind.
  Result<void> Listen(const std::string& address);
  std::uint16_t port() const { return port_; }

  // Accepts until Stop(), backing off while accepts fail for lack of descriptors
  // (base/accept_loop.h). Spawn it on the executor.
  boost::asio::awaitable<void> Serve();
  // Stops accepting and closes every connection.
  void Stop();

  // Ends every connection on which a request presented the withdrawn credential: its worker
  // leaves the task queues at once (its polls end without a task; it no longer counts as
  // connected for its workflow types), then the connection is closed with `withdrawal.reason`
  // as the close reason, so nothing more is read from it or delivered on it.
  void Withdraw(const Withdrawal& withdrawal);
  // The valid credentials (token hashes) requests on the open connections presented, each
  // once.
  std::vector<std::string> OpenCredentials() const;

  // For tests and operators: bytes charged to the budget now, and connections open.
  std::size_t buffered_bytes() const { return buffers_.used(); }
  // Slots held: connections open and sockets still in their handshake, less those closed for
  // a newcomer and still saying why.
  std::size_t connection_count() const;

 private:
  struct Connection;
  struct Shared;  // the slots and the sockets still opening; shared with their coroutines
  // From an accepted socket to a Connection: the connection limit, the first byte, the TLS
  // handshake, then ReadLoop and Watch.
  boost::asio::awaitable<void> Open(boost::asio::ip::tcp::socket socket,
                                    std::chrono::steady_clock::time_point accepted);
  boost::asio::awaitable<void> ReadLoop(std::shared_ptr<Connection> connection);
  boost::asio::awaitable<void> Answer(std::shared_ptr<Connection> connection, Frame frame,
                                      MemoryCharge charge);
  // The connection's watchdog: closes it when a deadline passes (connection_deadlines.h).
  boost::asio::awaitable<void> Watch(std::shared_ptr<Connection> connection);
  // Whether the reader must wait before reading the next request (backpressure).
  bool MustWait(const Connection& connection) const;
  // Logs one warning naming the peer and `limit`, sends `reason` as the close reason, closes.
  void CloseFor(Connection& connection, std::string_view limit, const Error& reason);
  // The same without the warning.
  void Close(Connection& connection, const Error& reason);
  // A newcomer refused for `limit`: the same, before it is served.
  void Refuse(std::shared_ptr<FrameStream> stream, std::string_view limit, const Error& reason);
  // Closes a connection ConnectionSlots chose to make room for a newcomer from `newcomer`.
  void Evict(const ConnectionSlots::Evicted& evicted, const std::string& newcomer);

  boost::asio::any_io_executor executor_;
  Service& service_;
  MemoryBudget& buffers_;
  ServerOptions options_;
  std::shared_ptr<AcceptLoop> accept_;  // owns the acceptor; shared with Serve's coroutine
  std::uint16_t port_ = 0;
  SessionId next_session_ = 1;
  std::map<SessionId, std::weak_ptr<Connection>> connections_;
  std::shared_ptr<Shared> shared_;
  bool stopped_ = false;
  AuditLimiter audit_;  // refused connections' audit lines, per peer (audit_limiter.h)
};

}  // namespace reckon::api
