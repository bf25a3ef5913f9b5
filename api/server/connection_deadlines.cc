#include "reckon/api/server/connection_deadlines.h"

#include <algorithm>
#include <utility>

#include "reckon/api/server/server.h"
#include "reckon/api/server/server_limits.h"

namespace reckon::api {

std::size_t ConnectionDeadlines::ReadProgressBytes(const ServerOptions& options) {
  return std::max<std::size_t>(64 * 1024, options.max_unread_reply_bytes / 4);
}

ConnectionDeadlines::ConnectionDeadlines(const ServerOptions& options, Clock::time_point accepted)
    : options_(options), accepted_(accepted), last_activity_(accepted) {}

bool ConnectionDeadlines::FrameReceived(Clock::time_point now) {
  last_activity_ = now;
  return !std::exchange(framed_, true);
}

ConnectionDeadlines::Verdict ConnectionDeadlines::Check(Clock::time_point now,
                                                        const Connection& c) {
  Verdict verdict;
  if (c.queued_bytes > options_.max_unread_reply_bytes) {
    if (!unread_since_ || c.bytes_sent >= unread_sent_ + ReadProgressBytes(options_)) {
      unread_since_ = now;  // over the bound from now, or the peer read: the clock (re)starts
      unread_sent_ = c.bytes_sent;
    }
    if (now >= *unread_since_ + options_.unread_reply_timeout) {
      verdict.broken = RepliesUnread(options_, c.queued_bytes);
      verdict.limit = "unread-reply-timeout-ms";
      return verdict;
    }
    verdict.check_again = *unread_since_ + options_.unread_reply_timeout;
  } else {
    unread_since_.reset();
    verdict.check_again = Clock::time_point::max();
  }
  Clock::time_point deadline;
  if (!framed_) {
    deadline = accepted_ + options_.handshake_timeout;
    if (now >= deadline) {
      verdict.broken = HandshakeTimedOut(options_);
      verdict.limit = "handshake-timeout-ms";
    }
  } else if (c.in_flight == 0) {
    deadline = last_activity_ + options_.idle_timeout;
    if (now >= deadline) {
      verdict.broken = IdleTimedOut(options_);
      verdict.limit = "idle-timeout-ms";
    }
  } else {
    deadline = now + options_.idle_timeout;  // busy: look again later
  }
  verdict.check_again = std::min(verdict.check_again, deadline);
  return verdict;
}

}  // namespace reckon::api
