// ConnectionDeadlines: whether a connection has been silent, idle or unread for too long,
// decided from the times and counts it is given (no clock, no I/O), for the watchdog each
// server connection runs. Three limits of ServerOptions (api/server/server.h):
//
//   handshake       no whole frame within handshake_timeout of the accept. (When TLS comes, its
//                   handshake happens inside this time: the clock starts at the accept.)
//   idle            no request in flight and no frame received for idle_timeout.
//   unread replies  more than max_unread_reply_bytes of replies queued for unread_reply_timeout
//                   while the peer read less than ReadProgressBytes() of them: a peer that reads
//                   that much restarts the clock; one that trickles, or whose kernel takes a
//                   little more now and then without the peer reading, does not.
//
// Check() says which limit is broken (its reason, from api/server/server_limits.h) or when to
// check again. Events move deadlines later, so a watchdog that sleeps until then misses nothing,
// with two exceptions for which the server wakes its watchdog: the first frame (the idle
// deadline may come before the handshake deadline it replaces) and a queue of replies that
// grows past the bound.
//
// Threads: a plain value, used on the server's executor.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "reckon/base/error.h"

namespace reckon::api {

struct ServerOptions;

class ConnectionDeadlines {
 public:
  using Clock = std::chrono::steady_clock;
  // What the peer must read per unread_reply_timeout to count as reading: a quarter of
  // max_unread_reply_bytes, at least 64 KiB (1 MiB by default). Less is not progress: a peer's
  // kernel was seen to accept ~100 KB per 30 s into a full receive buffer that nobody read.
  static std::size_t ReadProgressBytes(const ServerOptions& options);

  // `options` must outlive this object.
  ConnectionDeadlines(const ServerOptions& options, Clock::time_point accepted);

  // A whole frame arrived. True for the first: check again now.
  bool FrameReceived(Clock::time_point now);
  // The last request in flight was answered.
  void RequestsDone(Clock::time_point now) { last_activity_ = now; }

  struct Connection {
    std::size_t in_flight = 0;
    std::size_t queued_bytes = 0;   // replies not yet written
    std::uint64_t bytes_sent = 0;   // replies written so far
  };
  struct Verdict {
    std::optional<Error> broken;  // the reason to close, if a limit is broken
    const char* limit = "";       // its flag's name, for the log
    Clock::time_point check_again;
  };
  Verdict Check(Clock::time_point now, const Connection& connection);

 private:
  const ServerOptions& options_;
  Clock::time_point accepted_;
  bool framed_ = false;
  Clock::time_point last_activity_;
  // While replies are over the bound: since when, and bytes_sent then.
  std::optional<Clock::time_point> unread_since_;
  std::uint64_t unread_sent_ = 0;
};

}  // namespace reckon::api
