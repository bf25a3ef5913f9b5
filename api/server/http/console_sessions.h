// ConsoleSessions: the browser sessions of the web console (docs/HTTP_API.md,
// "Authentication"). A person logs in with an API token once; the server keeps the token
// here and gives the browser only a random session id (an HttpOnly cookie) and a CSRF token
// (for the page's script to send back in X-CSRF-Token on every state change). The token is
// still checked on every request, so a revoked token ends its sessions at once.
//
// Sessions live in memory: a server restart logs everyone out (the console shows the login
// page again). At most `max_sessions`; the oldest goes first. Each lasts `lifetime` from login.
//
// Threads: not thread-safe; used on the server's event loop only.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace reckon::api {

class ConsoleSessions {
 public:
  using Clock = std::chrono::steady_clock;
  struct Session {
    std::string token;  // the API token the person logged in with; never sent back
    std::string csrf;
    Clock::time_point expires;
  };

  explicit ConsoleSessions(std::chrono::seconds lifetime = std::chrono::hours(8),
                           std::size_t max_sessions = 10000);

  // A new session for `token`: its id (for the cookie) and the session.
  std::pair<std::string, Session> Create(std::string token);
  // The live session of `id`, or nullopt (unknown or expired; an expired one is removed).
  std::optional<Session> Find(const std::string& id);
  void Remove(const std::string& id);

  std::chrono::seconds lifetime() const { return lifetime_; }

 private:
  std::chrono::seconds lifetime_;
  std::size_t max_sessions_;
  std::map<std::string, Session> sessions_;
  std::multimap<Clock::time_point, std::string> by_expiry_;  // for eviction
};

// Constant-time comparison of two secrets (CSRF tokens), so timing does not reveal a prefix.
bool SameSecret(const std::string& a, const std::string& b);

}  // namespace reckon::api
